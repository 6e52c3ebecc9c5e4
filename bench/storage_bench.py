"""Bookings per second of a 5-person muxi settlement through ``Store.commit_action``.

One booking = one ``commit_action`` with 4 ``Paid`` events (the banker against each of 4 players,
8 ledger legs) and a ~2 KB state JSON, on a temporary SQLite file. Reports throughput and the
p50/p99 latency of one booking, sequentially and with concurrent tables, as markdown table rows.

    python -m bench.storage_bench [--quick] [--bookings N] [--tables T] [--synchronous FULL|NORMAL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.report import Result, percentile
from games.events import Paid, PayReason
from storage import Store, open_store

PEOPLE = (1, 2, 3, 4, 5)  # 1 is the banker


def muxi_state(version: int) -> dict[str, object]:
    """A plausible saved muxi table of about 2 KB."""
    seats = [
        {
            "person": p,
            "name": f"玩家{p}",
            "balance": 1_000_000 + p,
            "cards": ["AS", "10H", "BJ"][: 2 + p % 2],
            "drew": p % 2 == 0,
            "shown": False,
            "result": None,
            "history": [{"round": r, "net": (r * p) % 700 - 350} for r in range(11)],
        }
        for p in PEOPLE
    ]
    return {
        "game": "muxi",
        "version": version,
        "phase": "settling",
        "round_no": version // 10,
        "base": 100,
        "banker": 1,
        "seats": seats,
        "deck_left": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS 2H 3H 4H 5H 6H 7H 8H 9H 2D 3D 4D 5D 6D",
        "commitment": "3f9a" + "0" * 56 + "c21f",
        "timer": version,
    }


def settlement(rng: random.Random) -> list[Paid]:
    payments = []
    for player in PEOPLE[1:]:
        amount = 100 * rng.randint(1, 8)
        payer, payee = (1, player) if rng.random() < 0.5 else (player, 1)
        payments.append(Paid(payer, payee, amount, PayReason.SETTLEMENT))
    return payments


async def book_table(store: Store, chat_id: int, bookings: int, rng: random.Random) -> list[float]:
    """Book ``bookings`` settlements at one table, one after the other; return each latency (s)."""
    table = await store.create_table(chat_id, "muxi", muxi_state(0))
    latencies = []
    for seq in range(1, bookings + 1):
        payments, state = settlement(rng), muxi_state(seq)
        started = time.perf_counter()
        booked = await store.commit_action(
            table.id, round_no=seq // 10, action_seq=seq, payments=payments, state=state, deadline=None
        )
        latencies.append(time.perf_counter() - started)
        assert booked
    return latencies


@dataclass(frozen=True)
class StorageRun:
    count: int
    concurrency: int
    elapsed: float
    latencies: list[float]  # sorted, seconds
    synchronous: str

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000

    @property
    def p99_ms(self) -> float:
        return percentile(self.latencies, 0.99) * 1000


def _set_synchronous(conn: sqlite3.Connection, mode: str) -> None:
    """(On the writer's thread, on its connection.)"""
    conn.execute(f"PRAGMA synchronous = {mode}")


async def run(bookings: int, tables: int, synchronous: str) -> list[StorageRun]:
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(Path(tmp) / "bench.sqlite3", start_grant=10**12)
        # A benchmark-only switch, to show what the durability setting costs.
        await store.backend.writer.on_connection(_set_synchronous, synchronous)
        for person in PEOPLE:
            await store.ensure_person(person, f"玩家{person}")
        rng = random.Random(1)
        await book_table(store, -1, 20, rng)  # warm-up, its own chat
        chat = -100
        for concurrency in (1, tables):
            per_table = max(1, bookings // concurrency)
            started = time.perf_counter()
            results = await asyncio.gather(
                *(book_table(store, chat - i, per_table, rng) for i in range(concurrency))
            )
            elapsed = time.perf_counter() - started
            chat -= concurrency
            latencies = sorted(x for r in results for x in r)
            runs.append(StorageRun(len(latencies), concurrency, elapsed, latencies, synchronous))
            await _close_all(store)
        report = await store.check()
        await store.close()
        if not report.ok:
            raise SystemExit("integrity check failed after the benchmark:\n" + report.render())
    return runs


async def _close_all(store: Store) -> None:
    for table in await store.open_tables():
        await store.commit_action(
            table.id, round_no=0, action_seq=table.version + 1, state={}, deadline=None, closed=True
        )


def _state_kb() -> float:
    return len(json.dumps(muxi_state(1000), ensure_ascii=False, separators=(",", ":")).encode()) / 1024


def _row(run: StorageRun) -> str:
    return (
        f"| storage commit_action, muxi 5 people (4 Paid, {_state_kb():.1f} KB state) "
        f"| {run.count} bookings, {run.concurrency} table(s) at once, synchronous={run.synchronous} "
        f"| {run.count / run.elapsed:,.0f} bookings/s | p50 {run.p50_ms:.2f} ms | p99 {run.p99_ms:.2f} ms |"
    )


def benchmark(quick: bool) -> list[Result]:
    """Benchmark 3 for ``python -m bench``: sequential and 8 tables at once, durable (FULL) and NORMAL."""
    bookings = 300 if quick else 3000
    results = []
    for synchronous in ("FULL", "NORMAL"):
        for one in asyncio.run(run(bookings, 8, synchronous)):
            results.append(
                Result(
                    "3 storage",
                    f"`commit_action` of a 5-person muxi settlement (4 Paid, {_state_kb():.1f} KB state), "
                    f"{one.concurrency} table(s) at once, synchronous={synchronous}",
                    f"{one.count / one.elapsed:,.0f} bookings/s; "
                    f"p50 {one.p50_ms:.2f} ms, p99 {one.p99_ms:.2f} ms",
                )
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.storage_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few hundred bookings instead of thousands")
    parser.add_argument("--bookings", type=int, help="bookings per run (default 3000, quick 300)")
    parser.add_argument("--tables", type=int, default=8, help="tables booking at once in the 2nd run")
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL")
    args = parser.parse_args()
    bookings = args.bookings or (300 if args.quick else 3000)
    print("| benchmark | run | throughput | p50 | p99 |")
    print("| --- | --- | --- | --- | --- |")
    for one in asyncio.run(run(bookings, args.tables, args.synchronous)):
        print(_row(one))


if __name__ == "__main__":
    main()
