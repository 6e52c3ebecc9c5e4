"""Commands that work anywhere: /start, /help, /rules, /balance, /daily, /language, /verify."""

from __future__ import annotations

from telegram import Update
from telegram.ext import CallbackQueryHandler, CommandHandler

from bot.botdata import Context
from bot.display.i18n import t
from bot.display.views.common import coins, keyboard, name
from bot.display.views.rules import rules_text
from bot.handlers.common import (
    answer,
    display_name,
    is_group,
    language_for,
    may_manage,
    parse_id,
    patiently,
    person_of,
    reply,
    reply_about_them,
    runtime_of,
)
from bot.settings import LANGUAGES
from storage import SavedRound

LANGUAGE_PICK = "lang:"


async def start(update: Update, context: Context) -> None:
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None
    person, granted = await person_of(context, user)
    language = await language_for(context, update)
    if is_group(chat):
        reply(context, update, t(language, "start.group"))
        return
    runtime_of(context).dms.learn(user.id, refused=False)  # their DM is open: they are in it
    lines = [t(language, "start.welcome", name=name(user.first_name))]
    if granted:
        lines.append(t(language, "start.granted", amount=coins(runtime_of(context).settings.start_grant)))
    lines.append(t(language, "start.balance", amount=coins(person.balance)))
    payload = context.args[0] if context.args else ""
    table_id = parse_id(payload[1:]) if payload.startswith("t") else None
    if table_id is not None:
        lines.append(await _back_to_table(context, user.id, table_id, language))
    elif (asked := verify_payload(payload)) is not None:  # a replay's "🔓 /verify" link
        found = await runtime_of(context).store.get_round(*asked)
        lines.append(t(language, "verify.none") if found is None else _proof(found, language))
    lines.append(t(language, "start.next"))
    reply(context, update, "\n".join(lines))


async def _back_to_table(context: Context, person: int, table_id: int, language: str) -> str:
    """A deep link from a table whose DM failed: the person's cards now, and the way back."""
    runtime = runtime_of(context)
    live = runtime.tables.by_id(table_id)
    if live is None or person not in live.seated():
        return t(language, "start.table_gone")
    await runtime.chat_events.dm_opened(live, person)
    return t(language, "start.back_to_table")


async def help_command(update: Update, context: Context) -> None:
    reply(context, update, t(await language_for(context, update), "help"))


async def rules(update: Update, context: Context) -> None:
    language = await language_for(context, update)
    game = (context.args[0].lower() if context.args else "muxi").replace("suoha", "showhand")
    if game not in ("muxi", "showhand"):
        reply(context, update, t(language, "rules.unknown", game=name(game, 20)))
        return
    reply(context, update, rules_text(game, language))


async def balance(update: Update, context: Context) -> None:
    user = update.effective_user
    assert user is not None
    person, _ = await person_of(context, user)
    amount = coins(person.balance)
    await reply_about_them(
        context, update, lambda language: t(language, "balance", name=name(user.first_name), amount=amount)
    )


async def daily(update: Update, context: Context) -> None:
    user = update.effective_user
    assert user is not None
    await person_of(context, user)
    runtime = runtime_of(context)
    claim = await runtime.store.claim_daily(user.id)
    balance = coins(claim.balance)
    if claim.claimed:
        await runtime.credit_outside(user.id)
        amount = coins(claim.amount)
        await reply_about_them(
            context, update, lambda language: t(language, "daily.claimed", amount=amount, balance=balance)
        )
    else:
        when = claim.next_claim_at.astimezone(runtime.zone).strftime("%m-%d %H:%M")
        await reply_about_them(
            context, update, lambda language: t(language, "daily.already", time=when, balance=balance)
        )


async def language_command(update: Update, context: Context) -> None:
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    language = await language_for(context, update)
    if is_group(chat) and not await may_manage(context, chat.id, user.id):
        reply(context, update, t(language, "language.admins_only"))
        return
    key = "language.pick_chat" if is_group(chat) else "language.pick_person"
    buttons = [  # the language in use marked (the chat's in a group, the person's in a DM)
        [
            (("✅ " if code == language else "") + t(code, "language.name"), LANGUAGE_PICK + code)
            for code in LANGUAGES
        ]
    ]
    reply(context, update, t(language, key), reply_markup=keyboard(buttons))


async def language_pick(update: Update, context: Context) -> None:
    query, chat, user = update.callback_query, update.effective_chat, update.effective_user
    assert query is not None and chat is not None and user is not None
    code = (query.data or "").removeprefix(LANGUAGE_PICK)
    runtime = runtime_of(context)
    if code not in LANGUAGES:
        await answer(query, t(runtime.settings.language, "press.unknown"))
        return
    if is_group(chat):
        if not await may_manage(context, chat.id, user.id):
            await answer(
                query, t(await runtime.preferences.chat_language(chat.id), "language.admins_only"), True
            )
            return
        await runtime.preferences.update_chat_settings(chat.id, language=code)
    else:
        await person_of(context, user)
        await runtime.preferences.set_person_language(user.id, display_name(user), code)
    await answer(query, t(code, "language.set"))
    if query.message is not None:
        await patiently(lambda: query.edit_message_text(t(code, "language.set")))


async def verify(update: Update, context: Context) -> None:
    """/verify [table round]: a round's deck order and salt, and how to recompute its commitment."""
    chat = update.effective_chat
    assert chat is not None
    runtime, language = runtime_of(context), await language_for(context, update)
    args = context.args or []
    numbers = [number for number in map(parse_id, args) if number is not None]
    if len(args) == 2 and len(numbers) == 2:
        found = await runtime.store.get_round(numbers[0], numbers[1])
    elif not args and is_group(chat):
        rounds = await runtime.store.last_rounds(chat_id=chat.id, limit=1)
        found = rounds[0] if rounds else None
    else:
        reply(context, update, t(language, "verify.usage"))
        return
    if found is None:
        reply(context, update, t(language, "verify.none"))
        return
    reply(context, update, _proof(found, language))


def _proof(found: SavedRound, language: str) -> str:
    """A round's fairness proof: its commitment, deck order and salt, and how to check them."""
    return t(
        language,
        "verify.proof",
        table=found.table_id,
        round=found.round_no,
        commitment=found.commitment,
        deck=found.deck,
        salt=found.salt,
    )


def verify_payload(payload: str) -> tuple[int, int] | None:
    """The round a ``/start v<table>_<round>`` deep link asks /verify about (a replay links so:
    ``bot.display.views.common.verify_link``); None for any other payload."""
    if not payload.startswith("v"):
        return None
    table, _, round_no = payload[1:].partition("_")
    ids = parse_id(table), parse_id(round_no)
    return None if ids[0] is None or ids[1] is None else (ids[0], ids[1])


HANDLERS = [
    CommandHandler("start", start),
    CommandHandler("help", help_command),
    CommandHandler("rules", rules),
    CommandHandler("balance", balance),
    CommandHandler("daily", daily),
    CommandHandler("language", language_command),
    CommandHandler("verify", verify),
    CallbackQueryHandler(language_pick, pattern=f"^{LANGUAGE_PICK}"),
]
