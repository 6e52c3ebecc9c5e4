"""Replies next to a table (issue 25, issue 30 point 3), through the HTTP emulator with Telegram's
limits on (``faketg.limits``), the bot as a subprocess, one muxi table of 5 playing at a human pace
in the group (``bench.crowd``), and five bystanders in that group (not seated, each with a DM):

(a) **Bursts.** Every ``burst_every`` s, the five send ``/balance``, ``/stats``, ``/top``,
    ``/balance``, ``/help`` within 8 s (one every 2 s).
(b) **A busy minute.** Then 20 commands in 60 s (one every 3 s, the same five commands in turn).
(c) **Escapes by command.** Then, ``escapes`` times, a player of the busy table itself (not the
    banker, still to decide, in a round after the deal) sends ``/leave``, and ``/leave`` again the
    moment the price question (``leave.confirm_command.muxi``) is seen in the group: the escape
    must be charged (RULES.md 1.6), a ``escape_penalty`` row in the ledger for that round. The
    players take turns; whoever escaped joins the next round again (the crowd answers the lobby).

Each command's reply time: from when the emulator received the command to when it accepted the
request that carried its answer: a message in the group answering it (or a part of a message of
several naming who asked and the command), or, for a reply about one person, their DM. A command
with no answer by the end counts as dropped. Also: how long after a new round's table message
the last round's message lost its buttons, and the most requests the group got in any 60 s, 429s
included; for (c), the tries, the escapes charged and the time from the first ``/leave`` to
the question seen.

    python -m bench.replies [--quick] [--bot-root DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from bench.crowd import LANGUAGE, Crowd, TableCrowd, name_of
from bench.emulated import add_bot_arguments, bot_spec
from bench.people import table_specs
from bench.report import Result, markdown_table
from bench.session import Session
from bench.stage import BotSpec
from bot.display.i18n import catalog
from faketg.limits import FloodLimits, group_peaks
from faketg.world import JSON, ApiError, Request, World

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
    escapes: int  # (c): tries of /leave, /leave
    drain: float


FULL = Plan(warmup=30, bursts=6, burst_every=30, minute=60, escapes=20, drain=60)
QUICK = Plan(warmup=20, bursts=2, burst_every=20, minute=60, escapes=5, drain=40)
QUESTION_WAIT = 30.0  # a try whose question is not seen within this is counted as lost
ESCAPED_WAIT = 10.0  # after the second /leave, how long the escaper waits for the answer
TRY_LIMIT = 120.0  # a try waits at most this long for a round after the deal with a player to escape


@dataclass(frozen=True)
class Asked:
    person: int
    command: str
    message_id: int
    at: float


@dataclass(frozen=True)
class Escape:
    person: int
    round_no: int
    asked: float  # the first /leave received by the emulator
    question: float | None  # the request carrying the price question accepted (None: never seen)
    charged: bool = False  # an escape_penalty row for them and that round
    answer: str = ""  # what the group was told naming them after the second /leave (why a miss)


class Questions:
    """Watches the group for the price question answering a given /leave (the emulator's listener):
    the escaper sends the second /leave as soon as the request carrying it is accepted."""

    def __init__(self, chat: int) -> None:
        self.chat = chat
        self.head = catalog(LANGUAGE)["leave.confirm_command.muxi"].split("{", 1)[0]
        self.waiting: tuple[int, int, asyncio.Future[float]] | None = None  # person, message id, seen

    def expect(self, person: int, message_id: int) -> asyncio.Future[float]:
        seen: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting = (person, message_id, seen)
        return seen

    def heard(self, method: str, params: JSON, result: object, error: ApiError | None, at: float) -> None:
        if self.waiting is None or error is not None or method != "sendMessage":
            return
        person, message_id, seen = self.waiting
        text = str(params.get("text", ""))
        if int(str(params["chat_id"])) != self.chat or self.head not in text or seen.done():
            return
        replied = params.get("reply_parameters")
        if (isinstance(replied, dict) and replied.get("message_id") == message_id) or (
            f"▸ {name_of(person)} /leave\n" in text
        ):
            seen.set_result(at)


def escaper(crowd: Crowd, table: TableCrowd, after_round: int, turn: int) -> tuple[int, int] | None:
    """A player (not the banker) still to decide in a round after the deal newer than ``after_round``,
    as the table message shows it: (person, round); the players take turns from ``turn``."""
    view = table.view
    if view is None or view.phase != "play" or view.round_no <= after_round:
        return None
    message = crowd.world.messages.get((table.spec.chat_id, view.message_id))
    if message is None:
        return None
    lines = message.text.split("\n")
    people = list(table.spec.people)
    for step in range(len(people)):
        person = people[(turn + step) % len(people)]
        if any(
            name_of(person) in line
            and crowd.marks.waiting in line
            and not line.startswith(crowd.marks.banker_prompt)
            for line in lines
        ) and not any(line.startswith(BANKER_LINE) and name_of(person) in line for line in lines):
            return person, view.round_no
    return None


BANKER_LINE = catalog(LANGUAGE)["muxi.banker"].split("{", 1)[0]


async def escapes(run: Session, chat: int, count: int) -> list[Escape]:
    """(c): ``count`` tries of /leave, then /leave as soon as the price question is seen."""
    crowd = run.crowd
    assert crowd is not None
    table, questions = crowd.tables[0], Questions(chat)
    run.world.listeners.append(questions.heard)
    tries: list[Escape] = []
    last_round = -1
    for turn in range(count):
        give_up = run.now + TRY_LIMIT
        while (found := escaper(crowd, table, last_round, turn)) is None and run.now < give_up:
            await asyncio.sleep(0.05)
        if found is None:
            break
        person, round_no = found
        last_round = round_no
        someone = table.people[person]
        crowd.cancel(someone)
        # They are busy leaving: no press of theirs meanwhile (``consider`` skips a person with one pending).
        someone.pending = asyncio.get_running_loop().call_later(3600, lambda: None)
        first = run.world.post(person, chat, "/leave")
        asked = run.now
        seen = questions.expect(person, int(first["message"]["message_id"]))
        crowd.wake()
        try:
            question: float | None = await asyncio.wait_for(seen, QUESTION_WAIT)
        except TimeoutError:
            question = None
        answer = ""
        if question is not None:
            start = len(run.world.requests)
            crowd.command(person, chat, "/leave")
            await run.until(run.now + ESCAPED_WAIT)
            answer = " | ".join(
                str(r.params.get("text", ""))
                for r in run.world.requests[start:]
                if r.chat_id == chat
                and r.method == "sendMessage"
                and name_of(person) in str(r.params.get("text"))
            )
        questions.waiting = None
        someone.pending.cancel()
        someone.pending = None
        crowd.consider(someone)
        tries.append(Escape(person, round_no, asked, question, answer=answer))
    return tries


def charged(database: Path, tries: list[Escape]) -> list[Escape]:
    """Each try, with whether the ledger charged them an escape penalty in that round."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        rows = set(
            connection.execute(
                "SELECT person_id, round_no FROM ledger WHERE reason = 'escape_penalty' AND delta < 0"
            ).fetchall()
        )
    return [
        Escape(
            one.person, one.round_no, one.asked, one.question, (one.person, one.round_no) in rows, one.answer
        )
        for one in tries
    ]


async def measure(plan: Plan, bot: BotSpec) -> tuple[list[Asked], list[Asked], list[Escape], World, int]:
    specs = table_specs(1)
    chat = specs[0].chat_id
    async with Session(1, FloodLimits(), bot, specs=specs) as run:
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
        await run.until(start + plan.minute)
        tries = await escapes(run, chat, plan.escapes)
        await run.until(run.now + plan.drain)
        await run.finish(5)
        assert run.database is not None
        tries = charged(run.database, tries)
        world = run.world
    return bursts, minute, tries, world, chat


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


def rows(
    bursts: list[Asked], minute: list[Asked], tries: list[Escape], world: World, chat: int, wanted: int
) -> list[Result]:
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
    waits = [one.question - one.asked for one in tries if one.question is not None]
    escaped = sum(one.charged for one in tries)
    results.append(
        Result(
            BENCH,
            "(c) /leave, then /leave as soon as the price question is seen, by a player of the muxi table "
            "after the deal: escapes charged of tries; first /leave to the question seen, p50 / max",
            f"{escaped} of {len(tries)} (of {wanted} wanted); "
            + (f"{percentile(waits, 0.5):.2f} / {max(waits):.2f} s" if waits else "no question seen")
            + "".join(
                f"; not charged: {name_of(one.person)} round {one.round_no}, told {one.answer!r}"
                for one in tries
                if not one.charged
            ),
            "every one charged",
            len(tries) == wanted and escaped == wanted,
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
    plan = QUICK if quick else FULL
    return rows(*asyncio.run(measure(plan, bot or BotSpec())), plan.escapes)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.replies", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    add_bot_arguments(parser)
    arguments = parser.parse_args()
    print(markdown_table(run(arguments.quick, bot_spec(arguments))))


if __name__ == "__main__":
    main()
