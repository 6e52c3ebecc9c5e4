"""People, grants, the daily bonus, and balances that never go negative."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime

import pytest

from games.events import ESCROW, HOUSE, Paid, PayReason
from storage import (
    MINT,
    InsufficientFunds,
    RoundRecord,
    RoundResult,
    UnknownPerson,
    open_store,
    wallet,
)
from tests.unit.storage.storage_helpers import STATE, FakeClock, ante, settle


async def test_a_new_person_gets_the_starting_grant_once(store):
    person, granted = await store.ensure_person(1, "Ming", "zh-hans")
    assert granted and person.balance == 10_000 and person.language == "zh-hans"
    again, granted_again = await store.ensure_person(1, "Ming")
    assert not granted_again and again.balance == 10_000 and again.language == "zh-hans"
    [row] = await store.ledger(1)
    assert (row.delta, row.reason, row.counterparty, row.key) == (10_000, "grant", MINT, "grant:1:1")


async def test_a_later_call_updates_name_and_language_but_never_grants(store):
    await store.ensure_person(1, "Ming")
    person, granted = await store.ensure_person(1, "阿明", "en")
    assert not granted and (person.name, person.language, person.balance) == ("阿明", "en", 10_000)
    person, _ = await store.ensure_person(1, "阿明")  # no language given: the stored one stays
    assert person.language == "en"


async def test_concurrent_first_sightings_grant_once(store):
    results = await asyncio.gather(*(store.ensure_person(5, f"n{i}") for i in range(50)))
    assert sum(granted for _, granted in results) == 1
    assert await store.balance(5) == 10_000
    assert (await store.check()).ok


async def test_grant_amounts_are_configurable(db_path):
    async with await open_store(db_path, start_grant=500, daily_bonus=70) as store:
        person, _ = await store.ensure_person(1, "Ming")
        assert person.balance == 500
        claim = await store.claim_daily(1)
        assert claim.claimed and claim.amount == 70 and claim.balance == 570
    with pytest.raises(ValueError):
        await open_store(db_path, daily_bonus=0)


async def test_balance_of_an_unknown_person_is_an_error(store):
    with pytest.raises(UnknownPerson):
        await store.balance(404)
    with pytest.raises(UnknownPerson):
        await store.claim_daily(404)
    assert await store.get_person(404) is None


async def test_daily_bonus_once_per_calendar_day_in_the_time_zone(store, clock):
    await store.ensure_person(1, "Ming")
    clock.moment = datetime(2025, 3, 1, 15, 59, tzinfo=UTC)  # 23:59 in Shanghai
    first = await store.claim_daily(1)
    assert first.claimed and first.amount == 2_000 and first.balance == 12_000
    assert first.day == date(2025, 3, 1)
    assert first.next_claim_at == datetime(2025, 3, 1, 16, 0, tzinfo=UTC)

    clock.advance(seconds=30)  # still 23:59:30 in Shanghai: refused, says when
    refused = await store.claim_daily(1)
    assert not refused.claimed and refused.amount == 0 and refused.balance == 12_000
    assert refused.next_claim_at == datetime(2025, 3, 1, 16, 0, tzinfo=UTC)

    clock.advance(seconds=30)  # 00:00 on 2 March in Shanghai, still 1 March in UTC
    second = await store.claim_daily(1)
    assert second.claimed and second.day == date(2025, 3, 2) and second.balance == 14_000
    clock.advance(hours=23, minutes=59)
    assert not (await store.claim_daily(1)).claimed
    assert [e.reason for e in await store.ledger(1)] == ["daily", "daily", "grant"]


async def test_the_daily_time_zone_is_configurable(db_path):
    clock = FakeClock(datetime(2025, 3, 1, 23, 30, tzinfo=UTC))
    async with await open_store(db_path, tz="UTC", now=clock) as store:
        await store.ensure_person(1, "Ming")
        assert (await store.claim_daily(1)).claimed
        clock.advance(minutes=20)  # 23:50 UTC: the same UTC day, though 2 March in Shanghai
        assert not (await store.claim_daily(1)).claimed
        clock.advance(minutes=20)
        assert (await store.claim_daily(1)).claimed


async def test_concurrent_daily_claims_pay_once_even_from_two_stores(store, db_path, clock):
    await store.ensure_person(1, "Ming")
    async with await open_store(db_path, now=clock) as other:  # a second writer on the same file
        claims = await asyncio.gather(
            *(s.claim_daily(1) for _ in range(40) for s in (store, other)),
        )
    assert sum(c.claimed for c in claims) == 1
    assert await store.balance(1) == 12_000
    assert (await store.check()).ok


async def test_a_booking_that_would_go_negative_books_nothing(store):
    for person in (1, 2, 3):
        await store.ensure_person(person, f"p{person}")
    table = await store.create_table(-1, "muxi", STATE)
    ledger_before = await store.ledger(2)
    # 1 pays 2 first (fine), then 2 would pay 3 more than it will have: the whole batch fails.
    batch = [settle(1, 2, 500), settle(2, 3, 10_600)]
    with pytest.raises(InsufficientFunds) as refused:
        await store.commit_action(
            table.id, round_no=1, action_seq=1, payments=batch, state={"after": 1}, deadline=None
        )
    assert refused.value.account == 2 and refused.value.balance == 10_000 and refused.value.delta == -10_100
    assert [await store.balance(p) for p in (1, 2, 3)] == [10_000, 10_000, 10_000]
    assert await store.ledger(2) == ledger_before
    saved = await store.load_table(table.id)
    assert saved.state == STATE and saved.version == 0
    # A batch whose end result is fine is booked even if a leg alone would overdraw.
    assert await store.commit_action(
        table.id,
        round_no=1,
        action_seq=1,
        payments=[settle(2, 3, 10_400), settle(1, 2, 500)],
        state={},
        deadline=None,
    )
    assert [await store.balance(p) for p in (1, 2, 3)] == [9_500, 100, 20_400]
    assert (await store.check()).ok


async def test_the_escrow_can_never_pay_out_more_than_it_holds(store):
    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "showhand", STATE)
    await store.commit_action(
        table.id, round_no=1, action_seq=1, payments=[ante(1, 100)], state=STATE, deadline=None
    )
    with pytest.raises(InsufficientFunds):
        await store.commit_action(
            table.id,
            round_no=1,
            action_seq=2,
            payments=[Paid(ESCROW, 1, 150, PayReason.POT)],
            state=STATE,
            deadline=None,
        )
    assert (await store.load_table(table.id)).escrow == 100


async def test_the_house_takes_and_may_pay(store):
    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "muxi", STATE)
    await store.commit_action(
        table.id,
        round_no=1,
        action_seq=1,
        state=STATE,
        deadline=None,
        payments=[Paid(1, HOUSE, 300, PayReason.BANKER_ESCAPE)],
    )
    await store.commit_action(
        table.id,
        round_no=1,
        action_seq=2,
        state=STATE,
        deadline=None,
        payments=[Paid(HOUSE, 1, 500, PayReason.SETTLEMENT)],
    )
    assert await store.balance(1) == 10_200
    report = await store.check()
    assert report.ok and report.figures["house"] == -200


async def test_an_error_after_the_ledger_was_written_rolls_everything_back(store):
    await store.ensure_person(1, "Ming")
    await store.ensure_person(2, "Hong")
    table = await store.create_table(-1, "muxi", STATE)
    record = RoundRecord(1, "c", "AS", "s", (RoundResult(999, 0, False, None),))  # 999 is unknown
    with pytest.raises(UnknownPerson):
        await store.commit_action(
            table.id,
            round_no=1,
            action_seq=1,
            payments=[settle(1, 2, 100)],
            state={"x": 1},
            deadline=None,
            round_record=record,
        )
    assert await store.balance(1) == 10_000 and len(await store.ledger(1)) == 1
    assert (await store.load_table(table.id)).version == 0
    assert await store.last_rounds(table_id=table.id) == []
    assert (await store.check()).ok


@pytest.mark.parametrize(
    "bad",
    [
        Paid(1, 2, 0, PayReason.SETTLEMENT),
        Paid(1, 2, -5, PayReason.SETTLEMENT),
        Paid(1, 1, 5, PayReason.SETTLEMENT),
        Paid(1, "mint", 5, PayReason.SETTLEMENT),
        Paid(1, "bank", 5, PayReason.SETTLEMENT),
    ],
)
async def test_malformed_payments_are_refused(store, bad):
    await store.ensure_person(1, "Ming")
    await store.ensure_person(2, "Hong")
    table = await store.create_table(-1, "muxi", STATE)
    with pytest.raises(ValueError):
        await store.commit_action(
            table.id, round_no=1, action_seq=1, payments=[bad], state=STATE, deadline=None
        )
    assert (await store.load_table(table.id)).version == 0


async def test_paying_someone_never_seen_is_refused(store):
    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "muxi", STATE)
    with pytest.raises(UnknownPerson):
        await store.commit_action(
            table.id, round_no=1, action_seq=1, payments=[settle(1, 77, 10)], state=STATE, deadline=None
        )
    assert await store.balance(1) == 10_000


async def test_the_ledger_lists_the_last_rows_newest_first(store):
    await store.ensure_person(1, "Ming")
    await store.ensure_person(2, "Hong")
    table = await store.create_table(-1, "muxi", STATE)
    for seq in range(1, 6):
        await store.commit_action(
            table.id, round_no=1, action_seq=seq, payments=[settle(2, 1, seq)], state=STATE, deadline=None
        )
    rows = await store.ledger(1, limit=3)
    assert [r.delta for r in rows] == [5, 4, 3]
    assert rows[0].key == f"{table.id}:1:5:0:1" and rows[0].counterparty == 2
    assert (rows[0].table_id, rows[0].round_no, rows[0].reason) == (table.id, 1, "settlement")
    assert rows[0].created_at.tzinfo is not None


async def test_the_check_constraint_is_the_last_word_if_the_precheck_is_fooled(store, monkeypatch):
    await store.ensure_person(1, "Ming")
    await store.ensure_person(2, "Hong")
    table = await store.create_table(-1, "muxi", STATE)

    def blind(people, named):
        yield from ()  # a storage function that asks the database nothing
        return {**{p: 10**9 for p in people}, **{n: 10**9 for n in named}}

    monkeypatch.setattr(wallet, "_balances", blind)
    with pytest.raises(InsufficientFunds) as refused:
        await store.commit_action(
            table.id, round_no=1, action_seq=1, payments=[settle(1, 2, 10_001)], state={"x": 1}, deadline=None
        )
    monkeypatch.undo()
    assert refused.value.account == 1
    assert refused.value.balance == 10**9, "refused by the constraint, not by the fooled precheck"
    assert [await store.balance(p) for p in (1, 2)] == [10_000, 10_000]
    assert (await store.load_table(table.id)).version == 0
    assert (await store.check()).ok
