"""Property test: any sequence of bookings, refusals and replays keeps the books balanced."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.events import ESCROW, HOUSE, Paid, PayReason
from storage import InsufficientFunds, UnknownPerson, open_store
from tests.unit.storage.storage_helpers import STATE, FakeClock

PEOPLE = (1, 2, 3)
accounts = st.sampled_from((*PEOPLE, 4, ESCROW, HOUSE))  # 4 is never created
payment = st.builds(Paid, accounts, accounts, st.integers(1, 15_000), st.sampled_from(list(PayReason)))
operation = st.one_of(
    st.tuples(st.just("person"), st.sampled_from(PEOPLE)),
    st.tuples(st.just("daily"), st.sampled_from(PEOPLE), st.integers(0, 30)),
    st.tuples(st.just("action"), st.integers(0, 1), st.lists(payment, max_size=4)),
    st.tuples(st.just("replay"), st.integers(0, 50)),
)


async def run(ops: list[tuple], path: Path) -> None:
    clock = FakeClock()
    model: dict[object, int] = {HOUSE: 0, ESCROW: 0}
    done: list[tuple] = []  # booked (table, seq, payments)
    async with await open_store(path, now=clock) as store:
        tables = [await store.create_table(-c, "showhand", STATE) for c in (1, 2)]
        seqs, held = [0, 0], [0, 0]
        for op in ops:
            if op[0] == "person":
                _, granted = await store.ensure_person(op[1], "x")
                if granted:
                    model[op[1]] = 10_000
            elif op[0] == "daily":
                clock.advance(hours=op[2])
                try:
                    if (await store.claim_daily(op[1])).claimed:
                        model[op[1]] += 2_000
                except UnknownPerson:
                    assert op[1] not in model
            elif op[0] == "action":
                index, payments = op[1], op[2]
                seqs[index] += 1
                trial, table_escrow = dict(model), held[index]
                for p in payments:
                    trial[p.payer] = trial.get(p.payer, 0) - p.amount
                    trial[p.payee] = trial.get(p.payee, 0) + p.amount
                    table_escrow += p.amount * ((p.payee == ESCROW) - (p.payer == ESCROW))
                valid = (
                    all(p.payer != p.payee for p in payments)
                    and all(a in model for p in payments for a in (p.payer, p.payee))
                    and all(v >= 0 for a, v in trial.items() if a != HOUSE)
                    and table_escrow >= 0
                )
                try:
                    booked = await store.commit_action(
                        tables[index].id,
                        round_no=1,
                        action_seq=seqs[index],
                        payments=payments,
                        state=STATE,
                        deadline=None,
                    )
                except (InsufficientFunds, UnknownPerson, ValueError):
                    assert not valid
                    continue
                assert booked and valid
                model, held[index] = trial, table_escrow
                done.append((index, seqs[index], payments))
            elif done:
                index, seq, payments = done[op[1] % len(done)]
                assert not await store.commit_action(
                    tables[index].id,
                    round_no=1,
                    action_seq=seq,
                    payments=payments,
                    state=STATE,
                    deadline=None,
                )
            for person in PEOPLE:
                if person in model:
                    assert await store.balance(person) == model[person]
        report = await store.check()
        assert report.ok, report.problems
        assert report.figures["house"] == model[HOUSE] and report.figures["escrow"] == model[ESCROW]
        assert [t.escrow for t in await store.open_tables()] == held


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, max_size=25))
def test_any_sequence_of_operations_keeps_the_books_balanced(ops):
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(ops, Path(tmp) / "p.sqlite3"))
