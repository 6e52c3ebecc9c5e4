"""What the books say: /top (this chat's leaderboard, or ``/top global``), /stats, /history."""

from __future__ import annotations

from telegram import Update
from telegram.ext import CommandHandler

from bot.botdata import Context
from bot.display.i18n import t
from bot.display.views.common import coins, name, short_hash, signed
from bot.handlers.common import is_group, language_for, person_of, reply, reply_about_them, runtime_of
from games.muxi import Kind
from games.showhand import Category

GAME_ORDER = {"muxi": [kind.value for kind in Kind], "showhand": [category.value for category in Category]}
HISTORY_ROUNDS = 5


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
    chat = update.effective_chat
    assert chat is not None
    runtime, language = runtime_of(context), await language_for(context, update)
    if not is_group(chat):
        reply(context, update, t(language, "group_only"))
        return
    rounds = await runtime.store.last_rounds(chat_id=chat.id, limit=HISTORY_ROUNDS)
    if not rounds:
        reply(context, update, t(language, "history.empty"))
        return
    lines = [t(language, "history.title")]
    for saved in rounds:
        results = []
        for result in saved.results:
            person = await runtime.store.get_person(result.person_id)
            results.append(f"{name(person.name if person else str(result.person_id))} {signed(result.net)}")
        lines.append(
            t(
                language,
                "history.round",
                game=t(language, f"{saved.game}.title"),
                table=saved.table_id,
                round=saved.round_no,
                results="  ".join(results) or t(language, "history.unsettled"),
                hash=short_hash(saved.commitment),
            )
        )
    reply(context, update, "\n".join(lines))


HANDLERS = [CommandHandler("top", top), CommandHandler("stats", stats), CommandHandler("history", history)]
