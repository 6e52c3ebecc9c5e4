"""Chaos (issue 47): while people play several tables by the buttons they are shown, the bot (one
process on SQLite) and one of two workers (on PostgreSQL) are paused (SIGSTOP, SIGCONT a drawn
0.5-20 s later) and SIGKILLed (and started again) at random moments. Judged at the end: every table
finished its rounds (a turn's deadline may act for people), every press was answered exactly once,
``python -m storage check`` passes, no round was paid twice, and no group got over 20 requests in
any minute. With two workers, the takeover times after a SIGSTOP and after a SIGKILL are printed
(``-s``; docs/RELIABILITY.md).

The chaos is drawn from a seed, printed with the schedule and in any failure: set
``PAIJU_CHAOS_SEED`` to play the same schedule again (the moments are the same; how the bot's work
falls around them is not).
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from bot.cluster.workers import LEASE
from faketg.world import World
from tests.process.e2e.process import BotProcess, make_stage, storage_check
from tests.process.e2e.workers_stage import make_workers, world_of
from tests.process.reliability import chaos
from tests.process.reliability.chaos import SETTINGS, Ownership, People, Played, Table, Tap
from tests.process.reliability.players import paid_twice

GAMES = ("muxi", "showhand")
MIN_ROUNDS = 1  # every table plays at least this many, and finishes the round the chaos ended in
PLAY_TIMEOUT = 150.0  # seconds a table may take over all its rounds, the chaos included
FINISH_TIMEOUT = 75.0  # seconds a table may take, once the chaos is over, to finish its rounds
# A press answered just before its process was SIGKILLed (or paused past its lease) may be answered
# again by the next process (its answer's record was lost with it): Telegram refuses that second
# answer (400), and the person saw one answer: allowed (clearing the record before each answer would
# cost a write a press; within the second before a crash, a refused second try costs nothing seen).
ANSWERED_AGAIN_AFTER_A_CRASH_IS_A_FAULT = False


@dataclass
class Run:
    """One chaos run: its seed and schedule, what was done when, and what went wrong."""

    seed: int
    world: World
    schedule: list[str]
    journal: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        print(f"\nchaos seed {self.seed}; schedule:\n  " + "\n  ".join(self.schedule))

    def note(self, what: str) -> None:
        self.journal.append(f"{chaos.stamp()} {what}")

    async def play(
        self, people: People, tables: list[Table], played: Played, chaos_done: asyncio.Task
    ) -> None:
        """People play every table while the chaos goes on; once it is over, each table must finish
        the round it is in (and have played ``MIN_ROUNDS`` in all)."""
        playing = [asyncio.create_task(people.play(table, played, PLAY_TIMEOUT)) for table in tables]
        try:
            await chaos_done
            for table in tables:
                table.target = max(MIN_ROUNDS, (await played(table.chat_id))[0] + 1)
                table.finish_by = asyncio.get_running_loop().time() + FINISH_TIMEOUT
            self.note(f"chaos over; rounds each table must have played: {[t.target for t in tables]}")
            await asyncio.gather(*playing)
        except AssertionError as error:
            self.found.append(str(error))
        finally:
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)

    async def judge(
        self, people: People, tables: list[Table], played: Played, check_target: str, taps: list[Tap]
    ) -> None:
        """Every press answered once, no group over its budget, the books checked."""
        world = self.world
        await chaos.all_answered(world, people.presses)
        seen = chaos.answers(world, people.presses)
        if seen.open:
            self.found.append(
                f"{len(seen.open)} of {seen.pressed} presses never answered (spinning):\n"
                + chaos.press_details(world, people.presses, seen.open)
            )
        if seen.twice:
            self.found.append(
                "presses answered twice:\n" + chaos.press_details(world, people.presses, seen.twice)
            )
        again = {q for q in seen.refused if len(set(chaos.answered_by(taps, q))) > 1}
        if again:
            what = (
                "presses answered again by the process that came next (restarted, or the worker that"
                " took over): the first answer was taken just before its process was killed or"
                " paused, the second refused by Telegram (400)"
            )
            details = chaos.press_details(world, people.presses, sorted(again, key=int), taps)
            if ANSWERED_AGAIN_AFTER_A_CRASH_IS_A_FAULT:
                self.found.append(f"{what}:\n{details}")
            else:
                print(f"  {what} (allowed):\n{details}")
        if set(seen.refused) - again:
            refused = sorted(set(seen.refused) - again, key=int)
            self.found.append(
                "presses answered twice by one process, the second refused by Telegram (400):\n"
                + chaos.press_details(world, people.presses, refused, taps)
            )
        flagged = world.flagged_groups()
        if flagged:
            self.found.append(f"groups over 20 requests in 60 s: {flagged}")
            self.found += [
                f"the requests to {chat_id} in its busiest minute:\n{chaos.peak_window(world, chat_id)}"
                for chat_id in flagged
            ]
        check = storage_check(check_target)  # type: ignore[arg-type]  (a path or a URL)
        if check.returncode != 0:
            self.found.append(f"python -m storage check failed:\n{check.stdout}{check.stderr}")
        rounds = {table.chat_id: (await played(table.chat_id))[0] for table in tables}
        repressed = sum(1 for press in people.presses if chaos.first_of(people.presses, press) is not press)
        print(
            f"{time.monotonic() - self.started:.1f} s; rounds played {rounds}"
            f" (tables ended by the rules and opened again: {people.reopened});"
            f" {seen.pressed} presses ({repressed} pressed again while spinning), the slowest answered"
            f" {seen.slowest:.1f} s after it;"
            f" group peaks (requests in any 60 s) {world.group_peaks()}\n  " + "\n  ".join(self.journal)
        )
        print(
            f"  rounds ended at: {people.progress}\n"
            f"  the answers said: {dict(chaos.told(world, people.presses))}"
        )

    def report(self, logs: list[Path]) -> str:
        lines = [f"chaos seed {self.seed} (replay: PAIJU_CHAOS_SEED={self.seed})", "schedule:"]
        lines += [f"  {line}" for line in self.schedule]
        lines += ["what was done:", *(f"  {line}" for line in self.journal)]
        lines += ["found:", *(f"- {line}" for line in self.found)]
        for log in logs:
            lines += [f"--- {log.name}: its warnings and errors ---", chaos.log_excerpt(log)]
        return "\n".join(lines)


def tables_of(groups: dict[int, list[int]]) -> list[Table]:
    return [Table(chat_id, people, GAMES[i % 2]) for i, (chat_id, people) in enumerate(groups.items())]


async def test_one_bot_paused_and_killed_at_random_while_three_tables_play(tmp_path):
    seed = chaos.chaos_seed()
    rng = random.Random(seed)
    events = chaos.one_process_schedule(rng)
    world, groups = world_of(3)
    run = Run(seed, world, [str(event) for event in events])
    stage = await make_stage(world, tmp_path)
    stage.bot.extra_env.update(SETTINGS)
    taps: list[Tap] = []  # who sent what: one for each run of the bot's process

    async def tap(bot: BotProcess) -> None:
        taps.append(Tap(stage.emulator.url, "the bot" if not taps else "the bot started again"))
        bot.extra_env["PAIJU_BOT_API_URL"] = await taps[-1].start()

    await tap(stage.bot)
    await stage.bot.start()
    try:
        tables = tables_of(groups)
        for table in tables:
            await stage.driver.open_table(table.chat_id, table.people, table.game)
        people = People(world, stage.emulator.notify, random.Random(seed + 1))
        played = chaos.sqlite_played(stage.bot.database)
        chaos_done = asyncio.create_task(chaos.carry_out(events, [stage.bot], run.journal, tap))
        await run.play(people, tables, played, chaos_done)
        await run.judge(people, tables, played, str(stage.bot.database), taps)
        twice = paid_twice(str(stage.bot.database))
        if twice:
            run.found.append(f"rounds paid twice: {twice}")
        assert not run.found, run.report([stage.bot.log])
    finally:
        await stage.bot.stop()
        await stage.emulator.stop()
        for each in taps:
            await each.stop()


async def test_two_workers_one_paused_past_its_lease_one_killed_while_four_tables_play(
    tmp_path, postgres_url
):
    seed = chaos.chaos_seed()
    rng = random.Random(seed)
    short_hold = rng.uniform(0.5, 3.0)  # less than the lease: the worker keeps its partitions
    long_hold = rng.uniform(LEASE + 2, 12.0)  # past it: the other takes over
    gaps = [rng.uniform(1.0, 3.0) for _ in range(3)]
    short_target, killed_index = rng.randrange(2), rng.randrange(2)
    world, groups = world_of(4)
    run = Run(
        seed,
        world,
        [
            f"{gaps[0]:.1f} s after the tables open: worker {short_target} SIGSTOPped {short_hold:.1f} s",
            f"{gaps[1]:.1f} s later: the worker holding more tables SIGSTOPped {long_hold:.1f} s"
            " (or until the other owns every partition, if later)",
            f"once shared out again, {gaps[2]:.1f} s later: worker {killed_index} SIGKILLed, started again",
        ],
    )
    stage = await make_workers(world, tmp_path, postgres_url)
    conn, reading = await asyncpg.connect(postgres_url), await asyncpg.connect(postgres_url)
    owned = Ownership(conn)
    figures: dict[str, float] = {}
    taps: list[Tap] = []  # who sent what: one for each run of a worker's process

    async def start(worker: BotProcess | None = None) -> BotProcess:
        slot = len(stage.workers) if worker is None else stage.workers.index(worker)
        tap = Tap(stage.emulator.url, f"worker {slot}" + (" started again" if worker else ""))
        taps.append(tap)
        await tap.start()
        if worker is None:
            worker = await stage.start_worker(**SETTINGS, PAIJU_BOT_API_URL=tap.url)
        else:
            worker.extra_env["PAIJU_BOT_API_URL"] = tap.url
            await worker.start()
        tap.pid = pid_of(worker)
        tap.name = (await chaos.worker_names(owned, [worker]))[tap.pid]
        return worker

    watching: asyncio.Task | None = None
    try:
        workers = [await start(), await start()]
        watching = asyncio.create_task(owned.watch())
        await owned.until(lambda: chaos.shared(owned), "the partitions shared out", 30)
        tables = tables_of(groups)
        await asyncio.gather(*(stage.driver.open_table(t.chat_id, t.people, t.game) for t in tables))
        people = People(world, stage.emulator.notify, random.Random(seed + 1))
        played = chaos.postgres_played(reading)

        async def shared_out(after: str) -> None:
            since = time.monotonic()
            await owned.until(lambda: chaos.shared(owned), f"the partitions shared out {after}", 30)
            figures[f"shared out again {after}"] = time.monotonic() - since

        async def chaos_on_workers() -> None:
            await asyncio.sleep(gaps[0])  # (a drawn moment)
            before = await owned.owners()
            await hold(workers[short_target], short_hold, run)
            await asyncio.sleep(0.5)  # (then a look: did a partition change owner?)
            moved = [p for p, (owner, _) in (await owned.owners()).items() if owner != before[p][0]]
            run.note(f"partitions that changed owner in the short pause: {moved or 'none'}")

            await asyncio.sleep(gaps[1])
            names = await chaos.worker_names(owned, workers)
            doomed = await busiest(owned, workers, names, tables)
            survivor = workers[1 - workers.index(doomed)]
            pids = chaos.stop(doomed)
            stopped = time.monotonic()
            run.note(f"SIGSTOP {pids} (worker {workers.index(doomed)})")
            try:
                figures["takeover after SIGSTOP"] = await owned.takeover(
                    names[pid_of(survivor)], stopped, timeout=30
                )
                run.note("the other worker owns every partition")
                await asyncio.sleep(max(0.0, long_hold - (time.monotonic() - stopped)))  # (held)
            finally:
                chaos.resume(pids)
                run.note(f"SIGCONT {pids} after {time.monotonic() - stopped:.1f} s")
            await shared_out("after the SIGCONT")

            await asyncio.sleep(gaps[2])
            names = await chaos.worker_names(owned, workers)
            victim, survivor = workers[killed_index], workers[1 - killed_index]
            run.note(f"SIGKILL {pid_of(victim)} (worker {killed_index})")
            await victim.kill()
            killed = time.monotonic()
            figures["takeover after SIGKILL"] = await owned.takeover(names[pid_of(survivor)], killed, 30)
            run.note("the other worker owns every partition")
            await start(victim)
            run.note(f"started again: {pid_of(victim)}")
            await shared_out("after the restart")

        await run.play(people, tables, played, asyncio.create_task(chaos_on_workers()))
        await run.judge(people, tables, played, postgres_url, taps)
        group_of = {chat: group for group, people in groups.items() for chat in (group, *people)}
        trespasses = chaos.trespasses(taps, owned, group_of, len(await owned.owners()))
        if trespasses:
            run.found.append(
                "requests a worker sent for a chat whose partition another worker had claimed:\n"
                + "\n".join(f"  {line}" for line in trespasses)
            )
        twice = await chaos.postgres_paid_twice(conn)
        if twice:
            run.found.append(f"rounds paid twice: {twice}")
        print("  takeover: " + ", ".join(f"{what} {seconds:.2f} s" for what, seconds in figures.items()))
        assert not run.found, run.report([worker.log for worker in workers])
        assert "takeover after SIGSTOP" in figures and "takeover after SIGKILL" in figures, figures
    finally:
        if watching is not None:
            watching.cancel()
        await stage.stop()
        for tap in taps:
            await tap.stop()
        await conn.close()
        await reading.close()


def pid_of(worker: BotProcess) -> int:
    assert worker.process is not None
    return worker.process.pid


async def hold(worker: BotProcess, seconds: float, run: Run) -> None:
    pids = chaos.stop(worker)
    run.note(f"SIGSTOP {pids}")
    try:
        await asyncio.sleep(seconds)  # (held for its drawn time)
    finally:
        chaos.resume(pids)
        run.note(f"SIGCONT {pids}")


async def busiest(
    owned: Ownership, workers: list[BotProcess], names: dict[int, str], tables: list[Table]
) -> BotProcess:
    """The worker whose partitions hold the most tables (a pause there stalls most people)."""
    owners = await owned.owners()

    def held(worker: BotProcess) -> int:
        return sum(1 for t in tables if owners[t.chat_id % len(owners)][0] == names[pid_of(worker)])

    return max(workers, key=held)
