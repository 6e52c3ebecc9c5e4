"""What every handler needs: the runtime, the person behind an update, and how to reply."""

from __future__ import annotations

import asyncio

from telegram import CallbackQuery, Chat, Update, User
from telegram.constants import ChatMemberStatus, ChatType, ParseMode
from telegram.error import BadRequest, RetryAfter, TelegramError
from telegram.ext import ContextTypes

from bot import raw
from bot.i18n import language_of
from bot.presenter import passing
from bot.runtime import RUNTIME, Paiju
from bot.views.common import clean_name
from storage import Person

Context = ContextTypes.DEFAULT_TYPE
MAX_ID = 2**63 - 1  # SQLite's largest integer: a bigger one overflows in the query


def runtime(context: Context) -> Paiju:
    return context.application.bot_data[RUNTIME]


def display_name(user: User) -> str:
    """The name a person is stored and shown under, cleaned of characters that could spoof it."""
    return " ".join(clean_name(user.full_name).split()) or user.username or str(user.id)


def remember_title(context: Context, chat: Chat) -> None:
    """Keep a group's title (cleaned) for the DMs that name it."""
    runtime(context).chat_titles[chat.id] = " ".join(clean_name(chat.title or "").split())


def parse_id(text: str) -> int | None:
    """A number a person typed (a table, a round): ASCII digits only, small enough for SQLite;
    None for anything else (``²`` and ``١٢`` pass ``str.isdigit``, and ``int`` takes the second)."""
    if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > len(str(MAX_ID)):
        return None  # (and ``int`` refuses more than 4,300 digits)
    number = int(text)
    return number if number <= MAX_ID else None


async def person_of(context: Context, user: User) -> tuple[Person, bool]:
    """The person (created with the starting grant on first sight) and whether they were just granted."""
    paiju = runtime(context)
    person, granted = await paiju.store.ensure_person(user.id, display_name(user))
    if person.language is None and user.language_code:
        language = language_of(user.language_code, paiju.settings.language)
        person = await paiju.set_person_language(user.id, display_name(user), language)
    return person, granted


def is_group(chat: Chat) -> bool:
    return chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


async def language_for(context: Context, update: Update) -> str:
    """The language to answer in: the chat's in a group, the person's in a DM."""
    paiju, chat, user = runtime(context), update.effective_chat, update.effective_user
    assert chat is not None
    if is_group(chat):
        return await paiju.chat_language(chat.id)
    return await paiju.person_language(user.id, user.language_code) if user else paiju.settings.language


async def reply(update: Update, text: str, **options: object) -> None:
    message = update.effective_message
    assert message is not None
    await message.reply_text(text, parse_mode=ParseMode.HTML, do_quote=False, **options)  # type: ignore[arg-type]


async def answer(query: CallbackQuery, text: str | None = None, alert: bool = False) -> None:
    """Answer a button press. A press redelivered after a restart may be too old to answer: that is
    fine (it was answered, or its spinner has long stopped); a passing failure is tried again."""
    for attempt in range(3):
        try:
            await raw.call(
                query.get_bot(),
                "answerCallbackQuery",
                callback_query_id=query.id,
                text=text,
                show_alert=alert,
            )
            return
        except BadRequest as error:
            if "query is too old" in error.message.lower() or "query id is invalid" in error.message.lower():
                return
            raise
        except TelegramError as error:
            if attempt == 2 or not passing(error):
                raise
            await asyncio.sleep(float(error.retry_after) if isinstance(error, RetryAfter) else 0.5)


async def may_manage(context: Context, chat_id: int, user_id: int) -> bool:
    """Chat admins and the bot's owners may cancel tables and change a chat's settings."""
    if user_id in runtime(context).settings.owners:
        return True
    member = await context.bot.get_chat_member(chat_id, user_id)
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)
