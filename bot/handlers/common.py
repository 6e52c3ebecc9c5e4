"""What every handler needs: the runtime, the person behind an update, and how to reply."""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram import CallbackQuery, Chat, Update, User
from telegram.constants import ChatMemberStatus
from telegram.error import BadRequest, NetworkError, RetryAfter

from bot.botdata import Context
from bot.display.i18n import t
from bot.display.views.common import clean_name, name
from bot.model.shown import Markup
from bot.send.rate_policy import Priority
from bot.tables.acting import Actor, ensure_person
from bot.tables.runtime import Runtime
from bot.telegram_facts import ANSWER_WITHIN, Failure, chat_kind, classify, popup_text, retry_seconds
from storage import Person

log = logging.getLogger(__name__)
PATIENCE = 3  # tries of a handler's own call refused with 429
T = TypeVar("T")
MAX_ID = 2**63 - 1  # SQLite's largest integer: a bigger one overflows in the query


def runtime_of(context: Context) -> Runtime:
    """The runtime (there from start-up on: no update is handled before)."""
    runtime = context.bot_data.runtime
    assert runtime is not None, "an update before start-up"
    return runtime


def actor(user: User) -> Actor:
    """Who is acting, as ``bot.tables.acting`` takes them (nothing of python-telegram-bot's)."""
    return Actor.named(user.id, user.first_name, user.last_name, user.username, user.language_code)


def display_name(user: User) -> str:
    """The name a person is stored and shown under (see ``Actor.named``)."""
    return actor(user).name


def remember_title(context: Context, chat: Chat) -> None:
    """Keep a group's title (cleaned) for the DMs that name it."""
    runtime_of(context).chat_titles[chat.id] = clean_name(chat.title or "")


def parse_id(text: str) -> int | None:
    """A number a person typed (a table, a round): ASCII digits only, small enough for SQLite;
    None for anything else (``²`` and ``١٢`` pass ``str.isdigit``, and ``int`` takes the second)."""
    if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > len(str(MAX_ID)):
        return None  # (and ``int`` refuses more than 4,300 digits)
    number = int(text)
    return number if number <= MAX_ID else None


async def person_of(context: Context, user: User) -> tuple[Person, bool]:
    """The person (created with the starting grant on first sight) and whether they were just granted."""
    return await ensure_person(runtime_of(context), actor(user))


def is_group(chat: Chat) -> bool:
    """Where a table may open (``bot.telegram_facts.ChatKind``)."""
    return chat_kind(chat).is_group


async def language_for(context: Context, update: Update) -> str:
    """The language to answer in: the chat's in a group, the person's in a DM."""
    runtime, chat, user = runtime_of(context), update.effective_chat, update.effective_user
    assert chat is not None
    if is_group(chat):
        return await runtime.preferences.chat_language(chat.id)
    return (
        await runtime.preferences.person_language(user.id, user.language_code)
        if user
        else runtime.settings.language
    )


def reply(
    context: Context,
    update: Update,
    text: str,
    *,
    reply_markup: Markup | None = None,
    reply_to: int | None = None,
    priority: Priority = Priority.REPLY,
    seen: Callable[[], None] | None = None,
    dm: tuple[int, str, str] | None = None,
) -> None:
    """Reply in the chat of ``update``: queued at once, sent as soon as the chat's budget allows
    (in a busy group, with the other replies waiting then, as one message), never dropped. In a
    group it answers the command's message (or ``reply_to``), where the person is looking, and the
    same reply to the same person is sent once in a few seconds, so a flood of commands costs the
    group next to nothing. ``priority``, ``seen``, ``dm``: see ``Presenter.reply``."""
    chat, sender = update.effective_chat, update.effective_sender  # a channel, for one sent as it
    message = update.message
    assert chat is not None
    once = (sender.id, text) if is_group(chat) and sender is not None else None
    if reply_to is None and is_group(chat) and message is not None:
        reply_to = message.message_id
    runtime_of(context).presenter.reply(
        chat.id,
        text,
        markup=reply_markup,
        reply_to=reply_to,
        once=once,
        priority=priority,
        seen=seen,
        asker=_asker(update) if is_group(chat) else None,
        dm=dm,
    )


def _asker(update: Update) -> str | None:
    """Who sent the command, and which (``阿明 /balance``): named when replies go as one message."""
    user, message = update.effective_user, update.message
    if user is None:
        return None
    command = (message.text or "").split(maxsplit=1)[0].split("@")[0] if message is not None else ""
    said = f" {html.escape(command, quote=False)}" if command.startswith("/") else ""
    return f"{name(display_name(user))}{said}"


async def reply_about_them(context: Context, update: Update, render: Callable[[str], str]) -> None:
    """A reply about the sender only (``render``: its text in a language): in a group it goes to
    their DM, in their language, when they have one, and the group's next reply carries a short
    line saying so; else (or in a DM) it is an ordinary reply."""
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None
    language = await language_for(context, update)
    if not is_group(chat) or user is None:
        reply(context, update, render(language))
        return
    own = await runtime_of(context).preferences.person_language(user.id, user.language_code)
    line = t(language, "reply.in_dm", name=name(display_name(user)))
    reply(context, update, render(language), dm=(user.id, render(own), line))


async def patiently(call: Callable[[], Awaitable[T]]) -> T:
    """A handler's own Bot API call (an answer, a lookup: not a send, which the presenter queues):
    a 429 is waited out, a few times, when its wait is short. The one layer that retries 429s for
    these calls (the request class retries network failures only)."""
    for attempt in range(PATIENCE):
        try:
            return await call()
        except RetryAfter as error:
            wait = retry_seconds(error)
            if attempt == PATIENCE - 1 or wait > ANSWER_WITHIN:  # a press is too old by then
                raise
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")


async def answer(query: CallbackQuery, text: str | None = None, alert: bool = False) -> None:
    """Answer a button press at once: Telegram does not limit answers, so they are never queued. A
    text longer than a popup may be is cut to fit (else Telegram refuses the answer and the person
    sees nothing). A press redelivered after a restart may be too old to answer: that is fine (it
    was answered, or its spinner has long stopped)."""
    shown = None if text is None else popup_text(text)
    try:
        await patiently(lambda: query.answer(shown, show_alert=alert))
    except BadRequest as error:
        if classify(error) is Failure.QUERY_EXPIRED:
            return
        raise
    except RetryAfter as error:
        log.warning("an answer was refused (429, retry after %s s)", retry_seconds(error))
    except NetworkError as error:  # a 5xx, a timeout, a dropped connection, after the retries
        log.warning("a press could not be answered: %s", error)


class RightsUnknown(Exception):
    """Telegram could not say whether someone may manage a chat (its getChatMember failed, after
    the request layer's retries): they are asked to try again (:func:`rights_unknown`, called by
    the application's error handler, so every command and button that checks rights answers)."""


async def may_manage(context: Context, chat_id: int, user_id: int) -> bool:
    """Chat admins and the bot's owners may cancel tables and change a chat's settings;
    ``RightsUnknown`` when Telegram cannot tell now. Tried again by one layer each: a 5xx, a timeout
    or a dropped connection by ``bot.send.aiohttp_request.RetryingRequest``, a short 429 by
    :func:`patiently`."""
    if user_id in runtime_of(context).settings.owners:
        return True
    try:
        member = await patiently(lambda: context.bot.get_chat_member(chat_id, user_id))
    except BadRequest:  # (a NetworkError to PTB) an answer, not a passing failure
        raise
    except (NetworkError, RetryAfter) as error:
        raise RightsUnknown(f"getChatMember failed ({type(error).__name__}: {error})") from error
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def rights_unknown(update: Update, context: Context, error: RightsUnknown) -> None:
    """Tell the person their rights could not be checked just now (a popup for a press, a reply
    to a command), and the log one line (no traceback: Telegram failed, not the bot)."""
    log.warning("%s: asked to try again", error)
    chat = update.effective_chat
    if chat is None:
        return
    text = t(await language_for(context, update), "rights.unknown")
    if update.callback_query is not None:
        await answer(update.callback_query, text, alert=True)
    else:
        reply(context, update, text)
