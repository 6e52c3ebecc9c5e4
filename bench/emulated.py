"""Benchmark 5: the whole bot process through the HTTP emulator, 10, 100 and 1,000 tables at once.

The bot runs as a real subprocess (``tests.e2e.process.BotProcess``: ``python -m bot`` with
``PAIJU_BOT_API_URL`` pointing at ``faketg.server.Emulator`` on 127.0.0.1), with the presenter as
shipped (an edit at most every 1 s, 15 table requests a minute per group). In this process the
emulator serves the Bot API and the simulated people (``bench.people``) play every table at once,
each table's people pressing as soon as the bot answered their previous press, for a fixed window;
then they stop, and presses still unanswered after a short drain are counted.

Measured: updates handled per second in the window; p50/p99 from an update to the bot's request
that shows it was handled (a press: its ``answerCallbackQuery``, which the bot sends after applying
the action, saving it, updating the DMs and editing or scheduling the table message; ``/newgame``:
the table message); the bot process's CPU seconds per 1,000 updates (``/proc/<pid>/stat``) and its
peak RSS (``VmHWM``); the driver's own CPU, since both share the machine's two cores.

Two variants: as shipped (``python -m bot``, PTB's AIORateLimiter on: 30 requests a second that name
a chat, 20 a minute per group) and ``bench.unlimited_bot`` (the same bot without it). People press
as fast as the bot answers (a closed loop: with one press in flight per table, the latency is the
number of tables over the rate, Little's law), and in one more run at a fast human pace (each press
after 0.2 to 1 s of thought, as benchmark 6's "fast"): the latency of a bot that is busy, not
saturated.

    python -m bench.emulated [--quick] [--tables 10,100,1000] [--variant shipped|unlimited] [--profile DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.people import (
    WALLET,
    BenchWorld,
    Front,
    Session,
    TableSpec,
    Tally,
    Window,
    play_tables,
    seat_people,
    table_specs,
)
from bench.report import Result, markdown_table, percentile
from faketg.server import Emulator
from faketg.world import JSON
from tests.e2e.process import BotProcess

TARGET_RATE, TARGET_P99_MS, TARGET_RSS_MB = 500, 50, 200
PACES: dict[str, tuple[float, float] | None] = {"full speed": None, "fast pace": (0.2, 1.0)}
QUICK, FULL = (4.0, 2.0, 1.0), (45.0, 15.0, 5.0)  # seconds: opening the tables (at most), window, drain
VARIANTS = {
    "shipped": (("bot",), "as shipped (`python -m bot`, AIORateLimiter on)"),
    "unlimited": (("bench.unlimited_bot",), "without AIORateLimiter (`bench.unlimited_bot`)"),
}
BENCH_ENV = {
    "PAIJU_EDIT_SECONDS": "1",  # the shipped defaults, not the e2e tests' 0 and 1000
    "PAIJU_TABLE_REQUESTS_PER_MINUTE": "15",
    "PAIJU_START_GRANT": str(WALLET),
}


@dataclass
class BenchBotProcess(BotProcess):
    """``BotProcess`` running ``python -m <module> [args]``; only ``start`` differs (it runs ``bot``)."""

    module: tuple[str, ...] = ("bot",)

    async def start(self, timeout: float = 30.0) -> None:
        polls = self.emulator.polls
        with self.log.open("a") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                *self.module,
                cwd=self.database.parent,
                env=self.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        give_up = time.monotonic() + timeout
        while self.emulator.polls <= polls:
            if self.process.returncode is not None or time.monotonic() > give_up:
                raise RuntimeError(f"the bot did not start: {self.log.read_text()[-2000:]}")
            await asyncio.sleep(0.05)


async def _profile(pid: int, seconds: float, out: Path) -> asyncio.subprocess.Process:
    """py-spy sampling the bot process for the window (``pip install py-spy``), collapsed stacks."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    command = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200"]
    command += ["--format", "raw", "--output", str(out), "--gil"]
    return await asyncio.create_subprocess_exec(
        *command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system


@dataclass
class Load:
    tables: int
    variant: str
    pace: str
    seconds: float
    setup_limit: float
    drain: float
    session: Session = field(default_factory=Session)
    in_window: int = 0
    bot_cpu: float = 0.0
    driver_cpu: float = 0.0
    rss_mb: float = 0.0
    unanswered: int = 0
    group_peak: int = 0
    bot_requests: int = 0

    @property
    def tally(self) -> Tally:
        return self.session.play

    @property
    def rate(self) -> float:
        return self.in_window / self.seconds

    def ms(self, share: float) -> float:
        return percentile(self.tally.latencies, share) * 1000


async def load(
    tables: int,
    variant: str,
    timing: tuple[float, float, float],
    profile: Path | None = None,
    pace: str = "full speed",
) -> Load:
    """One run: ``timing`` is (the limit for opening the tables, the measured window, the drain)."""
    world, specs = BenchWorld(), table_specs(tables)
    seat_people(world, specs)
    emulator = Emulator(world)
    await emulator.start()
    setup_limit, seconds, drain = timing
    result = Load(tables, variant, pace, seconds, setup_limit, drain)
    with tempfile.TemporaryDirectory() as tmp:
        process = BenchBotProcess(
            emulator,
            Path(tmp) / "paiju.sqlite3",
            Path(tmp) / "bot.log",
            dict(BENCH_ENV),
            module=VARIANTS[variant][0],
        )
        await process.start()
        assert process.process is not None
        pid = process.process.pid
        try:
            await _play(world, emulator, specs, pid, result, profile)
        finally:
            result.rss_mb = peak_rss_mb(pid)
            await process.kill()
            await emulator.release_polls()  # a long poll left open would hold up the server's shutdown
            await emulator.stop()
    result.group_peak = max(world.group_peaks().values(), default=0)
    result.bot_requests = sum(1 for request in world.requests if request.method != "getUpdates")
    return result


async def _play(
    world: BenchWorld,
    emulator: Emulator,
    specs: list[TableSpec],
    pid: int,
    result: Load,
    profile: Path | None,
) -> None:
    async def deliver(_update: JSON) -> None:
        await emulator.notify()  # the update is already in the world's queue: wake the bot's poll

    window, session = Window(result.setup_limit), Session()
    front = Front(world, deliver, Tally(), timeout=result.setup_limit + result.seconds + result.drain)
    pace, rng = PACES[result.pace], random.Random(5)

    async def think() -> None:
        if pace is not None:
            await asyncio.sleep(rng.uniform(*pace))

    playing = asyncio.create_task(play_tables(front, specs, window, result.seconds, session, pause=think))
    began = asyncio.create_task(window.begun.wait())
    await asyncio.wait({playing, began}, return_when=asyncio.FIRST_COMPLETED)
    bot_cpu, driver_cpu = cpu_seconds(pid), own_cpu()
    spy = await _profile(pid, result.seconds, profile) if profile else None
    if session.opened or not window.begun.is_set():  # no table opened in time: no window to wait for
        await asyncio.sleep(max(0.0, window.end - time.perf_counter()))
    result.bot_cpu, result.driver_cpu = cpu_seconds(pid) - bot_cpu, own_cpu() - driver_cpu
    if spy is not None:
        await spy.wait()
    await asyncio.wait({playing}, timeout=result.drain)
    result.unanswered = session.play.unanswered + world.waiting()
    for task in (playing, began):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    result.session = session
    session.play.rounds = session.rounds()
    result.in_window = session.play.within(window.started, window.end)


def rows(runs: list[Load]) -> list[Result]:
    results = []
    for run in runs:
        label = f"{run.tables:,} tables, {VARIANTS[run.variant][1]}"
        if run.pace != "full speed":
            label += f", {run.pace} ({PACES[run.pace][0]:g}–{PACES[run.pace][1]:g} s per press)"  # type: ignore[index]
        unlimited, paced = run.variant == "unlimited", PACES[run.pace]
        per_thousand = run.bot_cpu / run.in_window * 1000 if run.in_window else float("nan")
        rounds = ", ".join(f"{count} {game}" for game, count in sorted(run.tally.rounds.items()))
        setup = run.session.setup
        joins = setup.by_kind.get("join", [])
        results += [
            Result(
                "5 bot process via emulator",
                f"{label}: opening them all at once (`/newgame`, then everyone presses 加入), "
                f"limit {run.setup_limit:g} s; join press → answer p50 / p99",
                f"{run.session.opened:,}/{run.tables:,} opened in {run.session.setup_seconds:.1f} s; "
                f"{percentile(joins, 0.5) * 1000:,.0f} ms / {percentile(joins, 0.99) * 1000:,.0f} ms",
            ),
            Result(
                "5 bot process via emulator",
                f"{label}: updates handled/s in a {run.seconds:g} s window (rounds finished: "
                f"{rounds or 'none'}; {run.tally.refused} refused, {run.unanswered} unanswered at the end, "
                f"{run.tally.resyncs} resyncs)",
                f"{run.rate:,.0f} updates/s",
                f"≥ {TARGET_RATE}/s" if paced is None else "",
                run.rate >= TARGET_RATE if paced is None else None,
            ),
            Result(
                "5 bot process via emulator",
                f"{label}: update → the bot's answer, p50 / p99",
                f"{run.ms(0.5):,.1f} ms / {run.ms(0.99):,.1f} ms" if run.tally.updates else "nothing handled",
                f"p99 < {TARGET_P99_MS} ms" if run.tables == 100 and paced is None else "",
                bool(run.tally.updates) and run.ms(0.99) < TARGET_P99_MS
                if run.tables == 100 and paced is None
                else None,
            ),
            Result(
                "5 bot process via emulator",
                f"{label}: bot CPU per 1,000 updates; bot CPU use; driver (emulator + people) CPU use",
                f"{per_thousand:.2f} s; {run.bot_cpu / run.seconds:.0%} of a core; "
                f"{run.driver_cpu / run.seconds:.0%} of a core",
            ),
            Result(
                "5 bot process via emulator",
                f"{label}: peak RSS of the bot process (VmHWM)",
                f"{run.rss_mb:,.0f} MB",
                f"< {TARGET_RSS_MB} MB" if run.tables == 1000 else "",
                run.rss_mb < TARGET_RSS_MB if run.tables == 1000 else None,
            ),
        ]
        if not unlimited:
            results.append(
                Result(
                    "5 bot process via emulator",
                    f"{label}: most bot requests to one group in any 60 s of the run "
                    f"({run.bot_requests:,} Bot API requests in all)",
                    f"{run.group_peak}",
                    "≤ 20",
                    run.group_peak <= 20,
                )
            )
    return results


async def measure(
    plan: list[tuple[str, int, str]], timing: tuple[float, float, float], profile: Path | None = None
) -> list[Load]:
    runs = []
    for variant, tables, pace in plan:
        out = profile / f"bot-{variant}-{tables}-{pace.replace(' ', '-')}.txt" if profile else None
        runs.append(await load(tables, variant, timing, out, pace))
    return runs


def run(
    quick: bool,
    sizes: list[int] | None = None,
    variants: list[str] | None = None,
    profile: Path | None = None,
) -> list[Result]:
    """Benchmark 5 for ``python -m bench``. Quick: the shipped bot at 10 tables and the unlimited one
    at 10 and 100 (opening 1,000 tables alone takes longer than a quick run may). Both also run the
    unlimited bot at 100 tables at a fast human pace."""
    if sizes is None and variants is None and quick:
        plan = [
            ("shipped", 10, "full speed"),
            ("unlimited", 10, "full speed"),
            ("unlimited", 100, "full speed"),
        ]
    else:
        plan = [(v, n, "full speed") for v in variants or list(VARIANTS) for n in sizes or [10, 100, 1000]]
    if sizes is None and variants is None:
        plan.append(("unlimited", 100, "fast pace"))
    runs = asyncio.run(measure(plan, QUICK if quick else FULL, profile))
    return rows(runs)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.emulated", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tables", help="comma-separated table counts (default 10,100,1000)")
    parser.add_argument("--variant", choices=list(VARIANTS), action="append")
    parser.add_argument(
        "--profile", type=Path, help="a folder for py-spy's collapsed stacks of the bot process"
    )
    args = parser.parse_args()
    sizes = [int(part) for part in args.tables.split(",")] if args.tables else None
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    print(markdown_table(run(args.quick, sizes, args.variant, args.profile)))


if __name__ == "__main__":
    main()
