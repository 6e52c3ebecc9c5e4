"""Benchmark 6: what a round costs in Bot API requests, and the most requests a group sees in 60 s.

The bot in process (``tests.bot.harness.start_bot``) with its presenter as shipped (an edit at most
every second, 15 table requests a minute per group), one muxi table of 5 people and one showhand
table of 4, each playing several rounds (``bench.people``). The event loop's clock jumps ahead
whenever it would only wait (``bench.virtual_time``), and the presenter and the fake Telegram read
that clock: people can think for seconds between presses, and the presenter space its edits,
without the benchmark taking minutes.

Three paces: human (each press after 2 to 6 s of thought), fast (0.2 to 1 s) and full speed (each
press as soon as the previous one is answered). Requests are counted from the first round's first
Start press to the last round's last edit (the presenter's pending edits are let through at the
end), then divided by the rounds: new group messages, group edits (and deletes), DMs (new and
edited) and callback answers. The 60 s peak is over the whole run, opening the table included.

    python -m bench.telegram_cost [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from random import Random

from bench.people import WALLET, BenchWorld, Front, TablePlayers, TableSpec, Tally, seat_people
from bench.report import Result, markdown_table
from bench.virtual_time import VirtualTimeLoop
from faketg.driver import Driver
from faketg.world import Request
from tests.bot.harness import start_bot, stop_bot

GROUP_LIMIT, NEW_MESSAGES_LIMIT = 20, 2
PACES: dict[str, tuple[float, float] | None] = {"human": (2.0, 6.0), "fast": (0.2, 1.0), "full speed": None}
TABLES = {
    "muxi": TableSpec("muxi", -2_000_001, (2_000_011, 2_000_012, 2_000_013, 2_000_014, 2_000_015)),
    "showhand": TableSpec("showhand", -2_000_002, (2_000_021, 2_000_022, 2_000_023, 2_000_024)),
}


@dataclass
class Cost:
    game: str
    pace: str
    rounds: int
    counts: Counter[str]
    peak: int
    minutes: float  # virtual minutes the rounds took

    def per_round(self, kind: str) -> float:
        return self.counts[kind] / self.rounds


def kind_of(request: Request, world: BenchWorld) -> str | None:
    if request.method == "answerCallbackQuery":
        return "callback answers"
    chat = world.chats.get(request.chat_id) if request.chat_id is not None else None
    if chat is None:
        return None
    private = chat.type == "private"
    if request.method == "sendMessage":
        return "new DMs" if private else "new group messages"
    if request.method in ("editMessageText", "editMessageReplyMarkup"):
        return "DM edits" if private else "group edits"
    if request.method == "deleteMessage":
        return "group deletes"
    return None


async def play(spec: TableSpec, pace_name: str, rounds: int) -> Cost:
    pace = PACES[pace_name]
    loop = asyncio.get_running_loop()
    world = BenchWorld(clock=loop.time)
    seat_people(world, [spec])
    with tempfile.TemporaryDirectory() as tmp:
        bot = await start_bot(
            world,
            str(Path(tmp) / "cost.sqlite3"),
            start_grant=WALLET,
            edit_interval=1.0,
            table_requests_per_minute=15,
        )
        bot.paiju.presenter.clock = loop.time  # the presenter's budget runs on the loop's (jumping) clock
        rng = Random(7)

        async def think() -> None:
            if pace is not None:
                await asyncio.sleep(rng.uniform(*pace))

        front = Front(world, Driver.in_process(world, bot.application).deliver, Tally())
        table = TablePlayers(front, spec, rng, lambda: False, think)
        await table.open()
        first, started = len(world.requests), loop.time()
        await table.play(rounds)
        await bot.paiju.presenter.flush()  # the last edits the presenter held back
        minutes = (loop.time() - started) / 60
        counts = Counter(kind for r in world.requests[first:] if (kind := kind_of(r, world)) is not None)
        peak = world.group_peaks().get(spec.chat_id, 0)
        await stop_bot(bot)
    return Cost(spec.game, pace_name, table.rounds, counts, peak, minutes)


async def measure(rounds: int) -> list[Cost]:
    return [await play(spec, name, rounds) for spec in TABLES.values() for name in PACES]


def rows(costs: list[Cost]) -> list[Result]:
    results = []
    for cost in costs:
        what = "muxi round, 5 people" if cost.game == "muxi" else "showhand game, 4 people"
        label = f"{what}, {cost.pace} ({cost.rounds} rounds in {cost.minutes:.1f} simulated min)"
        split = ", ".join(
            f"{kind} {cost.per_round(kind):.1f}"
            for kind in (
                "new group messages",
                "group edits",
                "group deletes",
                "new DMs",
                "DM edits",
                "callback answers",
            )
        )
        total = sum(cost.counts.values()) / cost.rounds
        new_messages = cost.per_round("new group messages")
        results += [
            Result("6 Telegram cost", f"{label}: Bot API requests per round", f"{total:.1f}: {split}"),
            Result(
                "6 Telegram cost",
                f"{label}: new group messages per round (round 1 is shown in the table's first message)",
                f"{new_messages:.2f}",
                f"≤ {NEW_MESSAGES_LIMIT}",
                new_messages <= NEW_MESSAGES_LIMIT,
            ),
            Result(
                "6 Telegram cost",
                f"{label}: most requests to the group in any 60 s (opening the table included)",
                f"{cost.peak}",
                f"≤ {GROUP_LIMIT}",
                cost.peak <= GROUP_LIMIT,
            ),
        ]
    return results


def run(quick: bool) -> list[Result]:
    rounds = 4 if quick else 12
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return rows(runner.run(measure(rounds)))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.telegram_cost", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    print(markdown_table(run(parser.parse_args().quick)))


if __name__ == "__main__":
    main()
