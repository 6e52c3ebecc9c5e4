"""SQLite, the embedded default: one file, a reader connection on its own thread, and the writer in
a process of its own (``storage/writer_process.py``).

A storage function (``storage/sql.py``) runs whole where its connection lives, in one call: a read
on the reader's thread (``on_thread``), a write in the writer process, not one round trip per
statement. Writes are committed in batches there (``storage/commits.py``), serialized in this bot
and across processes by SQLite's write lock (the busy timeout waits for another). Reads go to their
own connection: in WAL mode they see the last committed state and never wait for a write in
progress.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import aiosqlite

from storage.backup import backup_before_migrating
from storage.commits import GroupCommit
from storage.files import create_private, make_private
from storage.on_sqlite import run_query
from storage.sql import Query
from storage.thread import on_thread
from storage.writer_process import WriterProcess, configure

T = TypeVar("T")


async def _connect(path: str, *, writer: bool) -> aiosqlite.Connection:
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        await on_thread(db, configure, writer)
    except BaseException:
        await db.close()  # its thread would otherwise keep the process alive
        raise
    return db


class SqliteBackend:
    """The database file's reader and writer, and the group commit on the writer."""

    postgresql = False

    def __init__(self, path: str, writer: WriterProcess, reader: aiosqlite.Connection) -> None:
        self.path = path
        self.writer = writer
        self.reader = reader
        self.commits = GroupCommit(writer.run_batch)

    async def read(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on the reader (query-only; in WAL mode it sees the last
        committed state and never waits for a write), in one call on its thread."""
        return await on_thread(self.reader, run_query, fn(*args, **kwargs))

    async def close(self) -> None:
        """Let the writes and reads already made finish, then close both (again: no-op).

        The reader's thread takes aiosqlite's ``close`` as one more call at the end of its queue; the
        writer process ends once its connection is closed.
        """
        await self.commits.drain()
        await self.reader.close()
        await self.writer.close()


async def open_sqlite(
    path: str, migrate: Callable[[], Query[int]], log: Callable[[str, str], None]
) -> SqliteBackend:
    """Open (creating or upgrading in place, after a backup) the database file at ``path``."""
    create_private(path)  # 0600 from the start: it will hold every open round's deck
    upgrading = await _connect(path, writer=True)
    try:
        if (copy := await on_thread(upgrading, backup_before_migrating, path)) is not None:
            log("the database is backed up at %s before its schema is upgraded", str(copy))
        await on_thread(upgrading, run_query, migrate())  # every step in its own transaction, in one call
        make_private(path)  # the -wal and -shm now exist; and a database made 0644 earlier
        reader = await _connect(path, writer=False)
        try:
            writer = await WriterProcess.start(path)
        except BaseException:
            await reader.close()
            raise
    finally:
        await upgrading.close()
    return SqliteBackend(path, writer, reader)
