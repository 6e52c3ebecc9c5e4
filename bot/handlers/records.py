"""What the books say: /top (this chat's leaderboard, or ``/top global``), /stats, /history."""

from __future__ import annotations

import html

from telegram import Update
from telegram.ext import CommandHandler

from bot.botdata import Context
from bot.display.i18n import t
from bot.display.views.common import MINI_APP, coins, name, short_hash, signed
from bot.display.views.summary import history_line, round_count
from bot.handlers.common import is_group, language_for, person_of, reply, reply_about_them, runtime_of
from games.muxi import Kind
from games.showhand import Category
from storage import SavedRound, TableSummary

GAME_ORDER = {"muxi": [kind.value for kind in Kind], "showhand": [category.value for category in Category]}
HISTORY_ROUNDS_OF_TABLE = 10  # a table's rounds /history <table> lists (newest first)
TABLE_DIGITS = 18  # a table number longer than this is none (the database's ids are 64-bit)


def hand_name(game: str, hand: str, language: str) -> str:
    return t(language, f"{'muxi.kind' if game == 'muxi' else 'showhand.category'}.{hand}").strip()


def best_hand(game: str, hands: tuple[str, ...]) -> str | None:
    """The best of the hands a person has shown, by the game's order (best first)."""
    order = GAME_ORDER[game]
    known = [hand for hand in hands if hand in order]
    return min(known, key=order.index) if known else None


async def top(update: Update, context: Context) -> None:
    chat = update.effective_chat
    assert chat is not None
    runtime, language = runtime_of(context), await language_for(context, update)
    args = context.args or []
    wants_global = bool(args) and args[0].lower() in ("global", "all", "全服", "全球")
    if wants_global or not is_group(chat):
        rows, title, key = await runtime.store.global_leaderboard(10), "top.global", "top.line_global"
    else:
        rows, title, key = await runtime.store.chat_leaderboard(chat.id, 10), "top.chat", "top.line_chat"
    if not rows:
        reply(context, update, t(language, "top.empty"))
        return
    lines = [t(language, title)]
    lines += [
        t(
            language,
            key,
            rank=row.rank,
            name=name(row.name),
            coins=coins(row.coins),
            net=signed(row.coins),
            rounds=row.rounds,
        )
        for row in rows
    ]
    reply(context, update, "\n".join(lines))


async def stats(update: Update, context: Context) -> None:
    user = update.effective_user
    assert user is not None
    await person_of(context, user)
    runtime = runtime_of(context)
    found = await runtime.store.person_stats(user.id)
    held = await runtime.store.hands_held(user.id)
    balance = await runtime.store.balance(user.id)

    def render(language: str) -> str:
        lines = [t(language, "stats.title", name=name(user.full_name), balance=coins(balance))]
        for game in found.games:
            best = best_hand(game.game, held.get(game.game, ()))
            lines.append(
                t(
                    language,
                    "stats.game",
                    game=t(language, f"{game.game}.title"),
                    rounds=game.rounds,
                    won=game.won,
                    net=signed(game.net),
                    best=hand_name(game.game, best, language) if best else "—",
                )
            )
        total = found.total
        lines.append(t(language, "stats.total", rounds=total.rounds, won=total.won, net=signed(total.net)))
        return "\n".join(lines)

    await reply_about_them(context, update, render)


async def history(update: Update, context: Context) -> None:
    """/history: the chat's recent tables, each with its 总结算 in a line (game, day, rounds, the
    big winner); ``/history <table>``: that table's rounds, each with its shuffle commitment."""
    chat = update.effective_chat
    assert chat is not None
    runtime, language = runtime_of(context), await language_for(context, update)
    if not is_group(chat):
        reply(context, update, t(language, "group_only"))
        return
    args = context.args or []
    if not args:
        tables = await runtime.store.chat_tables(chat.id)
        if not tables:
            reply(context, update, t(language, "history.empty"))
            return
        lines = [t(language, "summary.history_title")]
        lines += [history_line(summary, language, runtime.zone) for summary in tables]
        reply(context, update, "\n".join(lines))
        return
    table_id = _table_number(args)
    if table_id is None:
        reply(context, update, t(language, "history.usage"))
        return
    summary = await runtime.store.table_summary(table_id)
    if summary is None or summary.chat_id != chat.id:  # (another chat's table is none of this one's)
        reply(context, update, t(language, "history.no_table", table=table_id))
        return
    if not summary.rounds:
        reply(context, update, t(language, "history.no_rounds", table=table_id))
        return
    await _table_rounds(update, context, summary, language)


def _table_number(args: list[str]) -> int | None:
    """The table number of ``/history 12`` (``#12`` too); None for anything else."""
    if len(args) != 1:
        return None
    text = args[0].removeprefix("#")
    return int(text) if text.isascii() and text.isdigit() and len(text) <= TABLE_DIGITS else None


async def _table_rounds(update: Update, context: Context, summary: TableSummary, language: str) -> None:
    """One table's line, then its last rounds (newest first), each with its commitment."""
    runtime = runtime_of(context)
    rounds = await runtime.store.last_rounds(table_id=summary.table_id, limit=HISTORY_ROUNDS_OF_TABLE)
    lines = [history_line(summary, language, runtime.zone)]
    if len(summary.rounds) > len(rounds):
        total = round_count(len(summary.rounds), language)
        lines.append(t(language, "summary.history_rounds", shown=len(rounds), total=total))
    for saved in rounds:
        lines.append(await _round_line(context, saved, language))
    reply(context, update, "\n".join(lines))


async def _round_line(context: Context, saved: SavedRound, language: str) -> str:
    """A round as /history has always listed it: each person's net, its commitment, /verify; and
    the link to its replay (回放) when the bot serves a Mini App."""
    runtime = runtime_of(context)
    results = []
    for result in saved.results:
        person = await runtime.store.get_person(result.person_id)
        results.append(f"{name(person.name if person else str(result.person_id))} {signed(result.net)}")
    line = t(
        language,
        "history.round",
        game=t(language, f"{saved.game}.title"),
        table=saved.table_id,
        round=saved.round_no,
        results="  ".join(results) or t(language, "history.unsettled"),
        hash=short_hash(saved.commitment),
    )
    link = MINI_APP.replay(saved.table_id, saved.round_no) if saved.results else None
    if link is not None:  # (a finished round: its 回放 opens in the Mini App)
        line += f' · <a href="{html.escape(link)}">{t(language, "button.replay")}</a>'
    return line


HANDLERS = [CommandHandler("top", top), CommandHandler("stats", stats), CommandHandler("history", history)]
