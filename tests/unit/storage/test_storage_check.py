"""The integrity check, from code and from ``python -m storage check``, on sound and tampered files."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess

import pytest

from storage import SCHEMA_VERSION, check_database, open_store
from tests.unit.storage.storage_helpers import ROOT, STATE, ante, python, settle, subprocess_env
from tests.unit.storage.writes import Gate, Refused, abandoned_write
from tests.waiting import until


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python(), "-m", "storage", "check", *args],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
async def books(db_path, clock):
    """A database with grants, a daily bonus, a settlement, and an open table holding escrow."""
    async with await open_store(db_path, now=clock) as store:
        for person in (1, 2, 3):
            await store.ensure_person(person, f"p{person}")
        await store.claim_daily(1)
        table = await store.create_table(-1, "showhand", STATE)
        await store.commit_action(
            table.id,
            round_no=1,
            action_seq=1,
            payments=[ante(1, 100), ante(2, 100)],
            state=STATE,
            deadline=None,
        )
        muxi = await store.create_table(-2, "muxi", STATE)
        await store.commit_action(
            muxi.id,
            round_no=1,
            action_seq=1,
            payments=[settle(3, 1, 250)],
            state=STATE,
            deadline=None,
            closed=True,
        )
    return db_path


def tamper(path, *statements: str) -> None:
    with sqlite3.connect(path) as db:
        for statement in statements:
            db.execute(statement)


async def test_sound_books_pass_in_code_and_on_the_command_line(books):
    report = check_database(books)
    assert report.ok and report.problems == ()
    assert report.figures == {
        "version": SCHEMA_VERSION,
        "people": 3,
        "ledger_rows": 14,
        "open_tables": 1,
        "granted": 32_000,
        "balances": 31_800,
        "escrow": 200,
        "house": 0,
    }
    done = run_check(str(books))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("OK: ") and "granted 32,000" in done.stdout


async def test_a_tampered_balance_is_caught(books):
    tamper(books, "UPDATE people SET balance = balance + 1000 WHERE id = 2")
    report = check_database(books)
    assert not report.ok
    assert any("person 2: balance 10900 but ledger sums to 9900" in p for p in report.problems)
    assert any("were granted" in p for p in report.problems)
    done = run_check(str(books))
    assert done.returncode == 1 and "person 2: balance 10900" in done.stdout


async def test_the_ledger_refuses_edits_and_a_forced_edit_is_caught(books):
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        tamper(books, "UPDATE ledger SET delta = delta + 5 WHERE person_id = 3")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        tamper(books, "DELETE FROM ledger WHERE person_id = 3")
    tamper(
        books,
        "DROP TRIGGER ledger_no_update",
        "UPDATE ledger SET delta = delta + 5 WHERE person_id = 3 AND reason = 'settlement'",
    )
    report = check_database(books)
    assert not report.ok
    text = "\n".join(report.problems)
    assert "person 3: balance 9750 but ledger sums to 9755" in text
    assert "legs summing to 5" in text
    assert "trigger ledger_no_update is missing" in text
    done = run_check(str(books))
    assert done.returncode == 1 and "person 3" in done.stdout


async def test_escrow_that_no_open_table_accounts_for_is_caught(books):
    tamper(books, "UPDATE tables SET escrow = 150 WHERE closed = 0")
    problems = "\n".join(check_database(books).problems)
    assert "open tables hold 150 coins in escrow but the escrow account has 200" in problems
    assert "escrow movements sum to 200" in problems
    tamper(books, "UPDATE tables SET escrow = 200 WHERE closed = 0", "UPDATE tables SET closed = 1")
    problems = "\n".join(check_database(books).problems)
    assert "closed table 1 still holds 200 coins" in problems


async def test_a_missing_path_fails_and_creates_nothing(tmp_path):
    missing = tmp_path / "nope.sqlite3"
    report = check_database(missing)
    assert not report.ok and "no database at" in report.problems[0]
    done = run_check(str(missing))
    assert done.returncode == 1 and "no database at" in done.stdout
    done = run_check(str(tmp_path / "no-such-dir" / "x.sqlite3"))
    assert done.returncode == 1
    assert list(tmp_path.iterdir()) == []


async def test_a_file_that_is_not_our_database_fails(tmp_path):
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not sqlite at all" * 100)
    assert not check_database(junk).ok
    empty = tmp_path / "empty.sqlite3"
    sqlite3.connect(empty).close()
    report = check_database(empty)
    assert not report.ok and "schema version 0" in report.problems[0]
    assert run_check(str(empty)).returncode == 1


@pytest.mark.sqlite_only  # the write is held on SQLite's writer thread
async def test_the_check_reads_a_snapshot_while_a_write_is_in_progress(store):
    await store.ensure_person(1, "Ming")
    gate = Gate()
    write = asyncio.create_task(store._write(abandoned_write, gate))
    try:
        await until(gate.reached, "the write changed a balance")
        report = await store.check()  # an uncommitted write is not seen and does not block
        assert not write.done()
    finally:
        gate.open()
    with pytest.raises(Refused):
        await write
    assert report.ok
    assert await store.balance(1) == 10_000
