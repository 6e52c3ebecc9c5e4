"""Replies next to a table (issue 25, issue 30 point 3), through the HTTP emulator with Telegram's
limits on (``faketg.limits``), the bot as a subprocess, one muxi table of 5 playing at a human pace
in the group (``bench.crowd``), and five bystanders in that group (not seated, each with a DM):

(a) **Bursts.** Every ``burst_every`` s, the five send ``/balance``, ``/stats``, ``/top``,
    ``/balance``, ``/help`` within 8 s (one every 2 s).
(b) **A busy minute.** Then 20 commands in 60 s (one every 3 s, the same five commands in turn).

Each command's reply time: from when the emulator received the command to when it accepted the
request that carried its answer: a message in the group answering it (or a part of a message of
several naming who asked and the command), or, for a reply about one person, their DM. A command
with no answer by the end counts as dropped. Also: how long after a new round's table message
the last round's message lost its buttons, and the most requests the group got in any 60 s, 429s
included.

    python -m bench.replies [--quick] [--bot-root DIR]
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass

from bench.crowd import LANGUAGE
from bench.emulated import add_bot_arguments, bot_spec
from bench.people import table_specs
from bench.report import Result, markdown_table
from bench.session import Session
from bench.stage import BotSpec
from faketg.limits import Limits, group_peaks
from faketg.world import Request, World

BENCH = "8 replies"
BYSTANDERS = [1_800_001 + n for n in range(5)]
COMMANDS = ["/balance", "/stats", "/top", "/balance", "/help"]
P99_TARGET_S, GROUP_LIMIT = 5.0, 20


@dataclass(frozen=True)
class Plan:
    warmup: float  # the table opens, people sit down and play
    bursts: int
    burst_every: float
    minute: float  # (b): 20 commands over this many seconds
    drain: float


FULL = Plan(warmup=30, bursts=6, burst_every=30, minute=60, drain=60)
QUICK = Plan(warmup=20, bursts=2, burst_every=20, minute=60, drain=40)


@dataclass(frozen=True)
class Asked:
    person: int
    command: str
    message_id: int
    at: float


async def measure(plan: Plan, bot: BotSpec) -> tuple[list[Asked], list[Asked], World, int]:
    specs = table_specs(1)
    chat = specs[0].chat_id
    async with Session(1, Limits(), bot, specs=specs) as run:
        assert run.crowd is not None
        for person in BYSTANDERS:
            run.world.add_person(person, f"P{person}", language=LANGUAGE)
            run.world.chats[chat].members.add(person)
        run.crowd.open_tables(0)
        await run.until(run.t0 + plan.warmup)

        def ask(person: int, command: str) -> Asked:
            update = run.world.post(person, chat, command)
            run.crowd.wake()  # type: ignore[union-attr]
            return Asked(person, command, int(update["message"]["message_id"]), run.now)

        bursts: list[Asked] = []
        for _ in range(plan.bursts):
            start = run.now
            for n, (person, command) in enumerate(zip(BYSTANDERS, COMMANDS, strict=True)):
                await run.until(start + 2 * n)
                bursts.append(ask(person, command))
            await run.until(start + plan.burst_every)
        minute: list[Asked] = []
        start = run.now
        for n in range(20):
            await run.until(start + plan.minute * n / 20)
            minute.append(ask(BYSTANDERS[n % 5], COMMANDS[n % 5]))
        await run.until(start + plan.minute + plan.drain)
        await run.finish(5)
        world = run.world
    return bursts, minute, world, chat


def answered_at(world: World, chat: int, asked: Asked) -> float | None:
    """When the request carrying ``asked``'s answer was accepted (None: never)."""
    head = f"▸ P{asked.person} {asked.command}\n"
    for request in world.requests:
        if request.at < asked.at or request.method != "sendMessage" or request.error is not None:
            continue
        if request.chat_id == chat and (
            _answers(request, asked.message_id) or head in str(request.params["text"])
        ):
            return request.at
        if request.chat_id == asked.person and asked.command in ("/balance", "/stats"):
            return request.at
    return None


def buttons_gone(world: World, chat: int) -> list[float]:
    """For each edit that took an old table message's buttons away (an edit with none), the seconds
    since the group's last new message with buttons (the new round's) was accepted."""
    gaps, posted = [], None
    for request in world.requests:
        if request.chat_id != chat or request.error is not None:
            continue
        if request.method == "sendMessage" and request.params.get("reply_markup"):
            posted = request.at
        elif request.method == "editMessageText" and not request.params.get("reply_markup") and posted:
            gaps.append(request.at - posted)
            posted = None
    return gaps


def _answers(request: Request, message_id: int) -> bool:
    replied = request.params.get("reply_parameters")
    return isinstance(replied, dict) and replied.get("message_id") == message_id


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def rows(bursts: list[Asked], minute: list[Asked], world: World, chat: int) -> list[Result]:
    results: list[Result] = []
    for label, asked in (
        (f"(a) {len(bursts) // 5} bursts of 5 commands from 5 people within 8 s", bursts),
        ("(b) 20 commands in 60 s", minute),
    ):
        times = [answered_at(world, chat, one) for one in asked]
        waits = [at - one.at for at, one in zip(times, asked, strict=True) if at is not None]
        dropped = sum(at is None for at in times)
        p50, p99 = (percentile(waits, 0.5), percentile(waits, 0.99)) if waits else (float("nan"),) * 2
        target = f"p99 < {P99_TARGET_S:.0f} s, 0 dropped" if asked is bursts else "all within 60 s, 0 dropped"
        met = dropped == 0 and (p99 < P99_TARGET_S if asked is bursts else max(waits, default=99) < 60)
        value = f"{p50:.2f} / {p99:.2f} s (max {max(waits, default=float('nan')):.2f} s); dropped {dropped}"
        results.append(
            Result(BENCH, f"{label} next to a muxi table of 5: reply p50 / p99", value, target, met)
        )
    gaps = buttons_gone(world, chat)
    results.append(
        Result(
            BENCH,
            f"an old round's buttons taken away after the new round's message, p50 / max (n = {len(gaps)})",
            f"{percentile(gaps, 0.5):.1f} / {max(gaps):.1f} s" if gaps else "no new round",
            "< 5 s",
            bool(gaps) and max(gaps) < 5.0,
        )
    )
    attempted = group_peaks(world.requests, world.chats, accepted_only=False).get(chat, 0)
    accepted = group_peaks(world.requests, world.chats).get(chat, 0)
    refused = sum(1 for r in world.requests if r.chat_id == chat and r.error == 429)
    results.append(
        Result(
            BENCH,
            "the group's most requests in any 60 s, 429s included (accepted only); 429s there",
            f"{attempted} ({accepted}); {refused}",
            f"≤ {GROUP_LIMIT}",
            attempted <= GROUP_LIMIT,
        )
    )
    return results


def run(quick: bool, bot: BotSpec | None = None) -> list[Result]:
    return rows(*asyncio.run(measure(QUICK if quick else FULL, bot or BotSpec())))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.replies", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    add_bot_arguments(parser)
    arguments = parser.parse_args()
    print(markdown_table(run(arguments.quick, bot_spec(arguments))))


if __name__ == "__main__":
    main()
