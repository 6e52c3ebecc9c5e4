"""PostgreSQL, for a bot that outgrows one SQLite file: chosen by ``PAIJU_DATABASE_URL``.

A pool of ``asyncpg`` connections. Each write is a transaction of its own on a connection of the
pool (no group commit: the server commits concurrent transactions together by itself, and one
transaction holding the row locks of several writes, taken in their order, would wait in a cycle
with another, a deadlock). The writes about one thing (a table; ``key``) commit one after the
other in the order they were made, those without a key likewise; the others side by side. Reads
take any connection and see the last committed state. Between processes, the rows a write changes
are locked until its commit (a saved table is read ``FOR UPDATE`` before it is changed), and the
schema's constraints stay the last word on every coin.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from storage.check import CheckReport, books
from storage.errors import DatabaseInUse, DatabaseUnreachable, StorageError
from storage.on_postgres import prepare_connection, run_query
from storage.sql import Query, in_transaction, transaction

T = TypeVar("T")
SCHEMES = ("postgresql://", "postgres://")
POOL_SIZE = 12  # connections at most, for writes and reads alike
CONNECT_SECONDS = 10.0
BOT_LOCK = 0x7061_696B  # "paik": the advisory lock a running bot holds on its database


def is_postgres_url(target: str) -> bool:
    return target.startswith(SCHEMES)


def without_password(url: str) -> str:
    """The URL as it may be shown in logs and replies: its password, if any, left out."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


class PostgresBackend:
    """A pool of connections to one PostgreSQL database; each write a transaction of its own."""

    postgresql = True

    def __init__(self, url: str, pool: asyncpg.Pool) -> None:
        self.path = without_password(url)
        self.url = url
        self.pool = pool
        self.loop = asyncio.get_running_loop()  # (the pool's)
        self._last: dict[int | None, asyncio.Task[Any]] = {}  # each key's last write, while it runs
        # Told each write's seconds (its wait for the one before it included) and whether the
        # database took it (committed, or undone because the write itself raised).
        self.on_batch: Callable[[float, bool], None] | None = None

    async def write(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """:meth:`write_in`, with the writes made without a key."""
        return await self.write_in(None, fn, *args, **kwargs)

    async def write_in(self, key: int | None, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a transaction of its own, committed if it returns, undone if
        it raises (the error is raised here), after the writes made before it with the same ``key``.
        A cancelled caller's write is all or nothing, and decided when the caller's
        ``CancelledError`` is raised: if it had not begun it never will; if it was running it is
        undone unless it had returned, and the caller waits for its end, so what it reads next is
        final."""
        write = self._start(key, fn, args, kwargs)
        try:
            return await asyncio.shield(write.task)
        except asyncio.CancelledError:
            write.abandoned = True
            if write.begun:
                await asyncio.wait([write.task])  # committed or undone, for good
            raise

    def write_later(
        self, key: int | None, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any
    ) -> asyncio.Future[T]:
        """:meth:`write_in`, begun now and not waited for: its outcome, which no caller's cancel undoes."""
        return asyncio.shield(self._start(key, fn, args, kwargs).task)

    async def write_joined(
        self,
        key: int,
        fold: Callable[[dict[str, Any], dict[str, Any]], None],
        fn: Callable[..., Query[T]],
        *args: Any,
        **kwargs: Any,
    ) -> T:
        """:meth:`write_later`, waited for: here no write joins another (``fold`` is SQLite's
        group commit's); a caller that stops waiting does not undo it."""
        return await self.write_later(key, fn, *args, **kwargs)

    def seal(self, key: int, fn: Callable[..., Any]) -> None:
        """(No write joins another here: nothing to seal.)"""

    async def drain(self) -> None:
        """Wait until every write made so far has ended (not those made meanwhile)."""
        if self._last:
            await asyncio.wait(list(self._last.values()))

    def _start(
        self, key: int | None, fn: Callable[..., Query[T]], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> _Write[T]:
        if asyncio.get_running_loop() is not self.loop:
            raise RuntimeError("the store was opened on another event loop")
        write: _Write[T] = _Write()
        write.task = self.loop.create_task(self._transaction(write, self._last.get(key), fn(*args, **kwargs)))
        self._last[key] = write.task
        write.task.add_done_callback(functools.partial(self._ended, key))
        return write

    def _ended(self, key: int | None, task: asyncio.Task[Any]) -> None:
        if self._last.get(key) is task:
            del self._last[key]
        if not task.cancelled():
            task.exception()  # (read: its caller may have stopped waiting)

    async def _transaction(self, write: _Write[T], before: asyncio.Task[Any] | None, query: Query[T]) -> T:
        """The write, once the one made before it with its key has ended (unless abandoned by then)."""
        made = time.perf_counter()
        if before is not None:
            await asyncio.wait([before])
        if write.abandoned:
            query.close()
            return cast(T, None)
        failed = True
        try:
            async with self.pool.acquire() as conn:
                if write.abandoned:
                    query.close()
                    return cast(T, None)
                write.begun = True
                try:
                    result = await run_query(conn, transaction(_unless_abandoned(write, query)))
                finally:
                    if conn.is_in_transaction():  # cut off mid-transaction (a lost server)
                        conn.terminate()  # never back into the pool holding an open transaction
            failed = False
            return result
        except _Abandoned:
            failed = False
            return cast(T, None)
        finally:
            if self.on_batch is not None and (write.begun or not write.abandoned):  # (not skipped)
                self.on_batch(time.perf_counter() - made, not failed or write.raised)

    async def read(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a connection of the pool, each statement on its own (autocommit)."""
        async with self.pool.acquire() as conn:
            try:
                return await run_query(conn, fn(*args, **kwargs))
            finally:
                if conn.is_in_transaction():  # cut off mid-transaction (a cancel, a lost server)
                    conn.terminate()  # never back into the pool holding an open transaction

    async def close(self) -> None:
        """Let the writes already made finish, then close the pool's connections (again: no-op)."""
        await self.drain()
        await self.pool.close()


class _Write(Generic[T]):
    """One write: its task, and what its caller and the task tell each other about a cancel."""

    __slots__ = ("abandoned", "begun", "raised", "task")

    def __init__(self) -> None:
        self.task: asyncio.Task[T]
        self.abandoned = False  # its caller stopped waiting (cancelled)
        self.begun = False  # its transaction is begun (it has a connection)
        self.raised = False  # the write itself raised (or was abandoned): undone, the database fine


class _Abandoned(Exception):
    """The caller of a running write was cancelled before it returned (nobody sees this)."""


def _unless_abandoned(write: _Write[T], query: Query[T]) -> Query[T]:
    """``query``, raising if its caller stopped waiting before it returned (it is undone then), or
    if it ended its transaction itself and went on (nothing more of it may run outside one)."""
    try:
        result = yield from query
    except Exception:
        if (yield from in_transaction()):  # (else the database ended it: not the write's own error)
            write.raised = True
        raise
    if write.abandoned:
        write.raised = True
        raise _Abandoned
    if not (yield from in_transaction()):
        raise StorageError("a write went on after its transaction had ended")
    return result


@contextlib.contextmanager
def reaching(url: str) -> Iterator[None]:
    """A failure to connect to ``url`` as ``DatabaseUnreachable``, with the server's reason."""
    try:
        yield
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        raise DatabaseUnreachable(without_password(url), str(error) or type(error).__name__) from error


async def connect(url: str, **options: Any) -> asyncpg.Connection:
    """One connection (``DatabaseUnreachable`` with the server's reason if there is none to have)."""
    with reaching(url):
        return await asyncpg.connect(url, timeout=CONNECT_SECONDS, **options)


async def open_postgres(url: str, migrate: Callable[[], Query[int]]) -> PostgresBackend:
    """Connect to the database at ``url`` and bring its schema up to date."""
    pool = asyncpg.create_pool(
        url, min_size=1, max_size=POOL_SIZE, init=prepare_connection, timeout=CONNECT_SECONDS
    )
    with reaching(url):
        await pool
    try:
        async with pool.acquire() as conn:
            await run_query(conn, migrate())
    except BaseException:
        await pool.close()
        raise
    return PostgresBackend(url, pool)


class PostgresLock:
    """A running bot's hold on its database: an advisory lock held by one connection of its own,
    which the server lets go when that connection ends, however the bot ends (SIGKILL included)."""

    def __init__(self, url: str, conn: asyncpg.Connection | None, *, shared: bool = False) -> None:
        self.database = without_password(url)
        self._url = url  # (to take it again: :meth:`take_again`)
        self._shared = shared
        self._conn = conn

    @property
    def held(self) -> bool:
        return self._conn is not None

    @property
    def conn(self) -> asyncpg.Connection:
        """The connection that holds the lock (its holder may keep other session locks on it)."""
        assert self._conn is not None, "released"
        return self._conn

    async def take_again(self) -> None:
        """Its connection ended (the server restarted, the network failed, or the session was
        ended): take the lock again, as it was taken, on a new connection (``DatabaseInUse`` or
        ``DatabaseUnreachable`` as :func:`hold_postgres`; the lock is then still lost)."""
        assert self._conn is not None, "released: not taken again"
        conn = await _take(self._url, self._shared)
        lost, self._conn = self._conn, conn
        lost.terminate()  # (ended already: nothing of it is left to hold)

    def release(self) -> None:
        """Let another bot have the database; releasing twice does nothing."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()  # the session ends at once, and its advisory lock with it

    def __repr__(self) -> str:
        return f"PostgresLock({self.database!r}, held={self.held})"


def _who() -> str:
    return f"paiju pid {os.getpid()} on {socket.gethostname()}"[:63]  # the server keeps 63 bytes


async def hold_postgres(url: str, *, shared: bool = False) -> PostgresLock:
    """Take the database, or raise :class:`DatabaseInUse` naming who holds it (their process and
    host, as they told the server). Never waits. The workers of a bot share it (``shared``: any
    number at once, ``bot/cluster/workers.py``); a tool that must have it alone (``migrate-to``) holds it
    whole, so neither starts while the other runs. The lock's connection is the holder's to use
    (``PostgresLock.conn``): the worker keeps its partitions' locks on it too."""
    return PostgresLock(url, await _take(url, shared), shared=shared)


async def _take(url: str, shared: bool) -> asyncpg.Connection:
    """A new connection holding the bot's lock (see :func:`hold_postgres`)."""
    conn = await connect(url, server_settings={"application_name": _who()})
    try:
        taking = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
        if not await conn.fetchval(f"SELECT {taking}($1)", BOT_LOCK):
            holder = await conn.fetchval(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1"
                " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                " ORDER BY l.pid LIMIT 1",
                BOT_LOCK,
            )
            raise DatabaseInUse(without_password(url), None, holder or None)
    except BaseException:
        conn.terminate()
        raise
    return conn


async def check_postgres(url: str) -> CheckReport:
    """The integrity check (``storage/check.py``) on a PostgreSQL database, in one snapshot."""
    try:
        conn = await connect(url)
    except DatabaseUnreachable as error:
        return CheckReport(False, (str(error),))
    try:
        await prepare_connection(conn)
        return await run_query(conn, books())
    except asyncpg.PostgresError as error:
        return CheckReport(False, (f"cannot read {without_password(url)}: {error}",))
    finally:
        await conn.close()
