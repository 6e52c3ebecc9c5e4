"""SQLite, the embedded default: one file, a writer connection and a reader connection, each on
its own thread (aiosqlite).

A storage function (``storage/sql.py``) runs whole on a connection's thread in one call
(``on_thread``), not one round trip per statement. Writes are committed in batches on the writer
(``storage/commits.py``), serialized in this process and across processes by SQLite's write lock
(the busy timeout waits for another). Reads go to their own connection: in WAL mode they see the
last committed state and never wait for a write in progress.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import aiosqlite

from storage.backup import backup_before_migrating
from storage.commits import GroupCommit, Job, Outcome, transactions
from storage.files import create_private, make_private
from storage.on_sqlite import run_query
from storage.sql import Query
from storage.thread import hand_over, on_thread

T = TypeVar("T")
BUSY_TIMEOUT_MS = 5000


def configure(conn: sqlite3.Connection, writer: bool) -> None:
    """A connection of the bot's to its database file, as each of them is set up."""
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a commit survives a power cut too, not just a crash of the process.
        conn.execute("PRAGMA synchronous = FULL")
    else:
        conn.execute("PRAGMA query_only = ON")


async def _connect(path: str, *, writer: bool) -> aiosqlite.Connection:
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        await on_thread(db, configure, writer)
    except BaseException:
        await db.close()  # its thread would otherwise keep the process alive
        raise
    return db


class SqliteWriter:
    """The writer connection: its thread runs the group commit's batches, one at a time."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db
        self.closed = False

    def run_batch(self, jobs: Sequence[Job]) -> asyncio.Future[list[Outcome]]:
        """``GroupCommit``'s batch: the jobs in one transaction (``transactions``), in one call on
        the writer's thread, queued there at once (an idle writer begins it while the event loop
        goes on: the fewer passes of a busy loop a write waits for, the sooner a press's answer)."""
        return hand_over(self.db, run_query, transactions(jobs))

    async def on_connection(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` on the writer's thread, after what is queued there already."""
        return await on_thread(self.db, fn, *args)

    async def close(self) -> None:
        await self.db.close()
        self.closed = True


class SqliteBackend:
    """The database file's reader and writer, and the group commit on the writer."""

    postgresql = False

    def __init__(self, path: str, writer: SqliteWriter, reader: aiosqlite.Connection) -> None:
        self.path = path
        self.writer = writer
        self.reader = reader
        self.commits = GroupCommit(writer.run_batch)
        # The Store's writes (``storage/store.py``: ``Backend``), all through the group commit.
        self.write = self.commits.write
        self.write_in = self.commits.write_in
        self.write_later = self.commits.write_later
        self.write_joined = self.commits.write_joined
        self.seal = self.commits.seal
        self.drain = self.commits.drain

    @property
    def on_batch(self) -> Callable[[float, bool], None] | None:
        return self.commits.on_batch

    @on_batch.setter
    def on_batch(self, observer: Callable[[float, bool], None] | None) -> None:
        self.commits.on_batch = observer

    async def read(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on the reader (query-only; in WAL mode it sees the last
        committed state and never waits for a write), in one call on its thread."""
        return await on_thread(self.reader, run_query, fn(*args, **kwargs))

    async def close(self) -> None:
        """Let the writes and reads already made finish, then close both connections (again: no-op).

        Each connection's thread takes aiosqlite's ``close`` as one more call at the end of its queue.
        """
        await self.commits.drain()
        await self.reader.close()
        await self.writer.close()


async def open_sqlite(
    path: str, migrate: Callable[[], Query[int]], log: Callable[[str, str], None]
) -> SqliteBackend:
    """Open (creating or upgrading in place, after a backup) the database file at ``path``."""
    create_private(path)  # 0600 from the start: it will hold every open round's deck
    writer = await _connect(path, writer=True)
    try:
        if (copy := await on_thread(writer, backup_before_migrating, path)) is not None:
            log("the database is backed up at %s before its schema is upgraded", str(copy))
        await on_thread(writer, run_query, migrate())  # every step in its own transaction, in one call
        make_private(path)  # the -wal and -shm now exist; and a database made 0644 earlier
        reader = await _connect(path, writer=False)
    except BaseException:
        await writer.close()
        raise
    return SqliteBackend(path, SqliteWriter(writer), reader)
