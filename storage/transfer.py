"""Move a bot from its SQLite file to PostgreSQL: ``python -m storage migrate-to postgresql://…``.

Everything moves, in one transaction: people and their coins, the ledger (with its ids, so every
idempotency key and entry stays as it was), chats and their settings, open and closed tables with
their saved state (a restarted bot re-arms their turns), rounds with their proofs, seats, and the
updates already taken (a redelivered update is still handled once). It is refused, with nothing
done, while a bot runs on the file or on the database, if the file fails its check, or if the
database holds anything already. Before the commit the database's books are checked and must
show the file's figures exactly; the file itself is left as it was (keep it as a backup).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg

from storage.check import CheckReport, audit, check_database
from storage.errors import StorageError
from storage.exclusive import hold_database
from storage.on_postgres import numbered, prepare_connection, run_query
from storage.postgres import connect, hold_postgres, without_password
from storage.schema import migrate
from storage.sql import marks

# In the order their foreign keys allow; ``accounts`` exists already (its three rows: balances set).
COPIED = (
    "people",
    "chats",
    "tables",
    "ledger",
    "rounds",
    "round_results",
    "round_moves",
    "seats",
    "updates_taken",
)
IDENTITIES = ("tables", "ledger", "rounds")  # ids kept: their sequences continue after the last
FIGURES = ("people", "ledger_rows", "open_tables", "granted", "balances", "escrow", "house")


class TransferRefused(StorageError):
    """Nothing was moved; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def migrate_to(source: str | Path, url: str) -> CheckReport:
    """Copy the SQLite file ``source`` into the empty PostgreSQL database at ``url``; the check of
    the database after the copy (its figures are the file's)."""
    path = Path(source)
    if not path.is_file():
        raise TransferRefused(f"there is no database file at {path}")
    with hold_database(path):  # DatabaseInUse while a bot runs on the file
        before = check_database(path)
        if not before.ok:
            raise TransferRefused(f"{path} fails its check: " + "; ".join(before.problems[:3]))
        held = await hold_postgres(url)  # DatabaseInUse while a bot runs on the database
        try:
            conn = await connect(url)
            try:
                await prepare_connection(conn)
                await run_query(conn, migrate())
                return await _copy(path, conn, url, before)
            finally:
                await conn.close()
        finally:
            held.release()


async def _copy(path: Path, conn: asyncpg.Connection, url: str, before: CheckReport) -> CheckReport:
    source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        async with conn.transaction():
            if await conn.fetchval("SELECT EXISTS (SELECT 1 FROM people) OR EXISTS (SELECT 1 FROM chats)"):
                raise TransferRefused(
                    f"the database {without_password(url)} holds data already: give an empty one"
                )
            for name, balance in source.execute("SELECT name, balance FROM accounts"):
                await conn.execute("UPDATE accounts SET balance = $1 WHERE name = $2", balance, name)
            for table in COPIED:
                await _copy_table(source, conn, table)
            for table in IDENTITIES:
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false)"
                    f" FROM {table}"
                )
            after = await run_query(conn, audit())
            moved = {name: after.figures.get(name) for name in FIGURES}
            kept = {name: before.figures.get(name) for name in FIGURES}
            if not after.ok or moved != kept:
                raise TransferRefused(
                    f"the copy does not check out (file {kept}, database {moved}): "
                    + "; ".join(after.problems[:3])
                )
            return after
    finally:
        source.close()


async def _copy_table(source: sqlite3.Connection, conn: asyncpg.Connection, table: str) -> None:
    cursor = source.execute(f"SELECT * FROM {table}")
    columns = [column[0] for column in cursor.description]
    statement = numbered(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks(len(columns))})")
    while batch := cursor.fetchmany(5_000):
        await conn.executemany(statement, batch)
