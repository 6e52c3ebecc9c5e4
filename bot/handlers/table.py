"""Group commands and the table's buttons: /newgame, /join, /leave, /table, /cancel, presses, leaving."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import wraps
from typing import Any

from telegram import CallbackQuery, Update, User
from telegram.constants import ChatMemberStatus
from telegram.ext import CallbackQueryHandler, ChatMemberHandler, CommandHandler, MessageHandler, filters

from bot.botdata import Context
from bot.display.game_kinds import KINDS
from bot.display.i18n import t
from bot.display.views.common import coins, keyboard, name
from bot.handlers.common import (
    actor,
    answer,
    display_name,
    is_group,
    language_for,
    may_manage,
    patiently,
    person_of,
    remember_title,
    reply,
    runtime_of,
)
from bot.model import callbacks
from bot.model.live_table import Event, LiveTable
from bot.send.rate_policy import Priority
from bot.tables.acting import Refused, act, join, leave, refusal_text
from bot.tables.runtime import Runtime
from bot.updates.seen import HANDLING
from games.errors import RuleError
from games.events import Paid, PayReason
from games.stakes import MIN_BALANCE
from games.table import Cancel, CloseAfterRound, Leave
from storage import NotOwner, StorageError

log = logging.getLogger(__name__)
GAME_ALIASES = {
    "muxi": "muxi",
    "木虱": "muxi",
    "showhand": "showhand",
    "suoha": "showhand",
    "梭哈": "showhand",
}


async def group_only(update: Update, context: Context) -> bool:
    chat = update.effective_chat
    assert chat is not None
    if is_group(chat):
        remember_title(context, chat)
        return True
    reply(context, update, t(await language_for(context, update), "group_only"))
    return False


@dataclass(frozen=True)
class AtTable:
    """What a command about the group's table works with: the runtime, the table (the chat's lock
    held), and the language to answer in."""

    runtime: Runtime
    live: LiveTable
    language: str


TableCommand = Callable[[Update, Context, AtTable], Awaitable[None]]
Precheck = Callable[[Update, Context, str], Awaitable[bool]]
Handler = Callable[[Update, Context], Coroutine[Any, Any, None]]  # what PTB's handlers take


def needs_table(
    first: Precheck | None = None,
) -> Callable[[TableCommand], Handler]:
    """A command about the group's table: in a group only (else the reply says so), under the
    chat's lock, with its table (else the reply says there is none). ``first``: a check made
    before the lock is taken (one that asks Telegram must not hold the chat up); it replies
    itself when it says no."""

    def decorate(command: TableCommand) -> Handler:
        @wraps(command)
        async def handler(update: Update, context: Context) -> None:
            if not await group_only(update, context):
                return
            chat = update.effective_chat
            assert chat is not None
            runtime, language = runtime_of(context), await language_for(context, update)
            if first is not None and not await first(update, context, language):
                return
            async with runtime.tables.lock(chat.id):
                live = runtime.tables.get(chat.id)
                if live is None:
                    reply(context, update, t(language, "table.none"))
                    return
                await command(update, context, AtTable(runtime, live, language))

        return handler

    return decorate


async def newgame(update: Update, context: Context) -> None:
    if not await group_only(update, context):
        return
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    language = await language_for(context, update)
    game = GAME_ALIASES.get(context.args[0].lower()) if context.args else None
    if not context.args:
        buttons = [[(t(language, f"{name}.title"), callbacks.pick(name)) for name in KINDS]]
        reply(context, update, t(language, "newgame.pick"), reply_markup=keyboard(buttons))
        return
    if game is None or game not in KINDS:
        reply(context, update, t(language, "newgame.unknown", games=" / ".join(KINDS)))
        return
    await open_table(update, context, game, user, language)


async def open_table(update: Update, context: Context, game: str, user: User, language: str) -> None:
    chat = update.effective_chat
    assert chat is not None
    runtime = runtime_of(context)
    settings = await runtime.preferences.chat_settings(chat.id)
    if game not in settings.allowed_games:
        reply(context, update, t(language, "newgame.not_allowed"))
        return
    async with runtime.tables.lock(chat.id):
        existing = runtime.tables.get(chat.id)
        if existing is not None:
            title = t(language, f"{existing.game}.title")
            reply(context, update, t(language, "newgame.exists", game=title), reply_to=existing.message_id)
            return
        elsewhere = runtime.tables.table_of(user.id)
        if elsewhere is not None:
            reply(context, update, t(language, "join.elsewhere"))
            return
        person, _ = await person_of(context, user)
        if person.balance < MIN_BALANCE:
            reply(
                context,
                update,
                t(language, "join.poor", amount=coins(person.balance), min=coins(MIN_BALANCE)),
            )
            return
        assert settings.turn_seconds is not None and settings.lobby_seconds is not None  # (those in effect)
        live = await runtime.tables.open(chat.id, game, settings.turn_seconds, settings.lobby_seconds)
        try:
            await join(runtime, live, actor(user))  # (the new table is the answer)
        except BaseException as error:
            await runtime.perform(live, Cancel())  # nobody sat down: no empty table is left behind
            if not isinstance(error, Refused | RuleError):
                raise
            reply(context, update, refusal_text(language, error))


async def pick_game(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    assert query is not None and user is not None
    game = callbacks.decode_pick(query.data)
    language = await language_for(context, update)
    if query.message is None or not is_group(query.message.chat):  # a table opens in a group only
        await answer(query, t(language, "group_only"), True)
        return
    if game is None:  # not a button we made (forged, or a game this bot no longer has)
        await answer(query, t(language, "press.unknown"), True)
        return
    await answer(query)
    await patiently(query.delete_message)
    await open_table(update, context, game, user, language)


@needs_table()
async def join_command(update: Update, context: Context, at: AtTable) -> None:
    """/join: sit down at the group's table."""
    user = update.effective_user
    assert user is not None
    try:
        said = await join(at.runtime, at.live, actor(user))
    except (Refused, RuleError) as error:
        reply(context, update, refusal_text(at.language, error))
        return
    reply(context, update, t(at.language, said, name=name(display_name(user))))


@needs_table()
async def leave_command(update: Update, context: Context, at: AtTable) -> None:
    """/leave: get up; during one's round, an escape whose price is told by a reply first."""
    user = update.effective_user
    assert user is not None
    try:
        said = await leave(at.runtime, at.live, user.id, "leave.confirm_command", by_reply=True)
    except Refused as error:
        if error.key.startswith("leave.confirm_command."):  # the price: they must answer it
            seen = at.runtime.escapes.price_by_reply(
                at.live.table_id, user.id
            )  # their 5 s count from then on
            reply(context, update, refusal_text(at.language, error), priority=Priority.ACT, seen=seen)
        else:
            reply(context, update, refusal_text(at.language, error))
        return
    except RuleError as error:
        reply(context, update, refusal_text(at.language, error))
        return
    reply(context, update, t(at.language, said, name=name(display_name(user))))


@needs_table()
async def table_command(update: Update, context: Context, at: AtTable) -> None:
    """/table: post the table message again at the bottom of the chat."""
    at.runtime.presenter.want_table(at.live, await at.runtime.screen(at.live.chat_id), anew=True)


async def _may_cancel(update: Update, context: Context, language: str) -> bool:
    """Chat admins and the bot's owners only (see ``may_manage``)."""
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    if await may_manage(context, chat.id, user.id):
        return True
    reply(context, update, t(language, "cancel.admins_only"))
    return False


@needs_table(first=_may_cancel)
async def cancel(update: Update, context: Context, at: AtTable) -> None:
    """/cancel: the table closes after its round (at once in the lobby). An admin may be seated
    and losing: the round under way is settled first. The bot's owners keep an immediate cancel
    for emergencies; the table lists the refunds."""
    user = update.effective_user
    assert user is not None
    runtime, live, language = at.runtime, at.live, at.language
    action = Cancel() if user.id in runtime.settings.owners else CloseAfterRound(user.id)
    live.view.names.setdefault(user.id, display_name(user))
    try:
        events = await runtime.perform(live, action)
    except RuleError as error:
        reply(context, update, refusal_text(language, error))
        return
    except StorageError:  # the round cannot go on (its saves are refused): it ends now
        log.exception("table %s could not be closed after its round: closed now", live.table_id)
        events = await runtime.perform(live, Cancel())
    reply(context, update, cancelled_text(live, events, language))


def cancelled_text(live: LiveTable, events: list[Event], language: str) -> str:
    """What /cancel did, naming the table (its game, number and opener: a reply that arrives after
    a new table has opened must not read as about that one): it closes after its round, or it
    has ended and these went back."""
    opener = next(iter(live.view.names.values()), "?")
    table = t(
        language,
        "cancel.table",
        game=t(language, f"{live.game}.title"),
        table=live.table_id,
        opener=name(opener),
    )
    if not live.engine.closed:
        return t(language, "cancel.after_round", table=table, round=live.round_no)
    refunds = [
        t(language, "cancel.refund", name=name(live.name(event.payee)), amount=coins(event.amount))
        for event in events
        if isinstance(event, Paid) and event.reason is PayReason.REFUND and isinstance(event.payee, int)
    ]
    if not refunds:
        return t(language, "cancel.done_nothing_held", table=table, rounds=live.round_no)
    return t(
        language,
        "cancel.done",
        table=table,
        rounds=live.round_no,
        refunds=t(language, "list.separator").join(refunds),
    )


async def member_left(update: Update, context: Context) -> None:
    """Leaving the group during a round is an escape, as leaving the table is."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or message.left_chat_member is None:
        return
    runtime, person = runtime_of(context), message.left_chat_member.id
    async with runtime.tables.lock(chat.id):
        live = runtime.tables.get(chat.id)
        if live is not None and person in live.seated():
            await runtime.perform(live, Leave(person))


async def bot_removed(update: Update, context: Context) -> None:
    """The bot was removed from a group: its table ends and the escrow goes back."""
    change, chat = update.my_chat_member, update.effective_chat
    if change is None or chat is None:
        return
    if change.new_chat_member.status not in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        return
    runtime = runtime_of(context)
    async with runtime.tables.lock(chat.id):
        live = runtime.tables.get(chat.id)
        if live is not None:
            await runtime.chat_events.abandon(live)


async def group_upgraded(update: Update, context: Context) -> None:
    """A group became a supergroup: its table, coins and history move to the new chat id."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None:
        return
    if message.migrate_to_chat_id:
        old, new = chat.id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id:
        old, new = message.migrate_from_chat_id, chat.id
    else:
        return
    runtime = runtime_of(context)
    async with runtime.tables.lock(old):
        live = await runtime.chat_events.migrate(old, new)
    if live is None:
        return
    worker = context.bot_data.worker
    if worker is not None and not worker.owns(new):  # the new chat is another worker's to show
        await worker.hand_off(live.table_id, new)
        return
    async with runtime.tables.lock(new):
        await runtime.present(live, [])


# -- the buttons -----------------------------------------------------------------------------------
async def button_pressed(update: Update, context: Context) -> None:
    """Every table button: always answered, with the reason when the press is refused."""
    query, user = update.callback_query, update.effective_user
    assert query is not None and user is not None
    runtime = runtime_of(context)
    handling = HANDLING.get()
    if handling is not None and handling.task is asyncio.current_task():
        handling.query_id = query.id  # (owed with its action: answered by the next worker if need be)
    language = await runtime.preferences.person_language(user.id, user.language_code)
    try:
        reply_with = await _carry_out(query, context, user, language)
    except (Refused, RuleError) as error:
        _forget_unkept_dm(runtime, query, user.id)
        text = t(language, "error.turn_over") if timed_out(runtime, query, user.id) else None
        await answer(query, text or refusal_text(language, error), isinstance(error, Refused))
        return
    except NotOwner as lost:  # another worker owns this chat now: the press, still in the inbox,
        log.warning("a button press was left to its chat's owner: %s", lost)  # is its to answer
        return
    except Exception:
        log.exception("a button press failed")
        await answer(query, t(language, "press.failed"), True)
        return
    _forget_unkept_dm(runtime, query, user.id)
    await answer(query, *reply_with)
    seen_updates = context.application.bot_data.seen_updates
    if handling is not None and seen_updates is not None:
        seen_updates.answered(handling)


def timed_out(runtime: Runtime, query: CallbackQuery, person: int) -> bool:
    """Whether a refused press comes after its turn ran out: the deadline acted for ``person`` in
    the round the button is from (told so, not "not your turn": it was, and it is over)."""
    press = callbacks.decode(query.data)
    live = None if press is None else runtime.tables.by_id(press.table_id)
    if live is None or press is None or press.round_no != live.round_no:
        return False
    return any(move.person == person and move.timed_out for move in live.view.moves)


def _forget_unkept_dm(runtime: Runtime, query: CallbackQuery, person: int) -> None:
    """A press, taken or refused, on a DM message the bot does not keep as that person's DM for
    the table: its buttons go (the bot cannot have known the message to take them away sooner)."""
    message, press = query.message, callbacks.decode(query.data)
    if message is None or press is None or is_group(message.chat):
        return
    live = runtime.tables.by_id(press.table_id)
    if live is None or live.dm_ids.get(person) != message.message_id:
        runtime.presenter.stale_buttons(message.chat.id, message.message_id)


async def _carry_out(
    query: CallbackQuery, context: Context, user: User, language: str
) -> tuple[str | None, bool]:
    """Carry out one press; the popup (text, as an alert) to answer it with."""
    press = callbacks.decode(query.data)
    message = query.message
    if press is None or message is None:
        raise Refused("press.unknown")
    runtime, chat_id = runtime_of(context), message.chat.id
    if is_group(message.chat):
        remember_title(context, message.chat)
    else:  # a button in a player's DM: only their own moves, their cards and 我回来了, never a seat
        pressed_at = runtime.tables.by_id(press.table_id)
        if pressed_at is None:
            raise Refused("press.table_over")
        if press.action not in (*KINDS[pressed_at.game].moves, callbacks.CARDS, callbacks.AUTOPILOT_OFF):
            raise Refused("press.in_group")
        chat_id = pressed_at.chat_id
    return await act(runtime, chat_id, press, actor(user), language)


HANDLERS = [
    CommandHandler("newgame", newgame),
    CommandHandler("join", join_command),
    CommandHandler("leave", leave_command),
    CommandHandler("table", table_command),
    CommandHandler("cancel", cancel),
    CallbackQueryHandler(pick_game, pattern=f"^{callbacks.PICK}:"),
    CallbackQueryHandler(button_pressed),
    MessageHandler(filters.StatusUpdate.LEFT_CHAT_MEMBER, member_left),
    MessageHandler(filters.StatusUpdate.MIGRATE, group_upgraded),
    ChatMemberHandler(bot_removed, ChatMemberHandler.MY_CHAT_MEMBER),
]
