"""An in-memory Telegram: people, groups, DMs, messages and their edits, popups, chat admins.

It answers the Bot API methods the bot calls with the real API's JSON shapes and error shapes, and
makes the updates people cause (a command, a button press, leaving a group). The in-process
request object (``faketg.request``) and, later, an HTTP server are its two front doors.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import ClassVar

from faketg.limits import FloodLimits, TelegramRefusal

JSON = dict[str, object]

BOT_ID = 7_000_000_001
BOT_USERNAME = "paiju_test_bot"
TEXT_LIMIT = 4096
POPUP_LIMIT = 200
CALLBACK_DATA_LIMIT = 64
GROUP_METHODS = frozenset({"sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage"})
# The users Telegram puts in ``from`` of messages sent on behalf of a chat (``sender_chat`` says which)
CHANNEL_BOT = {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"}
GROUP_ANONYMOUS_BOT = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}
SHARED_USERS = {int(str(user["id"])): user for user in (CHANNEL_BOT, GROUP_ANONYMOUS_BOT)}
# A mention in a message: a link to a user (HTML parse mode), or an @username in the text
USER_LINK = re.compile(r"""<a\s+href=["']tg://user\?id=(\d+)["']""")
USERNAME = re.compile(r"(?<![\w@])@(\w{5,32})")
TAG = re.compile(r"<[^>]*>")


class ApiError(Exception):
    """A Bot API error: the HTTP status and the ``description`` Telegram sends."""

    def __init__(self, code: int, description: str, parameters: JSON | None = None) -> None:
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


@dataclass
class Person:
    id: int
    first_name: str
    username: str | None = None
    language_code: str | None = "zh-hans"
    started_bot: bool = False  # has opened a DM with the bot (else DMs fail with 403)

    def to_json(self) -> JSON:
        data: JSON = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.username:
            data["username"] = self.username
        if self.language_code:
            data["language_code"] = self.language_code
        return data


@dataclass
class Chat:
    id: int
    type: str  # "private", "group", "supergroup", "channel"
    title: str | None = None
    members: set[int] = field(default_factory=set)
    admins: set[int] = field(default_factory=set)
    creator: int | None = None
    bot_is_member: bool = True
    migrated_to: int | None = None  # a group upgraded to a supergroup

    def to_json(self, people: dict[int, Person]) -> JSON:
        if self.type == "private":
            return {"id": self.id, "type": "private", "first_name": people[self.id].first_name}
        return {"id": self.id, "type": self.type, "title": self.title or ""}


@dataclass
class Message:
    chat_id: int
    message_id: int
    sender: int
    text: str
    date: int
    reply_markup: JSON | None = None
    edits: int = 0
    deleted: bool = False
    sender_chat: int | None = None  # sent on behalf of a chat: a channel, or the group (anonymous admin)
    edit_date: int | None = None  # when it was last edited
    reply_to: int | None = None  # the message it answers, in the same chat
    notified: frozenset[int] = frozenset()  # the people Telegram notified when it came (edits never do)

    def edited(self, at: float) -> None:
        self.edits += 1
        self.edit_date = int(at)

    @property
    def buttons(self) -> list[JSON]:
        if not self.reply_markup:
            return []
        rows = self.reply_markup.get("inline_keyboard", [])
        assert isinstance(rows, list)
        return [button for row in rows for button in row]


@dataclass
class Popup:
    text: str
    show_alert: bool


@dataclass
class Request:
    method: str
    params: JSON
    at: float
    chat_id: int | None
    error: int | str | None = None  # the HTTP status of an error, or the fault injected


class _MarkupChecker(HTMLParser):
    """Telegram's HTML parse mode: only a few tags, properly nested; a stray ``<`` or ``&`` fails."""

    ALLOWED: ClassVar[set[str]] = {
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "a",
        "code",
        "pre",
        "tg-spoiler",
        "blockquote",
        "span",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.ALLOWED:
            raise ApiError(400, f'Bad Request: can\'t parse entities: unsupported start tag "{tag}"')
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            raise ApiError(400, f'Bad Request: can\'t parse entities: unmatched end tag "{tag}"')

    def handle_data(self, data: str) -> None:
        if "<" in data or "&" in data:
            raise ApiError(400, "Bad Request: can't parse entities: unescaped < or &")

    def handle_entityref(self, name: str) -> None:
        if name not in ("lt", "gt", "amp", "quot"):
            raise ApiError(400, f'Bad Request: can\'t parse entities: unknown entity "{name}"')


def check_html(text: str) -> None:
    checker = _MarkupChecker()
    checker.feed(text)
    checker.close()
    if checker.stack or checker.rawdata:
        raise ApiError(400, "Bad Request: can't parse entities: unclosed tag")


class World:
    """The state of the fake Telegram, and the Bot API over it."""

    def __init__(self, clock: Callable[[], float] = time.time, limits: FloodLimits | None = None) -> None:
        self.clock = clock
        self.limits = limits  # Telegram's rate limits, enforced when set (``faketg.limits``)
        self.pressed_at: dict[str, float] = {}  # callback query id -> when it was pressed
        self.people: dict[int, Person] = {}
        self.chats: dict[int, Chat] = {}
        self.messages: dict[tuple[int, int], Message] = {}
        self.popups: dict[int, list[Popup]] = {}
        self.open_queries: dict[str, int] = {}  # callback query id -> the person who pressed
        self.requests: list[Request] = []
        self.commands: dict[str, list[JSON]] = {}
        self.updates: list[JSON] = []
        # Telegram's update ids go on growing: a new world (the sandbox started again on its database,
        # a test's second emulator) must not reuse one a bot has already taken and remembers.
        self._update_ids = itertools.count(time.time_ns() // 1000)
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._query_ids = itertools.count(1)
        self.bot = {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "Paiju",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    # -- the cast -----------------------------------------------------------------------------------
    def add_person(
        self,
        person_id: int,
        name: str,
        *,
        username: str | None = None,
        language: str | None = "zh-hans",
        started: bool = True,
    ) -> Person:
        person = Person(person_id, name, username, language, started)
        self.people[person_id] = person
        self.chats[person_id] = Chat(person_id, "private")
        return person

    def add_group(
        self,
        chat_id: int,
        title: str,
        members: list[int],
        *,
        admins: list[int] = (),
        kind: str = "supergroup",
    ) -> Chat:
        chat = Chat(chat_id, kind, title, set(members), set(admins), admins[0] if admins else None)
        self.chats[chat_id] = chat
        return chat

    def add_channel(self, chat_id: int, title: str) -> Chat:
        """A channel; its admins can write in groups as the channel (``post_as``)."""
        chat = Chat(chat_id, "channel", title)
        self.chats[chat_id] = chat
        return chat

    def _next_message_id(self, chat_id: int) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def _notified(self, message: Message, markup: bool, silent: bool = False) -> frozenset[int]:
        """Whom a new message notifies: in a DM with the bot, its person (when the bot writes); in
        a group, whoever it mentions (a link to them with ``markup``, an @username) or answers."""
        if silent:
            return frozenset()
        chat = self.chats[message.chat_id]
        if chat.type == "private":
            return frozenset({chat.id}) if message.sender == BOT_ID else frozenset()
        text = html.unescape(TAG.sub("", message.text)) if markup else message.text
        usernames = {p.username.lower(): p.id for p in self.people.values() if p.username}
        found = {usernames.get(name.lower()) for name in USERNAME.findall(text)}
        if markup:
            found |= {int(person) for person in USER_LINK.findall(message.text)}
        replied = self.messages.get((message.chat_id, message.reply_to or 0))
        if replied is not None:
            found.add(replied.sender)
        return frozenset(p for p in found if p in self.people and p != message.sender)

    # -- what people do: each returns the update Telegram would deliver -----------------------------
    def post(self, sender: int, chat_id: int, text: str) -> JSON:
        """``sender`` writes ``text`` in a chat (a group, or their DM with the bot)."""
        if chat_id == sender:
            self.people[sender].started_bot = True
        message = Message(chat_id, self._next_message_id(chat_id), sender, text, int(self.clock()))
        return self._update("message", self._said(message))

    def post_as(self, chat_id: int, as_chat: int, text: str) -> JSON:
        """Someone writes ``text`` in a group on behalf of a chat: as the channel ``as_chat``, or as
        the group itself (``as_chat == chat_id``: an anonymous admin). Telegram then sends one
        shared user in ``from`` (Channel_Bot, GroupAnonymousBot) and the chat in ``sender_chat``."""
        user = GROUP_ANONYMOUS_BOT if as_chat == chat_id else CHANNEL_BOT
        sender = int(str(user["id"]))
        message = Message(chat_id, self._next_message_id(chat_id), sender, text, int(self.clock()))
        message.sender_chat = as_chat
        return self._update("message", self._said(message))

    def edit(self, person: int, chat_id: int, message_id: int, text: str) -> JSON:
        """``person`` edits a message they wrote earlier to say ``text``: an ``edited_message``."""
        message = self.messages[(chat_id, message_id)]
        assert message.sender == person, "people edit only their own messages"
        message.text = text
        message.edited(self.clock())
        return self._update("edited_message", self._as_written(message))

    def _said(self, message: Message) -> JSON:
        """A message a person wrote, kept, as its update carries it."""
        message.notified = self._notified(message, markup=False)
        self.messages[(message.chat_id, message.message_id)] = message
        return self._as_written(message)

    def _as_written(self, message: Message) -> JSON:
        """A person's message as an update carries it (a command marked as one)."""
        data = self._message_json(message)
        if message.text.startswith("/"):
            data["entities"] = [{"type": "bot_command", "offset": 0, "length": len(message.text.split()[0])}]
        return data

    def press(self, person: int, chat_id: int, message_id: int, data: str) -> JSON:
        """``person`` presses the button with callback ``data`` under a message."""
        query_id = str(next(self._query_ids))
        self.open_queries[query_id] = person
        self.pressed_at[query_id] = self.clock()
        message = self.messages[(chat_id, message_id)]
        query = {
            "id": query_id,
            "from": self.people[person].to_json(),
            "chat_instance": str(chat_id),
            "data": data,
            "message": self._message_json(message),
        }
        return self._update("callback_query", query)

    def leave_group(self, person: int, chat_id: int) -> JSON:
        self.chats[chat_id].members.discard(person)
        message = Message(chat_id, self._next_message_id(chat_id), person, "", int(self.clock()))
        data = self._message_json(message)
        del data["text"]
        data["left_chat_member"] = self.people[person].to_json()
        return self._update("message", data)

    def remove_bot(self, chat_id: int, by: int) -> JSON:
        """``by`` removes the bot from a group: from now on the bot's requests there get 403."""
        chat = self.chats[chat_id]
        chat.bot_is_member = False
        change = {
            "chat": chat.to_json(self.people),
            "from": self.people[by].to_json(),
            "date": int(self.clock()),
            "old_chat_member": {"status": "member", "user": self.bot},
            "new_chat_member": {"status": "left", "user": self.bot},
        }
        return self._update("my_chat_member", change)

    def upgrade_group(self, chat_id: int, new_id: int) -> list[JSON]:
        """A group becomes a supergroup with a new id, as Telegram does it: the old chat answers 400
        with ``migrate_to_chat_id``; two service messages tell the bot."""
        old = self.chats[chat_id]
        old.migrated_to = new_id
        self.chats[new_id] = Chat(
            new_id, "supergroup", old.title, set(old.members), set(old.admins), old.creator
        )
        someone = old.creator or next(iter(old.members))
        updates = []
        for chat, field_name, value in (
            (chat_id, "migrate_to_chat_id", new_id),
            (new_id, "migrate_from_chat_id", chat_id),
        ):
            message = Message(chat, self._next_message_id(chat), someone, "", int(self.clock()))
            data = self._message_json(message)
            del data["text"]
            data[field_name] = value
            updates.append(self._update("message", data))
        return updates

    def _update(self, kind: str, payload: JSON) -> JSON:
        update = {"update_id": next(self._update_ids), kind: payload}
        self.updates.append(update)
        return update

    def _message_json(self, message: Message, replies: bool = True) -> JSON:
        """The Bot API's ``Message``; the one it answers is in it, one level deep, as Telegram does."""
        if message.sender == BOT_ID:
            sender = self.bot
        elif message.sender in SHARED_USERS:
            sender = SHARED_USERS[message.sender]
        else:
            sender = self.people[message.sender].to_json()
        data: JSON = {
            "message_id": message.message_id,
            "date": message.date,
            "chat": self.chats[message.chat_id].to_json(self.people),
            "from": sender,
            "text": message.text,
        }
        if message.sender_chat is not None:
            data["sender_chat"] = self.chats[message.sender_chat].to_json(self.people)
        if message.edit_date is not None:
            data["edit_date"] = message.edit_date
        replied = self.messages.get((message.chat_id, message.reply_to or 0))
        if replies and replied is not None and not replied.deleted:
            data["reply_to_message"] = self._message_json(replied, replies=False)
        if message.reply_markup:
            data["reply_markup"] = message.reply_markup
        return data

    # -- what people see ----------------------------------------------------------------------------
    def chat_messages(self, chat_id: int) -> list[Message]:
        found = [m for (c, _), m in self.messages.items() if c == chat_id and not m.deleted]
        return sorted(found, key=lambda m: m.message_id)

    def bot_messages(self, chat_id: int) -> list[Message]:
        return [m for m in self.chat_messages(chat_id) if m.sender == BOT_ID]

    # -- the Bot API --------------------------------------------------------------------------------
    def record(self, method: str, params: JSON, error: int | str | None = None) -> Request:
        chat_id = params.get("chat_id")
        record = Request(
            method, params, self.clock(), int(str(chat_id)) if chat_id is not None else None, error
        )
        self.requests.append(record)
        return record

    def last_request_at(self, exclude: str = "") -> float:
        return next((r.at for r in reversed(self.requests) if r.method != exclude), 0.0)

    def group_peaks(self, window: float = 60.0) -> dict[int, int]:
        """For each group, the most bot requests to it in any ``window`` seconds (Telegram allows 20
        a minute); button answers are not requests to a group."""
        peaks: dict[int, int] = {}
        times: dict[int, list[float]] = {}
        for request in self.requests:
            chat = self.chats.get(request.chat_id) if request.chat_id is not None else None
            if chat is None or chat.type == "private" or request.method not in GROUP_METHODS:
                continue
            seen = times.setdefault(chat.id, [])
            seen.append(request.at)
            while seen[0] <= request.at - window:
                seen.pop(0)
            peaks[chat.id] = max(peaks.get(chat.id, 0), len(seen))
        return peaks

    def flagged_groups(self, limit: int = 20) -> dict[int, int]:
        """The groups that saw more than ``limit`` bot requests in some 60 s, with their peak."""
        return {chat: peak for chat, peak in self.group_peaks().items() if peak > limit}

    def call(self, method: str, params: JSON) -> object:
        """Answer one Bot API call: the ``result`` on success, ``ApiError`` otherwise."""
        record = self.record(method, params)
        handler = getattr(self, "api_" + method, None)
        if handler is None:
            record.error = 404
            raise ApiError(404, "Not Found: method not found")
        try:
            if self.limits is not None:
                self._within_limits(method, params, record)
            return handler(params)
        except ApiError as error:
            record.error = error.code
            raise

    def _within_limits(self, method: str, params: JSON, record: Request) -> None:
        """Telegram's rate limits (``self.limits``): ``ApiError`` 429 when over a budget, 400 for a
        callback query answered too long after its press."""
        assert self.limits is not None
        try:
            if method == "answerCallbackQuery":
                query_id = str(params.get("callback_query_id"))
                try:
                    self.limits.check_answer(self.pressed_at.get(query_id), record.at)
                except TelegramRefusal:
                    self.open_queries.pop(query_id, None)  # it can never be answered now
                    raise
                return
            chat = self.chats.get(record.chat_id) if record.chat_id is not None else None
            if chat is not None:
                self.limits.check(method, chat.id, chat.type == "private", record.at)
        except TelegramRefusal as refused:
            raise ApiError(refused.code, refused.description, refused.parameters) from None

    def api_getMe(self, params: JSON) -> JSON:
        return self.bot

    def api_deleteWebhook(self, params: JSON) -> bool:
        return True

    def api_setMyCommands(self, params: JSON) -> bool:
        commands = params.get("commands", [])
        if isinstance(commands, str):
            commands = json.loads(commands)
        self.commands[str(params.get("language_code") or "")] = list(commands)
        return True

    def api_getUpdates(self, params: JSON) -> list[JSON]:
        offset = int(params.get("offset") or 0)
        self.updates = [u for u in self.updates if int(u["update_id"]) >= offset]
        limit = int(params.get("limit") or 100)
        return self.updates[:limit]

    def _target_chat(self, params: JSON) -> Chat:
        chat = self.chats.get(int(params["chat_id"]))
        if chat is None:
            raise ApiError(400, "Bad Request: chat not found")
        if chat.type == "private" and not self.people[chat.id].started_bot:
            raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        if chat.migrated_to is not None:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to},
            )
        if chat.type != "private" and not chat.bot_is_member:
            raise ApiError(403, "Forbidden: bot was kicked from the supergroup chat")
        return chat

    def _check_text(self, params: JSON) -> str:
        text = str(params.get("text", ""))
        if not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if len(text) > TEXT_LIMIT:
            raise ApiError(400, "Bad Request: message is too long")
        if params.get("parse_mode") == "HTML":
            check_html(text)
        return text

    def _check_markup(self, params: JSON) -> JSON | None:
        markup = params.get("reply_markup")
        if markup is None:
            return None
        if isinstance(markup, str):
            markup = json.loads(markup)
        assert isinstance(markup, dict)
        for row in markup.get("inline_keyboard", []):
            for button in row:
                data = button.get("callback_data")
                if data is not None and len(str(data).encode()) > CALLBACK_DATA_LIMIT:
                    raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
        return markup

    def api_sendMessage(self, params: JSON) -> JSON:
        chat = self._target_chat(params)
        text, markup = self._check_text(params), self._check_markup(params)
        message = Message(chat.id, self._next_message_id(chat.id), BOT_ID, text, int(self.clock()), markup)
        message.reply_to = self._replied(chat.id, params)
        silent = params.get("disable_notification") in (True, "true", "True")
        message.notified = self._notified(message, params.get("parse_mode") == "HTML", silent)
        self.messages[(chat.id, message.message_id)] = message
        return self._message_json(message)

    def _replied(self, chat_id: int, params: JSON) -> int | None:
        """The message a send answers (``reply_parameters`` or the older ``reply_to_message_id``);
        400 when it is gone, unless the send allows going without it."""
        reply = params.get("reply_parameters")
        if isinstance(reply, str):
            reply = json.loads(reply)
        if not isinstance(reply, dict):
            reply = {
                "message_id": params.get("reply_to_message_id"),
                "allow_sending_without_reply": params.get("allow_sending_without_reply"),
            }
        if reply.get("message_id") is None:
            return None
        message_id = int(str(reply["message_id"]))
        replied = self.messages.get((chat_id, message_id))
        if replied is not None and not replied.deleted:
            return message_id
        if reply.get("allow_sending_without_reply") in (True, "true", "True"):
            return None
        raise ApiError(400, "Bad Request: message to be replied not found")

    def _existing(self, params: JSON) -> Message:
        self._target_chat(params)
        message = self.messages.get((int(params["chat_id"]), int(params["message_id"])))
        if message is None or message.deleted:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message.sender != BOT_ID:
            raise ApiError(400, "Bad Request: message can't be edited")
        return message

    def api_editMessageText(self, params: JSON) -> JSON:
        message = self._existing(params)
        text, markup = self._check_text(params), self._check_markup(params)
        if text == message.text and markup == message.reply_markup:
            raise ApiError(
                400,
                "Bad Request: message is not modified: specified new message content and "
                "reply markup are exactly the same as a current content and reply markup "
                "of the message",
            )
        message.text, message.reply_markup = text, markup
        message.edited(self.clock())
        return self._message_json(message)

    def api_editMessageReplyMarkup(self, params: JSON) -> JSON:
        message = self._existing(params)
        markup = self._check_markup(params)
        if markup == message.reply_markup:
            raise ApiError(400, "Bad Request: message is not modified")
        message.reply_markup = markup
        message.edited(self.clock())
        return self._message_json(message)

    def api_deleteMessage(self, params: JSON) -> bool:
        message = self.messages.get((int(params["chat_id"]), int(params["message_id"])))
        if message is None or message.deleted:
            raise ApiError(400, "Bad Request: message to delete not found")
        message.deleted = True
        return True

    def api_answerCallbackQuery(self, params: JSON) -> bool:
        person = self.open_queries.pop(str(params["callback_query_id"]), None)
        if person is None:
            raise ApiError(
                400, "Bad Request: query is too old and response timeout expired or query id is invalid"
            )
        text = params.get("text")
        if text is not None and len(str(text)) > POPUP_LIMIT:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        if text:
            self.popups.setdefault(person, []).append(Popup(str(text), bool(params.get("show_alert"))))
        return True

    def _member_json(self, chat: Chat, person_id: int) -> JSON:
        if person_id == chat.creator:
            status = "creator"
        elif person_id in chat.admins:
            status = "administrator"
        elif person_id in chat.members:
            status = "member"
        else:
            status = "left"
        user = self.bot if person_id == BOT_ID else self.people[person_id].to_json()
        data: JSON = {"status": status, "user": user}
        if status == "administrator":
            data |= {
                "can_be_edited": False,
                "is_anonymous": False,
                "can_manage_chat": True,
                "can_delete_messages": True,
                "can_manage_video_chats": True,
                "can_restrict_members": True,
                "can_promote_members": False,
                "can_change_info": True,
                "can_invite_users": True,
                "can_post_stories": False,
                "can_edit_stories": False,
                "can_delete_stories": False,
            }
        elif status == "creator":
            data |= {"is_anonymous": False}
        return data

    def api_getChatMember(self, params: JSON) -> JSON:
        chat = self._target_chat(params)
        return self._member_json(chat, int(params["user_id"]))

    def api_getChatAdministrators(self, params: JSON) -> list[JSON]:
        chat = self._target_chat(params)
        admins = sorted(chat.admins | ({chat.creator} if chat.creator else set()))
        return [self._member_json(chat, person) for person in admins]
