"""Chaos (issue 47): the bot, and two workers, paused (SIGSTOP, then SIGCONT a drawn 0.5-20 s later)
and SIGKILLed at random moments while people play several tables by the buttons they are shown
(``tests/process/reliability/test_chaos.py``).

- ``People``: everyone at a table presses what the newest message with buttons in their DM and in
  the group offers (a DM's buttons once per version of the message, a group's once each), after a
  drawn moment to think (``THINKING``), without waiting for the bot: a press spins until the bot
  answers it, and one still spinning after ``PATIENCE`` is pressed again, once. A table the rules
  ended (nobody took the bank) is opened again.
- ``Event``, ``one_process_schedule``, ``carry_out``: the chaos drawn from a seed
  (``PAIJU_CHAOS_SEED``, else a new one, printed) so that a schedule can be played again.
- ``answers``, ``press_details``: every press answered exactly once (none left spinning, none
  answered twice: Telegram refuses a second answer with 400), and each one's story if not.
- ``Tap``: a proxy between one process and the emulator, noting who sent what (a chat, a callback
  query's answer); ``trespasses``: requests a worker sent for a chat another worker had claimed.
- ``Ownership``: who owns the partitions (``partitions``: partition, owner, epoch, taken_at) and
  every claim seen; the takeover times after a SIGSTOP and after a SIGKILL.

``python -m tests.process.reliability.chaos measure [--runs N]``: the takeover times alone (two workers on a
throwaway PostgreSQL, one SIGSTOPped until the other owns every partition, then SIGKILLed), for
docs/RELIABILITY.md.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import random
import signal
import sqlite3
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import aiohttp
import asyncpg
from aiohttp import web

from faketg.driver import newest_table, newest_with_buttons
from faketg.world import Message, Request, World
from tests.process.e2e.process import BotProcess, free_port, processes_of
from tests.process.e2e.workers_stage import make_workers, world_of
from tests.waiting import until

SEED_ENV = "PAIJU_CHAOS_SEED"
PATIENCE = 4.0  # seconds a press may spin before its person presses the same button again (once)
THINKING = (0.1, 1.5)  # seconds a person takes to press a button they see (drawn in this range)
REOPEN = 15.0  # seconds after a /newgame before a table still not open is asked for again
# The settings of the bot (and of each worker): short turns, the default share of a group's 20
# requests a minute (the e2e stages lift it), people who never go broke.
SETTINGS = {
    "PAIJU_TURN_SECONDS": "10",
    "PAIJU_TABLE_REQUESTS_PER_MINUTE": "15",
    "PAIJU_START_GRANT": "1000000",
}
# What a person presses when shown, and how likely (a prefix of the button's label: "跟注 10").
DM_CHOICES = {"不补": 3.0, "补牌": 2.0, "过牌": 3.0, "跟注": 3.0, "下注": 1.0, "弃牌": 0.3, "当庄": 2.0}
DM_CHOICES |= {"不当庄": 0.5, "🙋 我回来了": 5.0}
GROUP_CHOICES = {"当庄": 1.0, "开始": 1.0, "继续下一局": 1.0, "🙋 我回来了": 1.0}


def chaos_seed() -> int:
    found = os.environ.get(SEED_ENV)
    return int(found) if found else random.SystemRandom().randrange(1, 10**9)


def name_of(person: int) -> str:
    return f"玩家{person}"


@dataclass
class Table:
    chat_id: int
    people: list[int]
    game: str
    target: int | None = None  # rounds it must have played (set once the chaos is over)
    finish_by: float | None = None  # by then (the event loop's time)


# -- the people -------------------------------------------------------------------------------------
@dataclass
class Press:
    query_id: str
    person: int
    chat_id: int
    message_id: int
    data: str
    label: str
    at: float
    again: bool = False  # pressed again (the first is still spinning), or already was


@dataclass
class People:
    """People pressing the buttons they are shown; ``notify`` wakes Telegram's delivery. Each takes
    a moment to decide (``THINKING``); one whose press still spins after ``PATIENCE`` presses the
    same button again, once."""

    world: World
    notify: Callable[[], Awaitable[None]]
    rng: random.Random
    presses: list[Press] = field(default_factory=list)
    reopened: int = 0  # tables that ended by the rules and were opened again
    progress: dict[int, list[str]] = field(default_factory=dict)  # when each table's rounds ended
    _done: set[tuple[object, ...]] = field(default_factory=set)  # what was pressed (``_key``)
    _seen: dict[tuple[object, ...], float] = field(default_factory=dict)  # first seen, and thought over by
    _last: dict[int, Press] = field(default_factory=dict)

    def spinning(self, person: int) -> Press | None:
        last = self._last.get(person)
        return last if last is not None and last.query_id in self.world.open_queries else None

    def options(self, table: Table) -> list[tuple[float, int, int, Message, dict[str, object]]]:
        """(weight, person, chat, message, button) for every press someone at the table would make
        now (seen, and thought over)."""
        world, now = self.world, time.monotonic()
        found = []
        group = newest_with_buttons(world, table.chat_id)
        shown = newest_table(world, table.chat_id)
        for person in table.people:
            if self.spinning(person) is not None:
                continue
            places = [(person, newest_with_buttons(world, person), DM_CHOICES)]
            places.append((table.chat_id, group, GROUP_CHOICES))
            for chat_id, message, choices in places:
                if message is None:
                    continue
                for button in message.buttons:
                    label, data = str(button.get("text", "")), button.get("callback_data")
                    if data is None:
                        continue
                    weight = next((w for prefix, w in choices.items() if label.startswith(prefix)), 0.0)
                    if label == "加入" and shown is not None and name_of(person) not in shown.text:
                        weight = 2.0  # got up (托管): sits again
                    key = self._key(person, chat_id, message, str(data))
                    if weight <= 0 or key in self._done:
                        continue
                    ready = self._seen.get(key)
                    if ready is None:
                        ready = self._seen[key] = now + self.rng.uniform(*THINKING)
                    if now >= ready:
                        found.append((weight, person, chat_id, message, button))
        return found

    @staticmethod
    def _key(person: int, chat_id: int, message: Message, data: str) -> tuple[object, ...]:
        """What a person presses once: in their DM, one button of each version of a message (what
        it asks, answered once); in the group, each button (its data names the round)."""
        return (person, chat_id, message.message_id, message.edits) if chat_id == person else (person, data)

    async def step(self, table: Table) -> bool:
        """Someone at the table presses something (whether anyone did)."""
        now = time.monotonic()
        for person in table.people:
            last = self.spinning(person)
            if last is not None and not last.again and now - last.at > PATIENCE:
                last.again = True  # the spinner goes on: they press the same button again
                await self._press(person, last.chat_id, last.message_id, last.data, last.label, again=True)
                return True
        options = self.options(table)
        if not options:
            return False
        _, person, chat_id, message, button = self.rng.choices(options, [o[0] for o in options])[0]
        data = str(button["callback_data"])
        self._done.add(self._key(person, chat_id, message, data))
        await self._press(person, chat_id, message.message_id, data, str(button["text"]))
        return True

    async def _press(
        self, person: int, chat_id: int, message_id: int, data: str, label: str, again: bool = False
    ) -> None:
        update = self.world.press(person, chat_id, message_id, data)
        query = update["callback_query"]
        assert isinstance(query, dict)
        press = Press(str(query["id"]), person, chat_id, message_id, data, label, time.monotonic(), again)
        self.presses.append(press)
        self._last[person] = press
        await self.notify()

    async def play(self, table: Table, played: Played, timeout: float) -> None:
        """Play until the table has played its ``target`` rounds (set by the caller meanwhile, with
        ``finish_by``). A table that ended (nobody took the bank: the rules end it) is opened again."""
        loop = asyncio.get_running_loop()
        give_up, opened = loop.time() + timeout, loop.time()
        while True:
            rounds, open_ = await played(table.chat_id)
            if rounds > len(self.progress.setdefault(table.chat_id, [])):
                self.progress[table.chat_id].append(stamp())
            if table.target is not None and rounds >= table.target:
                return
            if loop.time() > min(give_up, table.finish_by or give_up):
                raise AssertionError(
                    f"table {table.chat_id} ({table.game}) did not play {table.target} rounds in time:"
                    f" {rounds} played; what its people see:\n{self.describe(table)}"
                )
            if not open_ and loop.time() - opened > REOPEN:
                self.world.post(table.people[0], table.chat_id, f"/newgame {table.game}")
                await self.notify()
                opened = loop.time()
                self.reopened += 1
            else:
                await self.step(table)
            await asyncio.sleep(0.1)  # (people look again)

    def describe(self, table: Table) -> str:
        """What the table's people see now: the group's last messages, each one's last DM."""
        lines = []
        for chat_id in (table.chat_id, *table.people):
            for shown in self.world.bot_messages(chat_id)[-3 if chat_id == table.chat_id else -1 :]:
                labels = [str(b.get("text")) for b in shown.buttons]
                text = shown.text.replace("\n", " / ")[:240]
                lines.append(
                    f"  chat {chat_id} message {shown.message_id} (edited {shown.edits}x): {text} {labels}"
                )
        return "\n".join(lines)


# -- every press answered once ----------------------------------------------------------------------
@dataclass
class Answers:
    pressed: int
    open: list[str]  # never answered (still spinning)
    refused: list[str]  # an answer Telegram refused (400: answered before, or too old)
    twice: list[str]  # answered more than once
    slowest: float  # seconds from a press to its answer, the longest


def answers(world: World, presses: list[Press]) -> Answers:
    ours = {press.query_id for press in presses}
    attempts = answer_attempts(world, ours)
    ok = {q: [r for r in tries if r.error is None] for q, tries in attempts.items()}
    slowest = max((tries[0].at - world.pressed_at[q] for q, tries in ok.items() if tries), default=0.0)
    return Answers(
        len(ours),
        sorted((q for q in ours if q in world.open_queries), key=int),
        sorted((q for q, tries in attempts.items() if any(r.error is not None for r in tries)), key=int),
        sorted((q for q, tries in ok.items() if len(tries) > 1), key=int),
        slowest,
    )


def answer_attempts(world: World, queries: set[str]) -> dict[str, list[Request]]:
    """Each ``answerCallbackQuery`` of these queries, by query, in order."""
    found: dict[str, list[Request]] = {}
    for request in world.requests:
        query = str(request.params.get("callback_query_id"))
        if request.method == "answerCallbackQuery" and query in queries:
            found.setdefault(query, []).append(request)
    return found


def press_details(world: World, presses: list[Press], queries: list[str], taps: list[Tap] = ()) -> str:
    """Each press: who pressed what, where and when, and every answer the bot tried (when, by which
    process if ``taps`` say, what it said, and Telegram's error if refused)."""
    by_id = {press.query_id: press for press in presses}
    attempts = answer_attempts(world, set(queries))
    lines = []
    for query in queries:
        press = by_id[query]
        lines.append(
            f"  query {query}: {name_of(press.person)} pressed {press.label!r}"
            f"{' again' if press.again and press is not first_of(presses, press) else ''}"
            f" (data {press.data}) under message {press.message_id} in chat {press.chat_id}"
            f" at {_clock(world.pressed_at[query])}"
        )
        tried = attempts.get(query, [])
        by = answered_by(list(taps), query) if taps else []
        for index, request in enumerate(tried):
            text = str(request.params.get("text") or "").replace("\n", " / ")[:60]
            verdict = "taken" if request.error is None else f"refused {request.error}"
            who = f" by {by[index]}" if len(by) == len(tried) else ""
            lines.append(f"    answered at {_clock(request.at)}{who} ({text!r}): {verdict}")
        if not attempts.get(query):
            lines.append("    never answered")
    return "\n".join(lines)


def told(world: World, presses: list[Press]) -> collections.Counter[str]:
    """What the answers to the people's presses said (a popup's text; "" for none)."""
    ours = {press.query_id for press in presses}
    return collections.Counter(
        "(their cards)" if any(word in text for word in ("你的牌", "底牌")) else text[:40]
        for r in world.requests
        if r.method == "answerCallbackQuery" and str(r.params.get("callback_query_id")) in ours
        for text in [str(r.params.get("text") or "")]
    )


def first_of(presses: list[Press], press: Press) -> Press:
    """The first press of the same button by the same person (itself, unless pressed again)."""
    return next(
        p for p in presses if (p.person, p.message_id, p.data) == (press.person, press.message_id, press.data)
    )


async def all_answered(world: World, presses: list[Press], timeout: float = 30.0) -> None:
    """Wait until none of the people's presses is open any more (answered, or refused for good)."""
    ours = {press.query_id for press in presses}
    with contextlib.suppress(AssertionError):
        await until(lambda: not (ours & set(world.open_queries)), "every press answered", timeout)


# -- the chaos --------------------------------------------------------------------------------------
@dataclass
class Event:
    after: float  # seconds after the previous event is over (the bot running again)
    kind: str  # "stop" (SIGCONT ``hold`` seconds later) or "kill" (SIGKILL, then started again)
    hold: float = 0.0
    whole: bool = True  # a stop: of the bot and its children (a frozen machine), or the bot alone
    target: int = 0  # which process (a worker's index)

    def __str__(self) -> str:
        if self.kind == "kill":
            what = "SIGKILL, started again"
        else:
            what = (
                f"SIGSTOP {'with its children' if self.whole else 'alone'}, SIGCONT {self.hold:.1f} s later"
            )
        return f"{self.after:.1f} s later: process {self.target} {what}"


def one_process_schedule(rng: random.Random) -> list[Event]:
    """A short pause (a GC pause, a reminder's moment), a long one (up to 20 s: a frozen VM, many
    deadlines passing), and a SIGKILL, in a drawn order, 0.5 to 3 s apart: 23 s paused at most."""
    kinds = ["stop", "stop", "kill"]
    rng.shuffle(kinds)
    holds = [rng.uniform(0.5, 3.0), rng.uniform(3.0, 20.0)]
    rng.shuffle(holds)
    events = []
    for kind in kinds:
        hold = holds.pop() if kind == "stop" else 0.0
        events.append(Event(rng.uniform(0.5, 3.0), kind, hold, whole=rng.random() < 0.5))
    return events


async def carry_out(
    events: list[Event],
    processes: list[BotProcess],
    journal: list[str],
    before_start: Callable[[BotProcess], Awaitable[None]] | None = None,
) -> None:
    """Do ``events`` to the processes, one after the other; what was done when goes in ``journal``
    (``before_start``: called before a killed process starts again)."""
    for event in events:
        await asyncio.sleep(event.after)  # (a drawn moment, not a wait for something to happen)
        process = processes[event.target]
        if event.kind == "stop":
            pids = stop(process, event.whole)
            journal.append(f"{stamp()} SIGSTOP {pids}")
            try:
                await asyncio.sleep(event.hold)  # (held for its drawn time)
            finally:
                resume(pids)
                journal.append(f"{stamp()} SIGCONT {pids}")
        else:
            assert process.process is not None
            journal.append(f"{stamp()} SIGKILL {process.process.pid}")
            await process.kill()
            if before_start is not None:
                await before_start(process)
            await process.start()
            assert process.process is not None
            journal.append(f"{stamp()} started again: {process.process.pid}")


def stop(process: BotProcess, whole: bool = True) -> list[int]:
    """SIGSTOP the bot (with any children, as a frozen machine would)."""
    assert process.process is not None
    pids = processes_of(process.process.pid) if whole else [process.process.pid]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)
    return pids


def resume(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def stamp() -> str:
    return _clock(time.time())


def log_excerpt(
    log: Path, needles: tuple[str, ...] = ("ERROR", "Traceback", "WARNING"), lines: int = 80
) -> str:
    """The bot log's lines that say something went wrong (the last ``lines``)."""
    if not log.exists():
        return ""
    found = [line for line in log.read_text(errors="replace").splitlines() if any(n in line for n in needles)]
    return "\n".join(found[-lines:])


def peak_window(world: World, chat_id: int, window: float = 60.0) -> str:
    """The bot's requests to a group in its busiest ``window`` seconds (for a failure's message)."""
    counted = [
        r
        for r in world.requests
        if r.chat_id == chat_id
        and r.method in ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")
    ]
    best: list[object] = []
    for index, request in enumerate(counted):
        inside = [r for r in counted[index:] if r.at < request.at + window]
        if len(inside) > len(best):
            best = inside
    return "\n".join(
        f"    {time.strftime('%H:%M:%S', time.localtime(r.at))}.{int(r.at % 1 * 1000):03d} {r.method}"
        f" message {r.params.get('message_id', '(new)')}{f' error {r.error}' if r.error else ''}"
        for r in best  # type: ignore[attr-defined]
    )


# -- rounds played, from the database ---------------------------------------------------------------
PLAYED = (
    "SELECT (SELECT COUNT(*) FROM rounds WHERE chat_id = {0}),"
    " (SELECT COUNT(*) FROM tables WHERE chat_id = {0} AND closed = 0)"
)
Played = Callable[[int], Awaitable[tuple[int, bool]]]  # a chat's rounds played, and whether a table is open


def sqlite_played(database: Path) -> Played:
    async def played(chat_id: int) -> tuple[int, bool]:
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)) as db:
            rounds, open_ = db.execute(PLAYED.format("?"), (chat_id, chat_id)).fetchone()
        return int(rounds), bool(open_)

    return played


def postgres_played(conn: asyncpg.Connection) -> Played:
    lock = asyncio.Lock()

    async def played(chat_id: int) -> tuple[int, bool]:
        async with lock:
            row = await conn.fetchrow(PLAYED.format("$1"), chat_id)
        assert row is not None
        return int(row[0]), bool(row[1])

    return played


async def postgres_paid_twice(conn: asyncpg.Connection) -> list[str]:
    """``players.paid_twice`` on PostgreSQL: rounds whose settlement or pot was booked by more than
    one action."""
    rows = await conn.fetch(
        "SELECT table_id, round_no, reason, entry FROM ledger WHERE reason IN"
        " ('settlement', 'forfeit', 'pot', 'escape_share')"
    )
    actions: dict[tuple[int, int, str], set[str]] = {}
    for row in rows:
        key = (row["table_id"], row["round_no"], row["reason"])
        actions.setdefault(key, set()).add(row["entry"].split(":")[2])
    return [
        f"table {t} round {r}: {reason} booked by actions {sorted(seqs)}"
        for (t, r, reason), seqs in actions.items()
        if len(seqs) > 1
    ]


# -- who owns the partitions (PostgreSQL) ----------------------------------------------------------
@dataclass
class Ownership:
    """Who owns each partition (``partitions``: partition, owner, epoch, taken_at), read from the
    database; every claim seen is kept (``claims``), with when it was taken."""

    conn: asyncpg.Connection
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    claims: dict[tuple[int, int], tuple[str | None, float]] = field(default_factory=dict)

    async def owners(self) -> dict[int, tuple[str | None, int]]:
        async with self.lock:
            rows = await self.conn.fetch(
                "SELECT partition, owner, epoch, taken_at FROM partitions ORDER BY partition"
            )
        for row in rows:
            key = (row["partition"], row["epoch"])
            if key not in self.claims and row["taken_at"] is not None:
                self.claims[key] = (row["owner"], datetime.fromisoformat(row["taken_at"]).timestamp())
        return {row["partition"]: (row["owner"], row["epoch"]) for row in rows}

    async def watch(self, every: float = 0.1) -> None:
        """Look at the partitions for ever (every claim kept in ``claims``; cancel to stop)."""
        while True:
            with contextlib.suppress(asyncpg.PostgresError, OSError):
                await self.owners()
            await asyncio.sleep(every)

    def owner_at(self, partition: int, moment: float) -> tuple[str | None, int] | None:
        """The owner of ``partition`` at ``moment`` (``time.time``) and its epoch, by the last claim
        taken by then; None if none was seen, or a claim after it was missed (between two looks)."""
        known = {e: claim for (p, e), claim in self.claims.items() if p == partition}
        before = [epoch for epoch, (_, taken) in known.items() if taken <= moment]
        if not before:
            return None
        epoch = max(before)
        if any(e > epoch for e in known) and epoch + 1 not in known:
            return None
        return known[epoch][0], epoch

    async def count_owned(self) -> collections.Counter[str | None]:
        return collections.Counter(owner for owner, _ in (await self.owners()).values())

    async def owns_all(self, name: str) -> bool:
        owners = await self.owners()
        return bool(owners) and all(owner == name for owner, _ in owners.values())

    async def workers(self) -> list[tuple[str, int, str]]:
        async with self.lock:
            rows = await self.conn.fetch("SELECT name, pid, alive_until::text FROM workers ORDER BY name")
        return [(row["name"], row["pid"], row["alive_until"]) for row in rows]

    async def takeover(self, name: str, since: float, timeout: float = 30.0) -> float:
        """Seconds from ``since`` (``time.monotonic``) until ``name`` owns every partition."""

        async def owns() -> bool:
            return await self.owns_all(name)

        await self.until(owns, f"{name} owns every partition", timeout)
        return time.monotonic() - since

    async def until(self, condition: Callable[[], Awaitable[bool]], what: str, timeout: float) -> None:
        """``until``, and if the partitions never get there, what the database's sessions were doing
        then (who waits for what), with the failure."""
        try:
            await until(condition, what, timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{await self.sessions()}") from None

    async def sessions(self) -> str:
        """The database's sessions as the server sees them: each one's name, state, what it waits
        for, how long its transaction has been open, and its query."""
        async with self.lock:
            rows = await self.conn.fetch(
                "SELECT pid, application_name, state, wait_event_type, wait_event,"
                " round(extract(epoch FROM clock_timestamp() - xact_start)::numeric, 1) AS open_for,"
                " left(query, 100) AS query FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY pid"
            )
            owners = await self.conn.fetch("SELECT partition, owner, epoch FROM partitions ORDER BY 1")
            leases = await self.conn.fetch(
                "SELECT name, pid, (alive_until - clock_timestamp())::text AS left FROM workers"
            )
        lines = ["the database's sessions then:"]
        lines += [
            f"  {row['pid']} {row['application_name']!r} {row['state']}"
            f" waits {row['wait_event_type']}/{row['wait_event']} transaction open {row['open_for']} s:"
            f" {row['query']!r}"
            for row in rows
        ]
        lines.append(
            "partitions: " + ", ".join(f"{r['partition']}={r['owner']}@{r['epoch']}" for r in owners)
        )
        lines.append("leases: " + ", ".join(f"{r['name']} (pid {r['pid']}) {r['left']}" for r in leases))
        return "\n".join(lines)


# -- who sent what: a tap between a worker and Telegram --------------------------------------------
SENDS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")


@dataclass
class Sent:
    at: float  # time.time when the request reached the tap
    method: str
    chat_id: int | None
    query_id: str | None  # an answer's callback query
    status: int | None = None
    what: str = ""  # the message it edits and the start of its text (for a failure's report)


class Tap:
    """A proxy between one process (one run of the bot, or of a worker) and the emulator: each Bot
    API request is passed on as it is, and noted (when, which method, which chat, which callback
    query), so that a request can be put down to the process that made it. The process's
    ``PAIJU_BOT_API_URL`` is ``url``."""

    def __init__(self, emulator_url: str, label: str) -> None:
        self.emulator_url = emulator_url
        self.label = label
        self.name: str | None = None  # the worker's name (partitions.owner), once known
        self.pid = 0  # its process
        self.sent: list[Sent] = []
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._pass_on)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def _pass_on(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        method = request.path.rsplit("/", 1)[-1]
        fields = _fields(request.content_type, body)
        chat_id, query_id = fields.get("chat_id"), fields.get("callback_query_id")
        note = Sent(
            time.time(),
            method,
            _integer(chat_id),
            None if query_id is None else str(query_id),
            what=f"message {fields.get('message_id', '(new)')}: {str(fields.get('text', ''))[:60]!r}",
        )
        self.sent.append(note)
        headers = (
            {"Content-Type": request.headers["Content-Type"]} if "Content-Type" in request.headers else {}
        )
        async with self._session.request(
            request.method, self.emulator_url + request.path_qs, data=body, headers=headers
        ) as answer:
            note.status = answer.status
            return web.Response(
                status=answer.status, body=await answer.read(), content_type=answer.content_type
            )

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()


def _fields(content_type: str, body: bytes) -> dict[str, object]:
    """A Bot API request's parameters (JSON, or a form)."""
    try:
        if content_type == "application/json":
            found = json.loads(body)
            return found if isinstance(found, dict) else {}
        return {key: values[0] for key, values in urllib.parse.parse_qs(body.decode()).items()}
    except ValueError:
        return {}


def _integer(value: object) -> int | None:
    try:
        return None if value is None else int(str(value))
    except ValueError:
        return None


def answered_by(taps: list[Tap], query_id: str) -> list[str]:
    """Which process (its tap's label) made each answer of a callback query, in order."""
    found = [(sent.at, tap.label) for tap in taps for sent in tap.sent if sent.query_id == query_id]
    return [label for _, label in sorted(found)]


def trespasses(taps: list[Tap], owned: Ownership, group_of: dict[int, int], count: int) -> list[str]:
    """The requests a worker sent to a chat (a group, or a DM of someone at its table) whose
    partition another worker had claimed by then (the fence refuses such a worker's writes; it must
    not send either)."""
    found = []
    for tap in taps:
        for sent in tap.sent:
            if sent.method not in SENDS or sent.chat_id not in group_of:
                continue
            partition = group_of[sent.chat_id] % count
            owner = owned.owner_at(partition, sent.at)
            if owner is not None and owner[0] != tap.name:
                found.append(
                    f"{_clock(sent.at)} {tap.label} ({tap.name}) sent {sent.method} to {sent.chat_id}"
                    f" (answered {sent.status}): partition {partition} was {owner[0]}'s since"
                    f" {_clock(owned.claims[(partition, owner[1])][1])} (epoch {owner[1]}); {sent.what};"
                    " its requests to that chat before: "
                    + ", ".join(
                        f"{_clock(before.at)} {before.method} {before.status} {before.what}"
                        for before in [b for b in tap.sent if b.chat_id == sent.chat_id and b.at < sent.at][
                            -3:
                        ]
                    )
                )
    return sorted(found)


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(moment)) + f".{int(moment % 1 * 1000):03d}"


# -- python -m tests.process.reliability.chaos measure -----------------------------------------------------
async def measure(folder: Path, url: str) -> tuple[float, float]:
    """Takeover times of two workers on an empty database: after a SIGSTOP of one, and after a
    SIGKILL of one (seconds until the other owns every partition)."""
    world, _ = world_of(1)
    stage = await make_workers(world, folder, url)
    conn = await asyncpg.connect(url)
    try:
        workers = [await stage.start_worker(**SETTINGS) for _ in range(2)]
        owned = Ownership(conn)
        names = await worker_names(owned, workers)
        await until(lambda: shared(owned), "the partitions shared out", 30)
        held, survivor = workers
        assert survivor.process is not None
        pids = stop(held)
        try:
            after_stop = await owned.takeover(names[survivor.process.pid], time.monotonic())
        finally:
            resume(pids)
        await until(lambda: shared(owned), "the partitions shared out again", 30)
        killed = time.monotonic()
        await held.kill()
        after_kill = await owned.takeover(names[survivor.process.pid], killed)
    finally:
        await conn.close()
        await stage.stop()
    print(f"takeover after SIGSTOP {after_stop:.2f} s, after SIGKILL {after_kill:.2f} s")
    return after_stop, after_kill


async def worker_names(owned: Ownership, workers: list[BotProcess]) -> dict[int, str]:
    """Each worker's name (``host:pid:…``, in ``workers``), by its process id."""
    pids = {worker.process.pid for worker in workers if worker.process is not None}

    async def named() -> dict[int, str]:
        found = {int(name.split(":")[1]): name for name, _, _ in await owned.workers()}
        return found if pids <= set(found) else {}

    return await until(named, "every worker has a lease", 30)  # type: ignore[return-value]


async def shared(owned: Ownership) -> bool:
    counts = await owned.count_owned()
    return len(counts) >= 2 and None not in counts and max(counts.values()) - min(counts.values()) <= 1


def main(argv: list[str] | None = None) -> int:
    import argparse
    import shutil
    import tempfile

    from tests.postgres_server import PostgresServer, find_binaries

    parser = argparse.ArgumentParser(prog="python -m tests.process.reliability.chaos")
    parser.add_argument("command", choices=["measure"])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    binaries = find_binaries()
    if binaries is None:
        print("PostgreSQL's server programs are not installed (apt-get install postgresql)")
        return 2
    folder = Path(tempfile.mkdtemp(prefix="paiju-chaos-"))
    try:
        with PostgresServer(binaries) as server:
            figures = []
            for run in range(args.runs):
                url = server.create_database()
                where = folder / str(run)
                where.mkdir()
                figures.append(asyncio.run(measure(where, url)))
                server.drop_database(url)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    stops, kills = sorted(f[0] for f in figures), sorted(f[1] for f in figures)
    print(
        f"takeover after SIGSTOP: min {stops[0]:.2f} s, median {stops[len(stops) // 2]:.2f} s,"
        f" max {stops[-1]:.2f} s; after SIGKILL: min {kills[0]:.2f} s, median"
        f" {kills[len(kills) // 2]:.2f} s, max {kills[-1]:.2f} s ({len(figures)} runs)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
