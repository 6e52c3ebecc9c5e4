"""The integrity check: do the books balance? From code (``check_database``) or the command line.

The check itself (``books``) is a storage function, the same for SQLite and PostgreSQL, read in
one transaction so it sees a single consistent snapshot even while the bot is writing. On SQLite
it opens the file read-only (``mode=ro``), never creating one, and adds SQLite's own checks of the
file; on PostgreSQL a read-only repeatable-read transaction.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storage.models import MINT
from storage.on_sqlite import run_query
from storage.schema import LATEST, schema_version
from storage.sql import Query, marks, rows, run, value
from storage.wallet import GRANT_REASONS

SHOWN = 20  # problems of one kind listed before "... and N more"
SEATS_VERSION = 4  # the schema version that keeps the seats


@dataclass(frozen=True, slots=True)
class CheckReport:
    ok: bool
    problems: tuple[str, ...] = ()
    summary: str = ""
    figures: dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        if self.ok:
            return f"OK: {self.summary}"
        lines = [f"FAILED: {len(self.problems)} problem(s)", *(f"- {p}" for p in self.problems)]
        return "\n".join(lines)


def check_database(path: str | os.PathLike[str]) -> CheckReport:
    """Verify the ledger against the balances, the coin identity, and the escrow of open tables."""
    file = Path(path)
    if not file.is_file():
        return CheckReport(False, (f"no database at {file}",))
    try:
        db = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        return CheckReport(False, (f"cannot open {file}: {exc}",))
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        return run_query(db, books())
    except sqlite3.Error as exc:
        return CheckReport(False, (f"cannot read {file}: {exc}",))
    finally:
        db.close()


def books() -> Query[CheckReport]:
    """Every check of the books, in one read-only snapshot."""
    yield from run("BEGIN", postgres="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        return (yield from audit())
    finally:
        yield from run("ROLLBACK")


def audit() -> Query[CheckReport]:
    """Every check of the books, in the caller's transaction."""
    version = yield from schema_version()
    if not 1 <= version <= LATEST:
        return CheckReport(
            False, (f"not a database of this code: schema version {version} (known 1..{LATEST})",)
        )
    problems: list[str] = []

    # SQLite's checks of the file itself (PostgreSQL enforces its foreign keys as it writes).
    quick = [row[0] for row in (yield from rows("PRAGMA quick_check", postgres="SELECT 'ok'"))]
    if quick != ["ok"]:
        problems.extend(f"sqlite quick_check: {line}" for line in quick[:SHOWN])
    fk = yield from rows("PRAGMA foreign_key_check", postgres="")
    _listed(problems, [f"row {r[1]} of {r[0]} refers to a missing row of {r[2]}" for r in fk])

    _listed(
        problems,
        [
            f"person {pid}: balance {bal} but ledger sums to {total}"
            for pid, bal, total in (
                yield from rows(
                    "SELECT p.id, p.balance, COALESCE(SUM(l.delta), 0) AS total FROM people p"
                    " LEFT JOIN ledger l ON l.person_id = p.id GROUP BY p.id"
                    " HAVING p.balance <> COALESCE(SUM(l.delta), 0)"
                )
            )
        ],
    )
    _listed(
        problems,
        [
            f"account {name}: balance {bal} but ledger sums to {total}"
            for name, bal, total in (
                yield from rows(
                    "SELECT a.name, a.balance, COALESCE(SUM(l.delta), 0) AS total FROM accounts a"
                    " LEFT JOIN ledger l ON l.account = a.name GROUP BY a.name"
                    " HAVING a.balance <> COALESCE(SUM(l.delta), 0)"
                )
            )
        ],
    )
    _listed(
        problems,
        [
            f"ledger entry {entry}: {legs} legs summing to {total}, not two legs summing to 0"
            for entry, legs, total in (
                yield from rows(
                    "SELECT entry, COUNT(*), SUM(delta) AS total FROM ledger GROUP BY entry"
                    " HAVING SUM(delta) <> 0 OR COUNT(*) <> 2"
                )
            )
        ],
    )
    _listed(
        problems,
        [
            f"person {pid} has a negative balance {bal}"
            for pid, bal in (yield from rows("SELECT id, balance FROM people WHERE balance < 0"))
        ],
    )

    accounts = dict((yield from rows("SELECT name, balance FROM accounts")))
    people_total = yield from value("SELECT COALESCE(SUM(balance), 0) FROM people")
    granted = yield from value(
        "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE person_id IS NOT NULL"
        f" AND reason IN ({marks(len(GRANT_REASONS))})",
        GRANT_REASONS,
    )
    house, escrow, mint = accounts.get("house", 0), accounts.get("escrow", 0), accounts.get(MINT, 0)
    if people_total + escrow + house != granted:
        problems.append(
            f"balances {people_total} + escrow {escrow} + house {house} = {people_total + escrow + house},"
            f" but {granted} coins were granted"
        )
    if -mint != granted:
        problems.append(f"the mint has paid out {-mint} coins but the grants to people total {granted}")
    if escrow < 0:
        problems.append(f"the escrow account is negative: {escrow}")

    held = yield from value("SELECT COALESCE(SUM(escrow), 0) FROM tables WHERE closed = 0")
    if held != escrow:
        problems.append(f"open tables hold {held} coins in escrow but the escrow account has {escrow}")
    _listed(
        problems,
        [
            f"closed table {tid} still holds {held} coins in escrow"
            for tid, held in (
                yield from rows("SELECT id, escrow FROM tables WHERE closed = 1 AND escrow <> 0")
            )
        ],
    )
    _listed(
        problems,
        [
            f"table {tid} says it holds {held} in escrow but its escrow movements sum to {moved}"
            for tid, held, moved in (
                yield from rows(
                    "SELECT t.id, t.escrow, COALESCE(SUM(l.delta), 0) AS moved FROM tables t"
                    " LEFT JOIN ledger l ON l.table_id = t.id AND l.account = 'escrow'"
                    " GROUP BY t.id HAVING t.escrow <> COALESCE(SUM(l.delta), 0)"
                )
            )
        ],
    )
    if version >= SEATS_VERSION:
        yield from _check_seats(problems)
    triggers = {
        row[0]
        for row in (
            yield from rows(
                "SELECT name FROM sqlite_schema WHERE type = 'trigger'",
                postgres="SELECT tgname FROM pg_trigger"
                " WHERE tgrelid = 'ledger'::regclass AND tgenabled <> 'D'",
            )
        )
    }
    for trigger in ("ledger_no_update", "ledger_no_delete"):
        if trigger not in triggers:
            problems.append(f"the ledger is not append-only: trigger {trigger} is missing")

    people_count, ledger_rows, open_tables = yield from _first_row(
        "SELECT (SELECT COUNT(*) FROM people), (SELECT COUNT(*) FROM ledger),"
        " (SELECT COUNT(*) FROM tables WHERE closed = 0)"
    )
    figures = {
        "version": version,
        "people": people_count,
        "ledger_rows": ledger_rows,
        "open_tables": open_tables,
        "granted": granted,
        "balances": people_total,
        "escrow": escrow,
        "house": house,
    }
    summary = (
        f"schema v{version}, {people_count} people, {ledger_rows} ledger rows, {open_tables} open tables;"
        f" granted {granted:,} = balances {people_total:,} + escrow {escrow:,} + house {house:,}"
    )
    return CheckReport(not problems, tuple(problems), summary, figures)


def _first_row(text: str) -> Query[Any]:
    return (yield from rows(text))[0]


def _check_seats(problems: list[str]) -> Query[None]:
    """Every saved seat backed by its wallet, at an open table (a person sits at one: the key)."""
    _listed(
        problems,
        [
            f"table {tid} states person {pid} holds {stated} coins but their wallet holds {held}"
            for tid, pid, stated, held in (
                yield from rows(
                    "SELECT s.table_id, s.person_id, s.balance, p.balance FROM seats s"
                    " JOIN people p ON p.id = s.person_id WHERE s.balance > p.balance"
                )
            )
        ],
    )
    _listed(
        problems,
        [
            f"person {pid} is seated at table {tid}, which is {'closed' if closed else 'missing'}"
            for pid, tid, closed in (
                yield from rows(
                    "SELECT s.person_id, s.table_id, t.closed FROM seats s"
                    " LEFT JOIN tables t ON t.id = s.table_id WHERE t.id IS NULL OR t.closed = 1"
                )
            )
        ],
    )


def _listed(problems: list[str], found: list[str]) -> None:
    problems.extend(found[:SHOWN])
    if len(found) > SHOWN:
        problems.append(f"... and {len(found) - SHOWN} more like the above")
