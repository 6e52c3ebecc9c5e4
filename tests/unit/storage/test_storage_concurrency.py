"""Many writers at once, reads beside a held write, and a process killed in the middle of bookings."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import textwrap
import threading
import time

import asyncpg
import pytest

from games.events import ESCROW
from storage import InsufficientFunds, StorageError, check_database, open_store
from tests.unit.storage.storage_helpers import ROOT, STATE, ante, pot, python, settle, subprocess_env
from tests.unit.storage.writes import (
    Gate,
    Refused,
    ends_its_transaction,
    held,
    name_of,
    rename_then_collide,
    renamed,
    start_tracing,
    stop_tracing,
    waits_then_renames,
)
from tests.waiting import until

TABLES = 12
ACTIONS = 25  # per table: 300 bookings, each sent twice


def plan_actions(rng: random.Random, people: list[int]) -> list[list]:
    """A table's batches: antes into escrow, then the escrow paid out, plus settlements between people."""
    batches = []
    for seq in range(ACTIONS):
        if seq % 2 == 0:
            batches.append(
                [ante(p, rng.randint(1, 50)) for p in people[:2]] + [settle(people[2], people[3], 7)]
            )
        else:
            batches.append("payout")  # resolved once the previous batch's escrow is known
    return batches


async def test_hundreds_of_concurrent_bookings_lose_nothing_and_replays_book_nothing(store):
    rng = random.Random(4)
    expected: dict[int, int] = {}
    legs = 0
    calls = []
    for t in range(TABLES):
        people = [100 * t + i for i in range(4)]
        for p in people:
            await store.ensure_person(p, f"p{p}")
            expected[p] = 10_000
        table = await store.create_table(-t - 1, "showhand", STATE)
        held: list = []
        for seq, batch in enumerate(plan_actions(rng, people), start=1):
            if batch == "payout":
                total = sum(paid.amount for paid in held)
                batch = [pot(people[seq % 4], total)]
            for paid in batch:
                for account, sign in ((paid.payer, -1), (paid.payee, 1)):
                    if account != ESCROW:
                        expected[account] += sign * paid.amount
            legs += 2 * len(batch)
            held = [paid for paid in batch if paid.payee == ESCROW]
            escrow = sum(paid.amount for paid in held)
            for _ in range(2):  # every batch is sent twice: the second must book nothing
                calls.append(
                    store.commit_action(
                        table.id,
                        round_no=1 + seq // 10,
                        action_seq=seq,
                        payments=batch,
                        state={**STATE, "seq": seq},
                        deadline=None,
                        escrow=escrow,
                    )
                )
    results = await asyncio.gather(*calls)
    assert results.count(True) == TABLES * ACTIONS == 300 and results.count(False) == 300
    for person, balance in expected.items():
        assert await store.balance(person) == balance
    for table in await store.open_tables():
        assert table.version == ACTIONS and table.state["seq"] == ACTIONS
    report = await store.check()
    assert report.ok, report.problems
    assert report.figures["ledger_rows"] == 2 * len(expected) + legs  # the grants, and each batch once


async def test_concurrent_spending_beyond_a_balance_never_goes_negative(store):
    await store.ensure_person(1, "Ming")
    tables = [await store.create_table(-c, "showhand", STATE) for c in range(1, 61)]
    outcomes = await asyncio.gather(
        *(
            store.commit_action(
                t.id, round_no=1, action_seq=1, payments=[ante(1, 300)], state=STATE, deadline=None
            )
            for t in tables
        ),
        return_exceptions=True,
    )
    assert outcomes.count(True) == 33
    assert all(isinstance(o, InsufficientFunds) for o in outcomes if o is not True)
    assert await store.balance(1) == 100
    report = await store.check()
    assert report.ok and report.figures["escrow"] == 9_900


class HeldWrite:
    """A write transaction held open on the writer's thread until the test releases it."""

    def __init__(self, store, sql: str = "UPDATE people SET name = 'changed' WHERE id = 1") -> None:
        self.gate = Gate()
        self.task = asyncio.create_task(store._write(held, sql, self.gate))

    def release(self) -> None:
        self.gate.open()

    async def wait_entered(self) -> None:
        await until(self.gate.reached, "the held write began")


def writable_by_another_connection(db_path) -> bool:
    other = sqlite3.connect(db_path, isolation_level=None, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:  # database is locked
        return False
    finally:
        other.close()


async def test_reads_do_not_wait_for_a_held_write_transaction(store, db_path):
    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "muxi", STATE)
    held = HeldWrite(store)
    try:
        await held.wait_entered()
        assert not writable_by_another_connection(db_path)  # the transaction is open, holding the lock
        started = time.perf_counter()
        person = await asyncio.wait_for(store.get_person(1), timeout=1)
        await asyncio.wait_for(store.load_table(table.id), timeout=1)
        await asyncio.wait_for(store.global_leaderboard(), timeout=1)
        assert time.perf_counter() - started < 0.5
        assert person.name == "Ming"  # the uncommitted change is not visible
        queued = asyncio.create_task(store.update_messages(table.id, message_id=3))  # a write waits its turn
        await asyncio.sleep(0.05)
        assert not queued.done() and not held.task.done()
    finally:
        held.release()
    assert await held.task == "done"
    await queued
    assert (await store.get_person(1)).name == "changed"
    assert (await store.load_table(table.id)).message_id == 3
    assert writable_by_another_connection(db_path)


async def test_a_cancelled_write_is_skipped_if_queued_and_rolled_back_if_running(store, db_path):
    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "muxi", STATE)
    held = HeldWrite(store)
    try:
        await held.wait_entered()
        queued = asyncio.create_task(
            store.commit_action(table.id, round_no=1, action_seq=1, state={"x": 1}, deadline=None)
        )
        commits = store.backend.commits
        await until(lambda: len(commits.queue) == 1, "the action queued")
        queued.cancel()  # still queued behind the held write: its caller need not wait for it
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(queued, timeout=1)
        held.task.cancel()  # running: its caller waits until the thread has rolled it back
        await asyncio.sleep(0.05)
        assert not held.task.done()
    finally:
        held.release()
    with pytest.raises(asyncio.CancelledError):
        await held.task
    assert writable_by_another_connection(db_path)  # nothing left open
    assert (await store.get_person(1)).name == "Ming"  # rolled back
    assert (await store.load_table(table.id)).version == 0  # the queued write never ran
    assert await store.commit_action(table.id, round_no=1, action_seq=1, state={"x": 2}, deadline=None)
    assert (await store.load_table(table.id)).state == {"x": 2}


async def test_close_lets_the_write_in_progress_and_those_queued_finish(db_path):
    store = await open_store(db_path)
    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "muxi", STATE)
    held = HeldWrite(store)
    try:
        await held.wait_entered()
        queued = asyncio.create_task(store.update_messages(table.id, message_id=3))
        closing = asyncio.create_task(store.close())
        await asyncio.sleep(0.05)
        assert not closing.done()
    finally:
        held.release()
    await closing
    assert await held.task == "done"
    await queued
    assert store.backend.writer.closed
    with pytest.raises(ValueError):
        await store.get_person(1)
    with pytest.raises(ValueError):
        await store.update_messages(table.id, message_id=4)
    await store.close()  # again: nothing to do
    async with await open_store(db_path) as store:
        assert (await store.get_person(1)).name == "changed"
        assert (await store.load_table(table.id)).message_id == 3


async def test_a_held_write_lock_from_another_process_does_not_block_reads(store, db_path):
    await store.ensure_person(1, "Ming")
    other = sqlite3.connect(db_path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE people SET name = 'other' WHERE id = 1")
        person = await asyncio.wait_for(store.get_person(1), timeout=1)
        assert person.name == "Ming"
    finally:
        other.execute("ROLLBACK")
        other.close()


BOOKER = textwrap.dedent(
    """
    import asyncio, random, sys
    from games.events import ESCROW
    from storage import open_store
    from tests.unit.storage.storage_helpers import STATE, ante, pot, settle

    async def main(path):
        store = await open_store(path, start_grant=1_000_000)
        people = list(range(1, 7))
        for p in people:
            await store.ensure_person(p, f"p{p}")
        tables = []
        for chat in (-1, -2, -3):
            tables.append(await store.open_table(chat) or await store.create_table(chat, "showhand", STATE))
        rng = random.Random(7)
        booked = 0

        async def act(table, seq):
            saved = await store.load_table(table.id)
            if seq % 2:
                batch = [ante(p, rng.randint(1, 90)) for p in rng.sample(people, 3)]
            else:
                batch = [pot(rng.choice(people), saved.escrow), settle(rng.choice(people[:3]), 6, 5)]
            return await store.commit_action(table.id, round_no=seq // 4, action_seq=seq, payments=batch,
                                             state={**STATE, "seq": seq}, deadline=None)

        seq = 0
        while True:
            seq += 1
            results = await asyncio.gather(*(act(t, seq) for t in tables))
            booked += sum(results)
            print(booked, flush=True)

    asyncio.run(main(sys.argv[1]))
    """
)


@pytest.mark.parametrize("kill_after", [150, 400])
async def test_a_process_killed_while_booking_leaves_sound_books(tmp_path, kill_after):
    path = tmp_path / "killed.sqlite3"
    script = tmp_path / "booker.py"
    script.write_text(BOOKER)
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests" / "storage"), env["PYTHONPATH"]])
    child = subprocess.Popen(
        [python(), str(script), str(path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(60, child.kill)  # a hung child must not hang the suite
    watchdog.start()
    try:
        booked = 0
        while booked < kill_after:
            line = child.stdout.readline()
            if not line:
                break
            booked = int(line)
        assert booked >= kill_after, child.stderr.read() if child.poll() is not None else "too slow"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    report = check_database(path)
    assert report.ok, report.problems
    assert report.figures["ledger_rows"] >= 12 + kill_after * 4
    # The database opens again and keeps booking from where the saved tables are.
    async with await open_store(path, start_grant=1_000_000) as store:
        for table in await store.open_tables():
            assert await store.commit_action(
                table.id,
                round_no=999,
                action_seq=table.version + 1,
                payments=[pot(1, table.escrow)] if table.escrow else [],
                state=STATE,
                deadline=None,
                closed=True,
            )
        report = await store.check()
        assert report.ok and report.figures["escrow"] == 0, report.problems


async def test_bookings_cancelled_at_any_point_leave_all_or_nothing(store):
    for person in (1, 2):
        await store.ensure_person(person, f"p{person}")
    table = await store.create_table(-1, "showhand", STATE)
    started = time.perf_counter()
    await store.commit_action(
        table.id,
        round_no=1,
        action_seq=1,
        payments=[ante(1, 10), ante(2, 10)],
        state={"seq": 1},
        deadline=None,
    )
    took = time.perf_counter() - started  # one booking, uncancelled (a few round trips on PostgreSQL)
    outcomes = []
    for seq in range(2, 42):
        task = asyncio.create_task(
            store.commit_action(
                table.id,
                round_no=1,
                action_seq=seq,
                payments=[ante(1, 10), ante(2, 10)],
                state={"seq": seq},
                deadline=None,
            )
        )
        # Cancelled at a different point each time: before its task starts, at its first await
        # (SQLite's writer is handed a write in the step that makes it; PostgreSQL's waits for a
        # connection), then up to twice a booking.
        if seq % 10:
            await asyncio.sleep((seq % 10 - 1) / 4 * took)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        saved = await store.load_table(table.id)
        antes = [e for e in await store.ledger(1, limit=1000) if e.reason == "ante"]
        booked = any(e.key == f"{table.id}:1:{seq}:0:1" for e in antes)
        outcomes.append(booked)
        # Booked as a whole (ledger, escrow, state and version together) or not at all.
        assert saved.escrow == 20 * len(antes)
        assert (saved.version == seq) == booked
        assert saved.state == ({"seq": saved.version} if saved.version else STATE)
        report = await store.check()
        assert report.ok, report.problems
    assert any(outcomes) and not all(outcomes)


@pytest.mark.sqlite_only  # PostgreSQL commits each write in a transaction of its own (storage/postgres.py)
async def test_writes_made_together_are_committed_together_and_each_stands_or_falls_alone(store, monkeypatch):
    batches: list[int] = []
    real = store.backend.commits.run_batch

    async def counted(jobs):
        batches.append(len(jobs))
        return await real(jobs)

    monkeypatch.setattr(store.backend.commits, "run_batch", counted)
    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "muxi", STATE)
    batches.clear()
    outcomes = await asyncio.gather(
        *(store.ensure_person(100 + i, f"p{i}") for i in range(20)),
        store.commit_action(
            table.id, round_no=1, action_seq=1, payments=[ante(1, 10**9)], state=STATE, deadline=None
        ),
        return_exceptions=True,
    )
    assert isinstance(outcomes[-1], InsufficientFunds)  # refused alone, in a batch with the others
    assert all(granted for _, granted in outcomes[:-1])
    assert sum(batches) == 21 and len(batches) < 21, batches  # fewer commits than writes
    assert [await store.balance(100 + i) for i in range(20)] == [store.start_grant] * 20
    assert (await store.load_table(table.id)).version == 0


@contextlib.asynccontextmanager
async def traced(store):
    """The statements the writer runs meanwhile (SQLite's trace of its connection)."""
    statements: list[str] = []
    await store.backend.writer.on_connection(start_tracing)
    try:
        yield statements
    finally:
        statements.extend(await store.backend.writer.on_connection(stop_tracing))


async def queued_behind_a_held_write(store, *writes):
    """Start each write, in this order, while a write holds the writer: they make one batch."""
    held = HeldWrite(store, "UPDATE people SET name = name WHERE id = 1")
    await held.wait_entered()
    try:
        tasks = [asyncio.create_task(store._write(*write)) for write in writes]
        commits = store.backend.commits  # (held: its queue is not taken meanwhile)
        await until(lambda: len(commits.queue) == len(writes), "the writes queued")
    finally:
        held.release()
    await held.task
    return tasks


@pytest.mark.sqlite_only  # a batch of several writes (PostgreSQL commits each alone)
async def test_writes_that_raise_midway_in_their_batch_leave_nothing_the_others_see(store):
    for person, name in ((1, "Ming"), (2, "Hong"), (3, "Qiang"), (4, "Li")):
        await store.ensure_person(person, name)
    async with traced(store) as statements:
        tasks = await queued_behind_a_held_write(
            store,
            (renamed, 1, "one"),
            (renamed, 2, "two", True),
            (name_of, 2),
            (renamed, 4, "four", True),
            (name_of, 4),
            (renamed, 3, "three"),
        )
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert outcomes[0] == "one" and outcomes[5] == "three"
    assert isinstance(outcomes[1], Refused) and isinstance(outcomes[3], Refused)
    assert outcomes[2] == "Hong" and outcomes[4] == "Li"  # the failed writes' UPDATEs were never seen
    assert [(await store.get_person(p)).name for p in (1, 2, 3, 4)] == ["one", "Hong", "three", "Li"]
    # Run at most twice however many fail: once as they are, then each in a savepoint.
    assert statements.count("BEGIN IMMEDIATE") == 1 + 2  # (the held write's batch, then this one's)


@pytest.mark.sqlite_only  # a batch of several writes, held on SQLite's writer thread
async def test_a_write_that_returned_stands_when_its_caller_is_cancelled_and_a_later_one_fails(store):
    for person, name in ((1, "Ming"), (2, "Hong")):
        await store.ensure_person(person, name)
    gate = Gate()
    returned, failing = await queued_behind_a_held_write(
        store, (renamed, 1, "one"), (renamed, 2, "two", True, gate)
    )
    try:
        await until(gate.reached, "the first write returned")
        returned.cancel()  # too late to undo it: its caller waits for the batch's end
        await asyncio.sleep(0.01)
        assert not returned.done()
    finally:
        gate.open()
    with pytest.raises(asyncio.CancelledError):
        await returned
    with pytest.raises(Refused):
        await failing
    assert [(await store.get_person(p)).name for p in (1, 2)] == ["one", "Hong"]


@pytest.mark.sqlite_only  # a batch of several writes (PostgreSQL commits each alone)
async def test_a_batch_of_writes_that_all_stand_runs_no_statement_but_theirs(store):
    await store.ensure_person(1, "Ming")
    async with traced(store) as statements:
        tasks = await queued_behind_a_held_write(store, (renamed, 1, "one"), (name_of, 1))
        assert await asyncio.gather(*tasks) == ["one", "one"]
    batch = statements[statements.index("COMMIT") + 1 :]  # (after the held write's batch)
    assert [line.split()[0] for line in batch] == ["BEGIN", "UPDATE", "SELECT", "COMMIT"]


async def test_a_write_going_on_after_a_refused_statement_stands_only_where_the_database_kept_it(
    store, backend
):
    await store.ensure_person(1, "Ming")
    await store.ensure_person(2, "Hong")
    if backend == "postgresql":  # the error aborted the transaction: COMMIT rolls it back
        with pytest.raises(StorageError, match="nothing was committed"):
            await store._write(rename_then_collide)
        assert (await store.get_person(1)).name == "Ming"
    else:  # SQLite undid the refused statement alone
        assert await store._write(rename_then_collide) == "handled"
        assert (await store.get_person(1)).name == "renamed"


@pytest.mark.sqlite_only  # a batch of several writes (PostgreSQL commits each alone)
async def test_no_write_of_a_batch_is_saved_after_one_ended_its_transaction(store):
    for person, name in ((1, "Ming"), (2, "Hong")):
        await store.ensure_person(person, name)
    tasks = await queued_behind_a_held_write(store, (ends_its_transaction,), (renamed, 2, "two"))
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(outcome, StorageError) for outcome in outcomes), outcomes
    assert (await store.get_person(2)).name == "Hong"  # never run outside a transaction


@pytest.mark.sqlite_only  # the batch is held on SQLite's writer thread
async def test_a_cancelled_committer_still_reports_its_batch_and_strands_nothing(store):
    await store.ensure_person(1, "Ming")
    gate = Gate()
    first = asyncio.create_task(store._write(waits_then_renames, gate))  # holds its batch
    await until(gate.reached, "the first batch began")
    second = asyncio.create_task(store.ensure_person(2, "Hong"))  # queued behind that batch
    commits = store.backend.commits
    await until(lambda: len(commits.queue) == 1, "the second write queued")
    commits.committer.cancel()  # as when the event loop closes
    await asyncio.sleep(0.01)
    gate.open()
    assert await first == "done"  # its batch ended, committed, and its caller was told so
    with pytest.raises(StorageError, match="before this write began"):
        await second
    assert (await store.get_person(1)).name == "held"
    assert await store.get_person(2) is None
    assert (await store.ensure_person(3, "Qiang"))[1], "a later write gets a new committer"


@pytest.mark.sqlite_only  # the write is held on SQLite's writer thread (PostgreSQL joins no writes)
async def test_what_a_tables_messages_show_is_saved_in_one_write_while_one_waits(store, monkeypatch):
    """Telegram's confirmations come faster than the writer: those made while one waits join it,
    as if each were written in turn; a caller that stops waiting does not undo it."""
    import storage.tables as module

    await store.ensure_person(1, "Ming")
    table = await store.create_table(-1, "muxi", STATE)
    await store.update_messages(table.id, dm_message_ids={5: 50, 6: 60}, shown={"5": "a", "6": "x"})
    written, real = [], store.backend.commits.enqueue

    def counted(fn, args, kwargs, detached=False):
        if fn is module.update_messages:
            written.append(kwargs)
        return real(fn, args, kwargs, detached)

    monkeypatch.setattr(store.backend.commits, "enqueue", counted)  # each write queued
    held = HeldWrite(store)
    try:
        await held.wait_entered()
        first = asyncio.create_task(store.update_messages(table.id, message_id=7, shown={"table": "t1"}))
        second = asyncio.create_task(
            store.update_messages(table.id, dm_message_ids={5: 51, 6: None}, shown={"5": "b", "6": None})
        )
        third = asyncio.create_task(store.update_messages(table.id, shown={"table": "t2"}))
        await asyncio.sleep(0.05)
        second.cancel()  # its caller stops waiting
        with pytest.raises(asyncio.CancelledError):
            await second
    finally:
        held.release()
    assert await held.task == "done"
    await asyncio.gather(first, third)
    saved = await store.load_table(table.id)
    assert (saved.message_id, saved.dm_message_ids) == (7, {5: 51})
    assert saved.shown == {"5": "b", "table": "t2"}, "each change as made, the later last"
    assert len(written) == 1, "one write"
    await store.update_messages(table.id, message_id=8)  # the write done, a new one is queued
    assert len(written) == 2 and (await store.load_table(table.id)).message_id == 8


@pytest.mark.sqlite_only  # the write is held on SQLite's writer thread
async def test_an_edit_written_with_an_action_is_not_undone_by_a_later_one_joining_an_earlier_write(store):
    """An edit not saved yet goes with the table's next action; a later change of the same message
    must not join a write queued before that action (it would be written first, then undone)."""
    table = await store.create_table(-1, "muxi", STATE)
    held = HeldWrite(store)
    try:
        await held.wait_entered()
        earlier = asyncio.create_task(store.update_messages(table.id, message_id=7))
        await asyncio.sleep(0)  # (queued: it waits for the held write)
        store.shown_later(table.id, {"5": "edited"})
        action = asyncio.create_task(
            store.commit_action(table.id, round_no=0, action_seq=1, state={"a": 1}, deadline=None)
        )
        await asyncio.sleep(0)
        later = asyncio.create_task(
            store.update_messages(table.id, dm_message_ids={5: 51}, shown={"5": "new"})
        )
        await asyncio.sleep(0)
    finally:
        held.release()
    assert await held.task == "done"
    await asyncio.gather(earlier, action, later)
    saved = await store.load_table(table.id)
    assert saved.shown == {"5": "new"} and saved.dm_message_ids == {5: 51} and saved.message_id == 7


@pytest.mark.sqlite_only  # SQLite's group commit
async def test_a_committer_cancelled_before_it_ran_leaves_the_group_commit_taking_writes(store):
    """As a closing event loop cancels the tasks it has not run yet: the batch begun with it ends,
    and the next write begins a batch of its own."""
    await store.ensure_person(1, "Ming")
    commits = store.backend.commits
    first = commits.enqueue(renamed, (1, "one"), {})
    commits.committer.cancel()
    assert await first.outcome == "one"
    assert await asyncio.wait_for(store._write(renamed, 1, "two"), 10) == "two"
    assert (await store.get_person(1)).name == "two"


@pytest.mark.sqlite_only  # SQLite's group commit
async def test_a_write_to_an_idle_writer_is_begun_on_its_thread_in_the_step_that_makes_it(store):
    """Handed to the writer's thread before the event loop runs anything else (the thread begins it
    meanwhile); a write made while it runs waits for the next batch."""
    await store.ensure_person(1, "Ming")
    commits, gate = store.backend.commits, Gate()
    first = commits.enqueue(waits_then_renames, (gate,), {})
    try:
        assert gate._reached.wait(5), "begun on the writer's thread while this step goes on"
        second = commits.enqueue(renamed, (1, "two"), {})
        assert commits.queue == [second], "the next batch waits for this one"
    finally:
        gate.open()
    assert await first.outcome == "done" and await second.outcome == "two"
    assert (await store.get_person(1)).name == "two"


async def test_a_write_from_another_event_loop_is_refused_not_left_waiting(store, backend):
    """Whether the writer is idle or busy (a write from there would be committed by this loop's
    task, and its caller there never woken)."""

    def elsewhere():  # (a write with no read before it)
        return asyncio.to_thread(asyncio.run, store.update_chat_settings(-5, turn_seconds=30))

    with pytest.raises(RuntimeError, match="another event loop"):
        await elsewhere()
    if backend == "sqlite":  # (a write held on the writer's thread)
        gate = Gate()
        busy = asyncio.create_task(store._write(held, "UPDATE people SET name = 'held' WHERE id = 0", gate))
        await until(gate.reached, "the writer is busy")
        with pytest.raises(RuntimeError, match="another event loop"):
            await elsewhere()
        gate.open()
        assert await busy == "done"
    assert (await store.chat_settings(-5)).turn_seconds is None
    assert (await store.update_chat_settings(-5, turn_seconds=30)).turn_seconds == 30, "from its own loop"


@contextlib.asynccontextmanager
async def row_locked(url: str):
    """Another PostgreSQL session holds person 1's row (``FOR UPDATE``) until the block ends."""
    blocker = await asyncpg.connect(url)
    try:
        async with blocker.transaction():
            await blocker.execute("SELECT 1 FROM people WHERE id = 1 FOR UPDATE")
            yield blocker
    finally:
        await blocker.close()


async def waits_for_the_lock(blocker) -> bool:
    return bool(await blocker.fetchval("SELECT count(*) FROM pg_locks WHERE NOT granted"))


@pytest.mark.postgresql_only  # each write a transaction of its own, side by side
async def test_the_writes_about_one_table_commit_in_order_and_the_others_side_by_side(store, database_target):
    for person, name in ((1, "Ming"), (2, "Hong"), (3, "Qiang"), (4, "Li")):
        await store.ensure_person(person, name)
    async with row_locked(database_target) as blocker:
        first = asyncio.create_task(store._write_in(7, renamed, 1, "one"))  # waits for the row
        await until(lambda: waits_for_the_lock(blocker), "the first write waits for the row")
        after = asyncio.create_task(store._write_in(7, renamed, 2, "two"))  # waits for the first
        beside = asyncio.create_task(store._write_in(8, renamed, 3, "three"))  # another table's
        unkeyed = asyncio.create_task(store._write(renamed, 4, "four"))  # no table's
        assert await asyncio.wait_for(asyncio.gather(beside, unkeyed), 10) == ["three", "four"]
        await asyncio.sleep(0.05)
        assert not first.done() and not after.done()
        assert (await store.get_person(2)).name == "Hong"
    assert await first == "one" and await after == "two"
    assert [(await store.get_person(p)).name for p in (1, 2, 3, 4)] == ["one", "two", "three", "four"]


@pytest.mark.postgresql_only  # a write waiting for a row lock held by another session
async def test_a_cancelled_write_on_postgresql_is_skipped_if_waiting_and_undone_if_running(
    store, database_target
):
    for person, name in ((1, "Ming"), (2, "Hong")):
        await store.ensure_person(person, name)
    async with row_locked(database_target) as blocker:
        running = asyncio.create_task(store._write_in(7, renamed, 1, "one"))  # begun, waits for the row
        await until(lambda: waits_for_the_lock(blocker), "the write waits for the row")
        waiting = asyncio.create_task(store._write_in(7, renamed, 2, "two"))  # waits for the one before
        await asyncio.sleep(0.05)
        waiting.cancel()  # not begun: its caller need not wait for it
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, timeout=1)
        running.cancel()  # running: its caller waits until it is undone
        await asyncio.sleep(0.05)
        assert not running.done()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert [(await store.get_person(p)).name for p in (1, 2)] == ["Ming", "Hong"]  # undone; never run
    assert await store._write_in(7, renamed, 2, "two") == "two"
    await store.backend.drain()
    assert not store.backend._last, "no write left running"


async def test_each_write_batch_is_told_with_its_seconds_and_whether_the_database_took_it(store):
    """(The bot's ``paiju_database_write_seconds``; a write refused by its own error is undone by a
    database that works: not a failed batch.)"""
    told: list[tuple[float, bool]] = []
    store.on_batch = lambda seconds, committed: told.append((seconds, committed))
    await store.ensure_person(1, "Ming")
    with pytest.raises(Refused):
        await store._write(renamed, 1, "refused", True)
    assert [committed for _, committed in told] == [True, True]
    assert all(0 <= seconds < 10 for seconds, _ in told)
    assert (await store.get_person(1)).name == "Ming"
