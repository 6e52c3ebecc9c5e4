"""/settings: a chat's admins choose its language, turn seconds, lobby expiry, games and the pause
between rounds (before auto-ready starts the next one), by buttons."""

from __future__ import annotations

from telegram import Update
from telegram.ext import CallbackQueryHandler, CommandHandler

from bot.botdata import Context
from bot.display.game_kinds import KINDS
from bot.display.i18n import t
from bot.display.views.common import duration, keyboard, short_duration
from bot.handlers.common import (
    answer,
    is_group,
    language_for,
    may_manage,
    parse_id,
    patiently,
    reply,
    runtime_of,
)
from bot.model.shown import Markup
from bot.settings import LANGUAGES
from storage import ChatSettings

PREFIX = "cfg:"
TURN_CHOICES = (10, 20, 30, 45, 60, 90, 120)
LOBBY_CHOICES = (60, 180, 300, 600, 1800)
PAUSE_CHOICES = (0, 3, 5, 10)  # seconds after a round's results before auto-ready readies anyone
ROW = 4  # the most durations in one row (more would wrap on a phone): more go in two rows


def settings_text(settings: ChatSettings, language: str, default_language: str) -> str:
    """The settings in effect (``Preferences.chat_settings``: the operator's seconds where none were
    chosen)."""
    games = " ".join(t(language, f"{game}.title") for game in settings.allowed_games)
    text = t(
        language,
        "settings.text",
        language=t(settings.language or default_language, "language.name"),
        turn=duration(settings.turn_seconds or 0, language),
        lobby=duration(settings.lobby_seconds or 0, language),
        games=games,
    )
    pause = t(language, "settings.pause", pause=pause_label(settings.pause_seconds or 0, language))
    return f"{text}\n{pause}"


def pause_label(seconds: int, language: str, *, short: bool = False) -> str:
    """The pause between rounds as a setting names it: ``5 秒``, ``5秒`` on a button, ``无`` for none."""
    if not seconds:
        return t(language, "settings.pause_none")
    return short_duration(seconds, language) if short else duration(seconds, language)


def settings_keyboard(settings: ChatSettings, language: str, default_language: str) -> Markup | None:
    """The choices, each duration row under a row naming what it sets (the turn's and the lobby's
    choices share values: ``1分`` in both), and short enough that no label wraps on a phone."""

    def mark(chosen: bool, label: str, space: str = " ") -> str:
        return f"✅{space}{label}" if chosen else label

    def durations(field: str, choices: tuple[int, ...], chosen: int | None) -> list[list[tuple[str, str]]]:
        def label(seconds: int) -> str:
            if field == "pause":
                return pause_label(seconds, language, short=True)
            return short_duration(seconds, language)

        buttons = [(mark(s == chosen, label(s), ""), f"{PREFIX}{field}:{s}") for s in choices]
        half = -(-len(buttons) // 2) if len(buttons) > ROW else len(buttons)
        named = t(language, "settings.turn_row" if field == "turn" else "settings.lobby_row")
        if field == "pause":
            named = t(language, "settings.pause_row")
        return [[(named, f"{PREFIX}row:{field}")], buttons[:half], buttons[half:]]

    current = settings.language or default_language
    return keyboard(
        [
            [(mark(code == current, t(code, "language.name")), f"{PREFIX}lang:{code}") for code in LANGUAGES],
            *durations("turn", TURN_CHOICES, settings.turn_seconds),
            *durations("lobby", LOBBY_CHOICES, settings.lobby_seconds),
            *durations("pause", PAUSE_CHOICES, settings.pause_seconds),
            [
                (mark(game in settings.allowed_games, t(language, f"{game}.title")), f"{PREFIX}game:{game}")
                for game in KINDS
            ],
        ]
    )


async def settings_command(update: Update, context: Context) -> None:
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    runtime, language = runtime_of(context), await language_for(context, update)
    if not is_group(chat):
        reply(context, update, t(language, "group_only"))
        return
    if not await may_manage(context, chat.id, user.id):
        reply(context, update, t(language, "settings.admins_only"))
        return
    current = await runtime.preferences.chat_settings(chat.id)
    default = runtime.settings.language
    reply(
        context,
        update,
        settings_text(current, language, default),
        reply_markup=settings_keyboard(current, language, default),
    )


async def settings_press(update: Update, context: Context) -> None:
    query, chat, user = update.callback_query, update.effective_chat, update.effective_user
    assert query is not None and chat is not None and user is not None
    runtime = runtime_of(context)
    language = await runtime.preferences.chat_language(chat.id)
    if not is_group(chat) or not await may_manage(context, chat.id, user.id):
        await answer(query, t(language, "settings.admins_only"), True)
        return
    field, _, value = (query.data or "").removeprefix(PREFIX).partition(":")
    if field == "row":  # a row's name, not a choice
        await answer(query)
        return
    current = before = await runtime.preferences.chat_settings(chat.id)
    if field == "lang" and value in LANGUAGES:
        current = await runtime.preferences.update_chat_settings(chat.id, language=value)
    elif field == "turn" and (seconds := parse_id(value)) in TURN_CHOICES:
        current = await runtime.preferences.update_chat_settings(chat.id, turn_seconds=seconds)
    elif field == "lobby" and (seconds := parse_id(value)) in LOBBY_CHOICES:
        current = await runtime.preferences.update_chat_settings(chat.id, lobby_seconds=seconds)
    elif field == "pause" and (seconds := parse_id(value)) in PAUSE_CHOICES:
        current = await runtime.preferences.update_chat_settings(chat.id, pause_seconds=seconds)
    elif field == "game" and value in KINDS:
        games = set(current.allowed_games) ^ {value}
        if not games:
            await answer(query, t(language, "settings.one_game"), True)
            return
        current = await runtime.preferences.update_chat_settings(
            chat.id, allowed_games=[g for g in KINDS if g in games]
        )
    else:
        await answer(query, t(language, "press.unknown"))
        return
    language = current.language or runtime.settings.language
    await answer(query, t(language, "settings.saved"))
    if current == before:  # the choice already made: the message shows it (an edit would be refused)
        return
    default = runtime.settings.language
    await patiently(
        lambda: query.edit_message_text(
            settings_text(current, language, default),
            # Our Markup is Telegram's JSON (bot/model/shown.py), which PTB sends as it is.
            reply_markup=settings_keyboard(current, language, default),  # type: ignore[arg-type]
        )
    )


HANDLERS = [
    CommandHandler("settings", settings_command),
    CallbackQueryHandler(settings_press, pattern=f"^{PREFIX}"),
]
