"""Run a storage function (``storage/sql.py``) on a ``sqlite3`` connection, in the calling thread.

The whole function runs in one go, whatever the number of statements: one call on a connection's
aiosqlite thread (``storage/thread.py``), a read on the reader's, a batch of writes on the writer's.
"""

from __future__ import annotations

import sqlite3
from typing import TypeVar

from storage.sql import Query, Result, Sql, Violation, Want

T = TypeVar("T")


def run_query(conn: sqlite3.Connection, query: Query[T]) -> T:
    """Run a storage function's statements on ``conn``, in this thread; what it returns.

    A statement's error is raised into the function where it yielded the statement (a
    constraint's as :class:`Violation`), so the function may handle it.
    """
    try:
        statement = next(query)
        while True:
            try:
                result = _execute(conn, statement)
            except sqlite3.IntegrityError as error:
                statement = query.throw(Violation.of(error))
                continue
            except sqlite3.Error as error:
                statement = query.throw(error)
                continue
            statement = query.send(result)
    except StopIteration as done:
        returned: T = done.value  # what the storage function returned (StopIteration holds it untyped)
        return returned


def _execute(conn: sqlite3.Connection, statement: Sql) -> Result:
    if statement.want is Want.IN_TRANSACTION:
        return Result([], in_transaction=conn.in_transaction)
    if not statement.text:  # a statement for PostgreSQL only
        return Result([], 0)
    if statement.want is Want.MANY:
        conn.executemany(statement.text, statement.args)
        return Result([])
    # One statement's args are a Sequence (only Want.MANY's are an Iterable of them).
    cursor = conn.execute(statement.text, statement.args)  # type: ignore[arg-type]
    if statement.want is Want.ROWS:
        return Result(cursor.fetchall())
    return Result([], cursor.rowcount)
