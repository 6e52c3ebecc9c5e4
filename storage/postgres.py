"""PostgreSQL, for a bot that outgrows one SQLite file: chosen by ``PAIJU_DATABASE_URL``.

A pool of ``asyncpg`` connections. Writes are committed in batches on one connection at a time
(``storage/commits.py``: the same group commit, the same savepoints, as on SQLite), so this
process's writes are serialized and committed in the order they were made; reads take any other
connection and see the last committed state. Between processes, the rows a write changes are
locked until its commit (a saved table is read ``FOR UPDATE`` before it is changed), and the
schema's constraints stay the last word on every coin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from storage.commits import GroupCommit, Outcome
from storage.on_postgres import prepare_connection, run_query
from storage.sql import Query

T = TypeVar("T")
SCHEMES = ("postgresql://", "postgres://")
POOL_SIZE = 10  # connections at most: one writes at a time, the others read


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
        self.commits = GroupCommit(self._run_batch)

    async def _run_batch(self, batch: Query[list[Outcome]]) -> list[Outcome]:
        return await self._run(batch)

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


async def open_postgres(url: str, migrate: Callable[[], Query[int]]) -> PostgresBackend:
    """Connect to the database at ``url`` and bring its schema up to date."""
    pool = await asyncpg.create_pool(url, min_size=1, max_size=POOL_SIZE, init=prepare_connection)
    try:
        async with pool.acquire() as conn:
            await run_query(conn, migrate())
    except BaseException:
        await pool.close()
        raise
    return PostgresBackend(url, pool)
