"""PostgreSQL, for a bot that outgrows one SQLite file: chosen by ``PAIJU_DATABASE_URL``.

A pool of ``asyncpg`` connections. Writes are committed in batches (``storage/commits.py``: the
same group commit as on SQLite), on ``WRITE_LANES`` connections at once: the
writes about one table keep their order (its lane), the others may commit in any order; reads take
any other connection and see the last committed state. Between processes, the rows a write changes are
locked until its commit (a saved table is read ``FOR UPDATE`` before it is changed), and the
schema's constraints stay the last word on every coin.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from storage.check import CheckReport, books
from storage.commits import GroupCommit, Job, Outcome, transactions
from storage.errors import DatabaseInUse, DatabaseUnreachable
from storage.on_postgres import prepare_connection, run_query
from storage.sql import Query

T = TypeVar("T")
SCHEMES = ("postgresql://", "postgres://")
POOL_SIZE = 12  # connections at most: WRITE_LANES write at once, the others read
WRITE_LANES = 4  # lines of write batches committed at once (storage/commits.py)
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
    """A pool of connections to one PostgreSQL database, and the group commit on it."""

    postgresql = True

    def __init__(self, url: str, pool: asyncpg.Pool) -> None:
        self.path = without_password(url)
        self.url = url
        self.pool = pool
        self.commits = GroupCommit(self._run_batch, lanes=WRITE_LANES, batch=1)

    async def _run_batch(self, jobs: Sequence[Job]) -> list[Outcome]:
        return await self._run(transactions(jobs))

    async def read(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a connection of the pool, each statement on its own (autocommit)."""
        return await self._run(fn(*args, **kwargs))

    async def _run(self, query: Query[T]) -> T:
        async with self.pool.acquire() as conn:
            try:
                return await run_query(conn, query)
            finally:
                if conn.is_in_transaction():  # cut off mid-transaction (a cancel, a lost server)
                    conn.terminate()  # never back into the pool holding an open transaction

    async def close(self) -> None:
        """Let the writes already made finish, then close the pool's connections (again: no-op)."""
        await self.commits.drain()
        await self.pool.close()


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

    def __init__(self, path: str, conn: asyncpg.Connection | None) -> None:
        self.database = path
        self._conn = conn

    @property
    def held(self) -> bool:
        return self._conn is not None

    @property
    def conn(self) -> asyncpg.Connection:
        """The connection that holds the lock (its holder may keep other session locks on it)."""
        assert self._conn is not None, "released"
        return self._conn

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
    return PostgresLock(without_password(url), conn)


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
