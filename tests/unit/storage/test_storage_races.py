"""Writes side by side on PostgreSQL (several lanes, several workers): a write that looked before
another committed, then meets its row, ends as the bot expects (a refused seat, a bonus paid
already), never as a raw constraint error. The other write is held open on a connection of the
test's own until the store's is seen waiting for it, then committed."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from storage import SeatRefused, open_store
from tests.postgres_server import waits_on_a_lock
from tests.unit.storage.storage_helpers import STATE, FakeClock
from tests.waiting import until


@pytest.fixture
async def pg_store(postgres_url: str, clock: FakeClock):
    store = await open_store(postgres_url, now=clock)
    try:
        yield store
    finally:
        await store.close()


async def committed_while_waited_for(postgres_url: str, holding: str, args: tuple, waiting) -> object:
    """Run ``holding`` in a transaction left open, start ``waiting`` (a coroutine), commit once it
    waits for that transaction's row lock; what ``waiting`` returned or raised."""
    conn = await asyncpg.connect(postgres_url)
    try:
        async with conn.transaction():
            await conn.execute(holding, *args)
            task = asyncio.ensure_future(waiting)
            watcher = await asyncpg.connect(postgres_url)
            try:
                await until(lambda: waits_on_a_lock(watcher), "the store's write waits for the other")
            finally:
                await watcher.close()
        (outcome,) = await asyncio.gather(task, return_exceptions=True)
        return outcome
    finally:
        await conn.close()


async def test_a_seat_taken_at_another_table_meanwhile_refuses_the_seat(pg_store, postgres_url):
    for person in (1, 2):
        await pg_store.ensure_person(person, f"p{person}")
    here = await pg_store.create_table(-1, "showhand", STATE)
    there = await pg_store.create_table(-2, "showhand", STATE)
    seating = pg_store.commit_action(
        here.id, round_no=1, action_seq=1, payments=(), state=STATE, deadline=None,
        seats={1: 10_000, 2: 10_000}, closed=False, joined=[1, 2],
    )  # fmt: skip
    outcome = await committed_while_waited_for(
        postgres_url,
        "INSERT INTO seats (person_id, table_id, balance) VALUES (1, $1, 10000)",
        (there.id,),
        seating,
    )
    assert isinstance(outcome, SeatRefused), outcome
    assert (await pg_store.open_table(-1)).version == 0  # nothing of the refused action saved


async def test_the_daily_bonus_paid_meanwhile_is_answered_as_paid_already(pg_store, postgres_url, clock):
    await pg_store.ensure_person(1, "Ming")
    claim = pg_store.claim_daily(1)
    day = clock().astimezone(pg_store.zone).date().isoformat()
    outcome = await committed_while_waited_for(
        postgres_url,
        "WITH paid AS (UPDATE people SET balance = balance + 2000 WHERE id = 1)"
        " INSERT INTO ledger (person_id, account, delta, reason, counterparty, entry, idem_key, created_at)"
        " VALUES (1, NULL, 2000, 'daily', 'mint', $1, $2, '2025-03-01T00:00:00')",
        (f"daily:1:{day}", f"daily:1:{day}:1"),
        claim,
    )
    assert not isinstance(outcome, BaseException), outcome
    assert not outcome.claimed and outcome.balance == 12_000
