"""Benchmark 9: past one process (issue 29): PostgreSQL and several workers.

(a) Bench 5's load at a human pace (the same crowd, per-chat limits, ``--tables`` tables, muxi and
    showhand in turn) on one worker on SQLite, one on PostgreSQL, two on PostgreSQL, one after the
    other: press → answer and turn → prompt p50 / p99, rounds a minute, the CPU of each worker.
    The workers take updates by polling here (the emulator's ``getUpdates``): one of them polls for
    all and puts them in the inbox, each owner hands its own over.
(b) Takeover: two workers on PostgreSQL; one is SIGKILLed and the time until the other owns every
    partition is read from the database; the killed one is started again and the two share out
    again before the next kill (``--kills``, at least 10).
(c) The inbox's lag (from its notice to the owner handing the update over), p50 / p99, from the
    workers' own histogram (``paiju_inbox_lag_seconds``), over run (a)'s two workers.
(d) Capacity (``--capacity 50,100,…``): (a)'s load at each table count in turn, for each
    configuration, until one misses a target (press → answer p99 < 300 ms, turn start → prompt
    p99 < 1.5 s): the most tables each held, and 2 workers / 1 worker on PostgreSQL.

Each configuration gets a new empty database on the server ``--server-url`` names (a URL to its
``postgres`` database with the right to create databases; a throwaway cluster will do:
``initdb -D /tmp/pg -U postgres --auth=trust && pg_ctl -D /tmp/pg -o "-k /tmp -c listen_addresses=''" start``,
then ``--server-url 'postgresql://postgres@/postgres?host=/tmp'``).

    python -m bench.workers --server-url URL [--tables N] [--kills N] [--quick]
    python -m bench.workers --server-url URL --capacity 50,100,200 [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import secrets
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import asyncpg

from bench.emulated import FULL, GAMES, QUICK, Scenario, Timing
from bench.figures import Figures, Spread
from bench.people import table_specs
from bench.report import Result, markdown_table
from bench.session import Session
from bench.stage import BotProcess as Process
from bench.stage import BotSpec

BENCH = "9 workers on PostgreSQL"
KILLS = 10


@asynccontextmanager
async def fresh_database(server: str) -> AsyncIterator[str]:
    """A new empty database on ``server`` (dropped after): its URL."""
    name = f"paiju_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(server)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    parts = urlsplit(server)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        admin = await asyncpg.connect(server)
        try:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        finally:
            await admin.close()


async def owners(url: str) -> dict[str | None, int]:
    """Partitions owned, by owner (the database's word, whatever the workers think)."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT owner, count(*) FROM partitions GROUP BY owner")
    finally:
        await conn.close()
    return {row[0]: row[1] for row in rows}


async def shared_out(url: str, workers: int, timeout: float = 60.0) -> float:
    """Wait until ``workers`` owners hold every partition, evenly; the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        held = await owners(url)
        counts = [count for owner, count in held.items() if owner is not None]
        if len(counts) == workers and max(counts) - min(counts) <= 1 and None not in held:
            return time.monotonic() - started
        await asyncio.sleep(0.1)
    raise TimeoutError(f"the partitions were not shared out among {workers} workers: {await owners(url)}")


def lag_histogram(text: str) -> list[tuple[float, float]]:
    """``paiju_inbox_lag_seconds`` buckets of a /metrics text: (upper bound, count)."""
    found = re.findall(r'^paiju_inbox_lag_seconds_bucket\{le="([^"]+)"\} ([0-9.e+]+)$', text, re.MULTILINE)
    return [(float("inf") if bound == "+Inf" else float(bound), float(count)) for bound, count in found]


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """The upper bound of the bucket holding the ``q`` quantile (a histogram's resolution)."""
    total = buckets[-1][1] if buckets else 0.0
    for bound, count in buckets:
        if total and count >= q * total:
            return bound
    return float("nan")


def pin_to(pid: int, core: int) -> None:
    """Every thread of process ``pid`` on ``core`` alone (threads it starts later inherit it)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(task.name), {core})


async def load(
    scenario: Scenario, spec: BotSpec, workers: int, url: str | None, *, pin: bool = False
) -> tuple[Session, list[float], list[str]]:
    """Run (a)'s load on one configuration; the session, the CPU of each worker (share of a core),
    and each worker's /metrics text. ``pin``: worker ``i`` runs on core ``i`` alone (the emulator,
    the crowd and PostgreSQL where the scheduler puts them)."""
    timing = scenario.timing
    specs = table_specs(scenario.tables, games=GAMES)
    ports = [free_port() for _ in range(workers)]
    async with Session(
        scenario.tables, scenario.make_limits(), with_port(spec, ports[0]), specs=specs
    ) as run:
        for port in ports[1:]:  # the first polls for all (it started first)
            worker = Process(
                run.emulator, run.database, run.database.with_suffix(f".{port}.log"), with_port(spec, port)
            )
            await worker.start()
            run.bots.append(worker)
        if pin:
            for index, bot in enumerate(run.bots):
                assert bot.process is not None
                pin_to(bot.process.pid, index % (os.cpu_count() or 1))
        if url is not None:
            await shared_out(url, workers)
        assert run.crowd is not None
        opened = run.world.clock()  # (the workers' sharing out took some of the time since t0)
        run.crowd.open_tables(timing.ramp)
        await run.until(opened + timing.ramp + timing.warmup)
        window = await run.measure(timing.window)
        await run.finish(timing.drain)
        cpu = [seconds / (window.end - window.start) for seconds in run.cpu_by_bot[window]]
        texts = [await metrics_text(port) for port in ports]
        return run, cpu, texts


def with_port(spec: BotSpec, port: int) -> BotSpec:
    return replace(spec, env=(*spec.env, ("PAIJU_HTTP_PORT", str(port)), ("PAIJU_METRICS", "local")))


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def metrics_text(port: int) -> str:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/metrics") as answer:
        return await answer.text()


CONFIGURATIONS = (
    ("1 worker on SQLite", 1, False),
    ("1 worker on PostgreSQL", 1, True),
    ("2 workers on PostgreSQL", 2, True),
)  # (label, workers, on PostgreSQL)


def latencies(run: Session, figures: Figures) -> tuple[Spread, Spread]:
    """Press → answer, and turn start → prompt visible (every kind), in the measured window."""
    window = next(iter(run.cpu_by_bot))
    by_kind, _ = figures.prompts_by_kind(window)
    return figures.answers(window), Spread.merged(by_kind.values())


def held(answers: Spread, prompts: Spread, targets: dict[str, float]) -> bool:
    """Both p99 targets met (benchmark 5's, ``Scenario.targets``)."""
    return answers.below(0.99, targets["answer_p99_ms"]) and prompts.below(
        0.99, targets["prompt_p99_s"] * 1000
    )


def rows_of(label: str, run: Session, cpu: list[float]) -> list[Result]:
    figures = run.figures()
    window = next(iter(run.cpu_by_bot))
    rounds = figures.rounds(window)
    per_minute = sum(rounds.values()) / window.minutes
    answers, prompts = latencies(run, figures)
    workers = ", ".join(f"{share:.0%}" for share in cpu)
    per_press = sum(run.cpu_by_bot[window]) / max(1, len(answers.values)) * 1000
    return [
        Result(BENCH, f"(a) {label}: rounds a minute", f"{per_minute:,.1f}"),
        Result(BENCH, f"(a) {label}: press → answer p50 / p99", answers.text(), "p99 < 300 ms"),
        Result(BENCH, f"(a) {label}: turn start → prompt visible p50 / p99", prompts.text(), "p99 < 1.5 s"),
        Result(BENCH, f"(a) {label}: CPU of each worker (share of a core)", workers),
        Result(
            BENCH, f"(a) {label}: the workers' CPU per press answered in the window", f"{per_press:.1f} ms"
        ),
    ]


@asynccontextmanager
async def configured(server: str, base: BotSpec, postgres: bool) -> AsyncIterator[tuple[BotSpec, str | None]]:
    """The bot's spec for one configuration, and its database's URL (a new one on PostgreSQL)."""
    if not postgres:
        yield base, None
        return
    async with fresh_database(server) as url:
        yield replace(base, env=(*base.env, ("PAIJU_DATABASE_URL", url))), url


async def run_all(server: str, scenario: Scenario, kills: int, root: Path | None) -> list[Result]:
    base = BotSpec() if root is None else BotSpec(root=root)
    results: list[Result] = []
    cpu_of: dict[int, list[float]] = {}
    for label, workers, postgres in CONFIGURATIONS:
        async with configured(server, base, postgres) as (spec, url):
            run, cpu, texts = await load(scenario, spec, workers, url)
        results += rows_of(f"{scenario.tables:,} tables, {label}", run, cpu)
        if not postgres:
            continue
        cpu_of[workers] = cpu
        if workers == 2:
            ratio = sum(cpu) / sum(cpu_of[1]) if sum(cpu_of.get(1, ())) else float("nan")
            results.append(Result(BENCH, "(a) CPU of 2 workers / 1 worker at the same load", f"{ratio:.2f}×"))
            buckets = [lag_histogram(text) for text in texts]
            merged = (
                [(bound, sum(b[i][1] for b in buckets)) for i, (bound, _) in enumerate(buckets[0])]
                if buckets and buckets[0]
                else []
            )
            results.append(
                Result(
                    BENCH,
                    "(c) inbox notice → hand-over, p50 / p99 (histogram bucket bounds)",
                    f"≤ {quantile(merged, 0.5) * 1000:g} / ≤ {quantile(merged, 0.99) * 1000:g} ms",
                )
            )
    results += await takeovers(server, base, kills)
    return results


async def capacity(
    server: str, scenario: Scenario, counts: list[int], root: Path | None, *, pin: bool = False
) -> list[Result]:
    """(d): for each configuration, (a)'s load at each of ``counts`` tables in turn until one misses
    a target; the most tables each held (with the latencies of each try), and 2 workers / 1."""
    base = BotSpec() if root is None else BotSpec(root=root)
    results: list[Result] = []
    most: dict[str, int] = {}
    for label, workers, postgres in CONFIGURATIONS:
        most[label] = 0
        for tables in counts:
            async with configured(server, base, postgres) as (spec, url):
                run, cpu, _ = await load(replace(scenario, tables=tables), spec, workers, url, pin=pin)
            answers, prompts = latencies(run, run.figures())
            kept = held(answers, prompts, scenario.targets)
            results.append(
                Result(
                    BENCH,
                    f"(d) {tables:,} tables, {label}: answer p99 / prompt p99 / CPU of each worker",
                    f"{answers.show(0.99)} / {prompts.show(0.99)}"
                    f" / {', '.join(f'{share:.0%}' for share in cpu)}",
                    "< 300 ms / < 1.5 s",
                    kept,
                )
            )
            if not kept:
                break
            most[label] = tables
    for label, _, _ in CONFIGURATIONS:
        results.append(
            Result(BENCH, f"(d) tables held, {label}", f"{most[label]:,}" if most[label] else "none tried")
        )
    one, two = most["1 worker on PostgreSQL"], most["2 workers on PostgreSQL"]
    results.append(
        Result(
            BENCH,
            "(d) tables held, 2 workers / 1 worker on PostgreSQL",
            f"{two / one:.2f}×" if one else "n/a",
            "≥ 1.6×",
            bool(one) and two / one >= 1.6,
        )
    )
    return results


async def takeovers(server: str, base: BotSpec, kills: int) -> list[Result]:
    """(b): ``kills`` SIGKILLs of one of two workers (each in turn), each timed until the other
    owns every partition; the killed one is started again, and the two share out again."""
    times: list[float] = []
    async with fresh_database(server) as url:
        spec = replace(base, env=(*base.env, ("PAIJU_DATABASE_URL", url)))
        ports = [free_port(), free_port()]
        async with Session(10, None, with_port(spec, ports[0]), specs=table_specs(10, games=GAMES)) as run:
            second = Process(
                run.emulator, run.database, run.database.with_suffix(".1.log"), with_port(spec, ports[1])
            )
            await second.start()
            run.bots.append(second)
            await shared_out(url, 2)
            for kill in range(kills):
                which = kill % 2
                await run.bots[which].kill()
                started = time.monotonic()
                while True:
                    held = await owners(url)
                    if len(held) == 1 and None not in held:  # one owner of every partition
                        break
                    if time.monotonic() - started > 60:
                        raise TimeoutError("no takeover in 60 s")
                    await asyncio.sleep(0.05)
                times.append(time.monotonic() - started)
                log = run.database.with_suffix(f".again{kill}.log")
                run.bots[which] = Process(run.emulator, run.database, log, with_port(spec, ports[which]))
                await run.bots[which].start()
                await shared_out(url, 2)
    return [
        Result(
            BENCH,
            f"(b) SIGKILL of one of two workers → the other owns every partition, {kills} kills: p50 / max",
            f"{statistics.median(times):.2f} / {max(times):.2f} s",
            "< 10 s",
            max(times) < 10,
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.workers", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--server-url",
        required=True,
        help="a postgresql:// URL to a database of a server where this may create databases",
    )
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--kills", type=int, default=KILLS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--capacity", help="table counts to try in turn, e.g. 50,100,200: run (d) only")
    parser.add_argument("--bot-root", help="run the bot from this source tree (default: this one)")
    parser.add_argument("--pin", action="store_true", help="(d): worker i on core i alone")
    arguments = parser.parse_args()
    base = (QUICK if arguments.quick else FULL)["per-chat"]
    timing = Timing(ramp=10, warmup=20, window=60, drain=15) if not arguments.quick else base.timing
    scenario = replace(base, title="(a)", tables=arguments.tables, timing=timing)
    root = Path(arguments.bot_root).resolve() if arguments.bot_root else None
    if arguments.capacity:
        counts = sorted(int(count) for count in arguments.capacity.split(","))
        found = asyncio.run(capacity(arguments.server_url, scenario, counts, root, pin=arguments.pin))
        print(markdown_table(found))
    else:
        print(
            markdown_table(
                asyncio.run(run_all(arguments.server_url, scenario, max(1, arguments.kills), root))
            )
        )


if __name__ == "__main__":
    main()
