"""Seats are backed by the wallets: storage refuses what the bot must never save (issue 14)."""

from __future__ import annotations

import sqlite3

import pytest

from storage import SeatRefused, check_database
from tests.unit.storage.storage_helpers import STATE, ante


async def table_with_people(store, chat_id=-1, people=(1, 2)):
    for person in people:
        await store.ensure_person(person, f"p{person}")
    return await store.create_table(chat_id, "showhand", STATE)


async def save(store, table, seq, seats, payments=(), closed=False, joined=None):
    return await store.commit_action(
        table.id, round_no=1, action_seq=seq, payments=payments, state=STATE, deadline=None,
        seats=seats, closed=closed, joined=list(seats) if joined is None else joined,
    )  # fmt: skip


async def test_a_new_seat_must_bring_exactly_its_wallets_coins(store):
    table = await table_with_people(store)
    with pytest.raises(SeatRefused, match="sits down with 4500 coins but the wallet holds 10000"):
        await save(store, table, 1, {1: 4_500})
    assert await save(store, table, 1, {1: 10_000})


async def test_a_seat_never_holds_more_than_the_wallet(store):
    table = await table_with_people(store)
    await save(store, table, 1, {1: 10_000, 2: 10_000})
    with pytest.raises(SeatRefused, match="stated to hold 10100"):
        await save(store, table, 2, {1: 10_100, 2: 9_900}, payments=[ante(1, 100)], joined=[])
    assert await save(store, table, 2, {1: 9_900, 2: 10_000}, payments=[ante(1, 100)], joined=[])
    await store.claim_daily(2)  # the daily bonus comes from outside the table: more is fine
    assert await save(store, table, 3, {1: 9_900, 2: 10_000}, joined=[])


async def test_seats_of_a_table_saved_before_seats_were_kept_are_taken_as_they_are(store):
    """A database upgraded with open tables has no seat rows: their people did not just sit down,
    so a seat under its wallet (a daily bonus not yet credited) does not block the table."""
    table = await table_with_people(store)
    await store.claim_daily(1)
    assert await save(store, table, 1, {1: 10_000, 2: 10_000}, joined=[])


async def test_nobody_sits_at_two_open_tables(store):
    first = await table_with_people(store, -1)
    second = await table_with_people(store, -2)
    await save(store, first, 1, {1: 10_000})
    with pytest.raises(SeatRefused, match="sits at table 1 already"):
        await save(store, second, 1, {1: 10_000, 2: 10_000})
    assert (await store.open_table(-2)).version == 0, "nothing of the refused action was saved"
    await save(store, first, 2, {}, closed=True)  # a closed table seats nobody
    assert await save(store, second, 1, {1: 10_000, 2: 10_000})


async def test_the_check_reports_a_seat_its_wallet_does_not_back(store, db_path):
    table = await table_with_people(store)
    await save(store, table, 1, {1: 10_000})
    assert check_database(db_path).ok
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE seats SET balance = 10200 WHERE person_id = 1")
        db.execute("INSERT INTO seats (person_id, table_id, balance) VALUES (2, 999, 5)")
    report = check_database(db_path)
    assert not report.ok
    assert "table 1 states person 1 holds 10200 coins but their wallet holds 10000" in report.problems
    assert "person 2 is seated at table 999, which is missing" in report.problems
