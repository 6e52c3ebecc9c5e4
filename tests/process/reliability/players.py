"""Simulated people playing whole games against the bot process: each looks at the table as the
bot saved it (as a player reads the screen) and presses something their buttons offer, at random.
Crashes: sometimes the bot is SIGKILLed while it handles a press, and started again."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
from dataclasses import dataclass

from bot.display.views.showhand import ACTION_CODES
from bot.model import callbacks
from faketg.harness import GROUP
from games.muxi import Move as MuxiMove
from games.muxi import MuxiTable
from games.showhand import ShowhandTable
from tests.process.e2e.process import Stage
from tests.waiting import until

MUXI_CODES = {
    MuxiMove.READY: "ready",
    MuxiMove.BE_BANKER: "banker",
    MuxiMove.PASS: "pass",
    MuxiMove.DRAW: "draw",
    MuxiMove.STAND: "stand",
    MuxiMove.LEAVE: "leave",
    MuxiMove.JOIN: "join",
}


@dataclass
class Saved:
    table_id: int
    game: str
    engine: MuxiTable | ShowhandTable
    message_id: int | None


def saved_table(database: str, chat_id: int = GROUP) -> Saved | None:
    """The chat's open table as the bot last saved it."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        row = db.execute(
            "SELECT id, game, state, message_id FROM tables WHERE chat_id = ? AND closed = 0", (chat_id,)
        ).fetchone()
    if row is None:
        return None
    kind = MuxiTable if row[1] == "muxi" else ShowhandTable
    return Saved(row[0], row[1], kind.from_dict(json.loads(row[2])["engine"]), row[3])


def rounds_played(database: str, chat_id: int = GROUP) -> int:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM rounds WHERE chat_id = ?", (chat_id,)).fetchone()[0]


# Seconds without a request before a press counts as handled: its action is saved before its answer,
# and the next press is chosen from the saved table, not from what the bot shows (the emulator's
# default, 0.15 s, waits for the edits a press brings: here they go on while people play).
QUIET = 0.02
# How often people pick each kind of button when they have it (the rest: 1).
WEIGHTS = {"leave": 0.0, "join": 3.0, "ready": 3.0, "all_in": 0.05, "fold": 0.3, "bet": 0.5, "raise": 0.3}


def balances(database: str) -> dict[int, int]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT id, balance FROM people").fetchall())


def choose(
    saved: Saved, people: list[int], rng: random.Random, escapes: float, coins: dict[int, int]
) -> tuple[int, str] | None:
    """Someone and a button of theirs, at random but as people play: (person, callback data)."""
    options, weights = [], []
    for person in people:
        for option in saved.engine.legal_actions(person):
            move = getattr(option, "move", option)
            if move.value == "join" and coins.get(person, 10**9) < 1_000:
                continue  # too poor to sit: they know it
            weight = escapes if move.value == "leave" else WEIGHTS.get(move.value, 1.0)
            if weight <= 0:
                continue
            if saved.game == "muxi":
                code, arg = MUXI_CODES[move], None
            elif move in ACTION_CODES:
                code, arg = ACTION_CODES[move], option.amount
            else:
                code, arg = move.value, None
            options.append(
                (person, callbacks.encode(saved.game, saved.table_id, saved.engine.core.round_no, code, arg))
            )
            weights.append(weight)
    return rng.choices(options, weights)[0] if options else None


@dataclass
class Report:
    games: int = 0
    presses: int = 0
    crashes: int = 0
    lost_presses: int = 0


async def play(
    stage: Stage,
    game: str,
    people: list[int],
    games: int,
    rng: random.Random,
    *,
    crash: float = 0.0,
    escapes: float = 0.01,
    report: Report | None = None,
    max_steps: int = 400,
) -> Report:
    """Play ``games`` rounds (muxi) or games (showhand) in the group to their ends."""
    report = report or Report()
    database, d = str(stage.bot.database), stage.driver
    target = rounds_played(database) + games
    for _ in range(max_steps * games):
        if rounds_played(database) >= target:
            report.games += games
            return report
        saved = saved_table(database)
        if saved is None:
            await d.send(people[0], GROUP, f"/newgame {game}")
            continue
        picked = choose(saved, people, rng, escapes, balances(database))
        if picked is None:
            continue
        person, data = picked
        if saved.message_id is None:  # saved before its message reached the group (a busy bot)
            await until(lambda: stage.world.bot_messages(GROUP), "the table's message in the group")
        message_id = saved.message_id or stage.world.bot_messages(GROUP)[-1].message_id
        update = stage.world.press(person, GROUP, message_id, data)
        report.presses += 1
        if rng.random() < crash:
            await crash_while_handling(stage, update, rng)
            report.crashes += 1
            if str(update["callback_query"]["id"]) in stage.world.open_queries:
                report.lost_presses += 1  # taken before the crash, never answered: pressed again later
                stage.world.open_queries.pop(str(update["callback_query"]["id"]))
        else:
            await stage.emulator.deliver(update, QUIET)
            if data.endswith(":leave"):  # an escape is confirmed by a second press
                await stage.emulator.deliver(stage.world.press(person, GROUP, message_id, data), QUIET)
                report.presses += 1
    raise AssertionError(f"{games} {game} games did not end in {max_steps * games} steps")


async def crash_while_handling(stage: Stage, update: dict, rng: random.Random) -> None:
    """Hand the update to the bot and SIGKILL it a moment later, then start it again."""
    await stage.emulator.notify()
    await asyncio.sleep(rng.uniform(0.0, 0.08))
    await stage.bot.kill()
    await stage.bot.start()
    # An update taken just before the crash is lost with it: its person presses again later.
    with contextlib.suppress(TimeoutError):
        await stage.emulator.deliver(update, timeout=5)


def paid_twice(database: str) -> list[str]:
    """Rounds whose settlement or pot was booked by more than one action: a round settles once."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT table_id, round_no, reason, entry FROM ledger WHERE reason IN "
            "('settlement', 'forfeit', 'pot', 'escape_share')"
        ).fetchall()
    actions: dict[tuple[int, int, str], set[str]] = {}
    for table_id, round_no, reason, entry in rows:
        actions.setdefault((table_id, round_no, reason), set()).add(entry.split(":")[2])
    return [
        f"table {t} round {r}: {reason} booked by actions {sorted(seqs)}"
        for (t, r, reason), seqs in actions.items()
        if len(seqs) > 1
    ]
