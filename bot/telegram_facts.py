"""What the bot relies on of Telegram's, in one place, each with where it is said.

- Limits the bot keeps to, and enforces: a text Telegram would refuse for its length is cut here
  (:func:`popup_text`, :func:`message_text`), never sent to be refused.
- What kind a chat is (:func:`chat_kind` from ``Chat.type``; :func:`kind_of_id` where only an id
  is known).
- How a request's parameters are sent (:data:`JSON_BODY`).
- What a failed request means (:func:`classify`): by PTB's exception type (which follows the HTTP
  code and the response's ``parameters``) and, where Telegram tells two failures apart by its
  description only, by that description: here and nowhere else.
"""

from __future__ import annotations

import enum
import re
import warnings
from datetime import timedelta

from telegram import Chat
from telegram.constants import ChatType
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.warnings import PTBDeprecationWarning

# -- limits ----------------------------------------------------------------------------------------
# https://core.telegram.org/bots/api#inlinekeyboardbutton: callback_data, "1-64 bytes".
CALLBACK_DATA_BYTES = 64
# https://core.telegram.org/bots/api#answercallbackquery: text, "0-200 characters".
POPUP_CHARACTERS = 200
# https://core.telegram.org/bots/api#sendmessage: text, "1-4096 characters after entities parsing"
# (counted in UTF-16 code units, https://core.telegram.org/api/entities#entity-length).
MESSAGE_CHARACTERS = 4096
# https://core.telegram.org/bots/api#answercallbackquery ("the answer must be sent ... otherwise the
# client shows a progress bar"); Telegram refuses an answer to a query older than ~10-15 s
# ("query is too old and response timeout expired").
ANSWER_WITHIN = 10.0
ELLIPSIS = "…"  # what ends a text cut to fit
WORD_SLACK = 0.2  # a cut goes back to a space when one is within this share of the limit


# -- requests ---------------------------------------------------------------------------------------
# https://core.telegram.org/bots/api#making-requests: parameters may be passed as application/json,
# "except for uploading files" (those as multipart/form-data).
JSON_BODY = {"Content-Type": "application/json"}


def utf16_length(text: str) -> int:
    """A text's length as Telegram counts it (UTF-16 code units: an emoji is two)."""
    return len(text.encode("utf-16-le")) // 2


def popup_text(text: str) -> str:
    """``text`` as an answerCallbackQuery may carry it: a longer one is cut at a word, with "…"
    (Telegram refuses the whole answer otherwise, and the press shows nothing). Counted in UTF-16
    code units, as Telegram counts message text: never more than the characters it allows."""
    if utf16_length(text) <= POPUP_CHARACTERS:
        return text
    tokens = list(text)
    return "".join(tokens[: _cut(tokens, POPUP_CHARACTERS - utf16_length(ELLIPSIS))]) + ELLIPSIS


def message_text(text: str, *, html: bool = True) -> str:
    """``text`` as sendMessage and editMessageText take it: a longer one is cut at a word, with "…".

    Telegram counts the text after entities parsing (tags do not count, ``&amp;`` is one
    character); here the HTML itself is counted, so a cut text fits whatever the markup. An ``html``
    text is never cut inside a tag or an entity, and the tags open at the cut are closed after it
    (else Telegram refuses it: "can't parse entities")."""
    if utf16_length(text) <= MESSAGE_CHARACTERS:
        return text
    tokens = _HTML_TOKEN.findall(text) if html else list(text)
    room = MESSAGE_CHARACTERS - utf16_length(ELLIPSIS)
    while True:
        kept = tokens[: _cut(tokens, room)]
        closing = "".join(f"</{tag}>" for tag in reversed(_open_tags(kept))) if html else ""
        cut = "".join(kept) + ELLIPSIS + closing
        if utf16_length(cut) <= MESSAGE_CHARACTERS:
            return cut
        room -= utf16_length(cut) - MESSAGE_CHARACTERS  # make room for the closing tags


# A tag, an entity, or one character: the pieces an HTML text may be cut between.
_HTML_TOKEN = re.compile(r"<[^>]*>|&[#\w]+;|.", re.DOTALL)
_TAG_NAME = re.compile(r"<\s*(/?)\s*([a-zA-Z-]+)")


def _cut(tokens: list[str], room: int) -> int:
    """How many of ``tokens`` to keep within ``room`` UTF-16 code units: back to the last space
    when there is one near the end (text without spaces, as Chinese is, is cut where it fills)."""
    used, fit, space = 0, 0, None
    for index, token in enumerate(tokens):
        used += utf16_length(token)
        if used > room:
            break
        fit = index + 1
        if token.isspace():
            space = index
    if space is not None and fit - space <= room * WORD_SLACK:
        return space
    return fit


def _open_tags(tokens: list[str]) -> list[str]:
    """The tags still open after ``tokens``, outermost first."""
    opened: list[str] = []
    for token in tokens:
        found = _TAG_NAME.match(token) if token.startswith("<") else None
        if found is None:
            continue
        closing, tag = found.group(1), found.group(2).lower()
        if not closing:
            opened.append(tag)
        elif tag in opened:
            del opened[len(opened) - 1 - opened[::-1].index(tag) :]
    return opened


# -- chats -----------------------------------------------------------------------------------------
class ChatKind(enum.Enum):
    """https://core.telegram.org/bots/api#chat: ``type``, "private", "group", "supergroup" or
    "channel"."""

    PRIVATE = "private"
    GROUP = "group"
    SUPERGROUP = "supergroup"
    CHANNEL = "channel"

    @property
    def is_group(self) -> bool:
        """Where a table may open: a group, basic or super."""
        return self in (ChatKind.GROUP, ChatKind.SUPERGROUP)


def chat_kind(chat: Chat) -> ChatKind:
    """What kind ``chat`` is, as Telegram says (its ``type``)."""
    if chat.type == ChatType.SENDER:  # (inline queries only: "sender" is a private chat)
        return ChatKind.PRIVATE
    return ChatKind(chat.type)


# https://core.telegram.org/api/bots/ids: a Bot API chat id is a user's id (positive), minus a
# basic group's id (-1 to -999999999999), or -(10^12 + a channel's id), which supergroups share with
# channels; the ranges below those (secret chats, channels' direct messages) are no chat of a bot's.
_LAST_BASIC_GROUP_ID = -999_999_999_999


def kind_of_id(chat_id: int) -> ChatKind:
    """What kind a chat is, where only its id is known (a queued send, a saved table): Telegram
    gives each kind of chat its own range of ids (see above). Supergroups and channels share one:
    the bot sits in no channel, so that range reads as a supergroup."""
    if chat_id > 0:
        return ChatKind.PRIVATE
    return ChatKind.GROUP if chat_id >= _LAST_BASIC_GROUP_ID else ChatKind.SUPERGROUP


def is_private_id(chat_id: int) -> bool:
    """Whether ``chat_id`` is someone's private chat with the bot (see :func:`kind_of_id`)."""
    return kind_of_id(chat_id) is ChatKind.PRIVATE


# -- message ids -----------------------------------------------------------------------------------
def ids_between(after: int | None, before: int | None, most: int) -> list[int]:
    """The ids a message sent to a chat after message ``after`` and before message ``before`` may
    have, at most ``most`` of them: down from ``before`` when it is known (the message sent again:
    what was cut off went just before it), else up from ``after``; none when neither is.

    https://core.telegram.org/bots/api#message: ``message_id``, "Unique message identifier inside
    this chat". A later message of a chat has a greater id, a person's and the bot's alike: the
    order a chat's messages are sorted by (https://github.com/tdlib/td/issues/1378). That ids are
    dense is said nowhere, hence ``most``: the bot relies on this only to look, after a crash, for a
    message it sent whose id never reached it (``bot.send.orphans``)."""
    if before is not None:
        ids = range(before - 1, after if after is not None else 0, -1)
    elif after is not None:
        ids = range(after + 1, after + 1 + most)
    else:
        return []
    return list(ids[:most])


# -- failures --------------------------------------------------------------------------------------
class Failure(enum.Enum):
    """What a failed Bot API request means for what the bot does next.

    https://core.telegram.org/bots/api#making-requests: a failed request answers ``ok: false`` with
    an ``error_code`` and a human-readable ``description``, and some with ``parameters``
    (https://core.telegram.org/bots/api#responseparameters: ``migrate_to_chat_id``,
    ``retry_after``). PTB raises one exception type per HTTP code and parameter; the descriptions
    are those of Telegram's Bot API server (https://github.com/tdlib/telegram-bot-api,
    ``Client.cpp``, which words the MTProto errors of https://core.telegram.org/api/errors).
    """

    RATE_LIMITED = "rate limited"  # 429: wait its retry_after, then the same request may go
    PASSING = "passing"  # a timeout, a dropped connection, a 5xx: the same request may go again soon
    MIGRATED = "migrated"  # the group became a supergroup: the chat has a new id
    BLOCKED = "blocked"  # 403: a person blocked the bot or never started it; a group removed it
    CHAT_GONE = "chat gone"  # 400 "chat not found": Telegram knows no such chat for the bot
    MESSAGE_GONE = "message gone"  # 400: the message to edit or delete is not there (deleted)
    UNEDITABLE = "uneditable"  # 400: the message is there, but the bot may not edit or delete it
    NOT_MODIFIED = "not modified"  # 400: an edit to what the message shows already: nothing to do
    REPLIED_GONE = "replied gone"  # 400: the message a send answers was deleted
    QUERY_EXPIRED = "query expired"  # 400: a press too old to answer (or answered already)
    REFUSED = "refused"  # anything else Telegram turns down: the same request would be again


# Telegram's descriptions (lower case, "Bad Request: " left out by PTB) for the 400s that one code
# does not tell apart. The first match wins: "message to be replied not found" is no MESSAGE_GONE.
_DESCRIPTIONS: tuple[tuple[str, Failure], ...] = (
    ("message is not modified", Failure.NOT_MODIFIED),  # MESSAGE_NOT_MODIFIED
    ("message to be replied not found", Failure.REPLIED_GONE),  # REPLY_MESSAGE_ID_INVALID
    ("query is too old", Failure.QUERY_EXPIRED),  # QUERY_ID_INVALID
    ("query id is invalid", Failure.QUERY_EXPIRED),
    ("message to edit not found", Failure.MESSAGE_GONE),  # MESSAGE_ID_INVALID
    ("message to delete not found", Failure.MESSAGE_GONE),
    ("message_id_invalid", Failure.MESSAGE_GONE),
    ("message can't be edited", Failure.UNEDITABLE),  # MESSAGE_AUTHOR_REQUIRED, too old
    ("message can't be deleted", Failure.UNEDITABLE),  # MESSAGE_DELETE_FORBIDDEN
    ("chat not found", Failure.CHAT_GONE),  # PEER_ID_INVALID
)


def classify(error: TelegramError) -> Failure:
    """What ``error`` (raised by a Bot API call) means: see :class:`Failure`."""
    if isinstance(error, RetryAfter):
        return Failure.RATE_LIMITED
    if isinstance(error, ChatMigrated):
        return Failure.MIGRATED
    if isinstance(error, Forbidden):
        return Failure.BLOCKED
    if isinstance(error, BadRequest):  # (before NetworkError: PTB makes a 400 one of those)
        description = error.message.lower()
        return next((failure for text, failure in _DESCRIPTIONS if text in description), Failure.REFUSED)
    if isinstance(error, NetworkError):  # a timeout, a 5xx, a connection that failed
        return Failure.PASSING
    return Failure.REFUSED  # an invalid token (401, 404), a conflict (409), an unreadable answer


def retry_seconds(error: RetryAfter) -> float:
    """A 429's wait in seconds, whether PTB gives it as a number or (from v23) a timedelta."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = error.retry_after
    return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)
