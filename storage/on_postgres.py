"""Run a storage function (``storage/sql.py``) on an ``asyncpg`` connection.

Statements are SQLite's text with ``?`` placeholders unless they carry their own PostgreSQL text;
either way the placeholders are numbered here (``$1``, ``$2`` …). Each statement is one round trip;
asyncpg keeps each text prepared on its connection. ``numeric`` values that are whole numbers come
back as ``int`` (``SUM`` of a ``bigint`` column is ``numeric`` on PostgreSQL, an integer on SQLite).
"""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import TypeVar

import asyncpg

from storage.errors import StorageError
from storage.sql import Query, Result, Sql, Violation, Want

T = TypeVar("T")

IDLE_IN_TRANSACTION = "5s"


async def run_query(conn: asyncpg.Connection, query: Query[T]) -> T:
    """Run a storage function's statements on ``conn``; what it returns.

    A statement's error is raised into the function where it yielded the statement (a
    constraint's as :class:`Violation`), so the function may handle it.
    """
    try:
        statement = next(query)
        while True:
            try:
                result = await _execute(conn, statement)
            except asyncpg.IntegrityConstraintViolationError as error:
                statement = query.throw(Violation.of(error))
                continue
            except Exception as error:  # the server's, or asyncpg's own (an argument it cannot send)
                statement = query.throw(error)
                continue
            statement = query.send(result)
    except StopIteration as done:
        returned: T = done.value  # what the storage function returned (StopIteration holds it untyped)
        return returned


async def _execute(conn: asyncpg.Connection, statement: Sql) -> Result:
    if statement.want is Want.IN_TRANSACTION:
        return Result([], in_transaction=conn.is_in_transaction())
    text = numbered(statement.text_for(postgresql=True))
    if not text:  # a statement for SQLite only
        return Result([], 0)
    if statement.want is Want.MANY:
        await conn.executemany(text, statement.args)
        return Result([])
    if statement.want is Want.ROWS:
        return Result(await conn.fetch(text, *statement.args))
    status = await conn.execute(text, *statement.args)
    if text == "COMMIT" and status == "ROLLBACK":
        # An error aborted the transaction (a storage function caught it and went on): PostgreSQL
        # then answers COMMIT by rolling back, with no error of its own. Nothing stands: say so.
        raise AbortedTransaction("the transaction was aborted by an earlier error: nothing was committed")
    return Result([], changed(status))


class AbortedTransaction(StorageError):
    """COMMIT found the transaction aborted (a storage function went on after a statement failed)."""


def changed(status: str) -> int:
    """The rows a command changed, from its status (``UPDATE 3``, ``INSERT 0 1``; -1: not said)."""
    last = status.rpartition(" ")[2]
    return int(last) if last.isdigit() else -1


@functools.lru_cache(maxsize=1024)
def numbered(text: str) -> str:
    """SQLite's ``?`` placeholders as PostgreSQL's ``$1``, ``$2`` … (none inside a quoted string)."""
    if "?" not in text:
        return text
    out: list[str] = []
    count = 0
    quoted = False
    for char in text:
        if char == "'":
            quoted = not quoted
        if char == "?" and not quoted:
            count += 1
            out.append(f"${count}")
        else:
            out.append(char)
    return "".join(out)


def _number(text: str) -> int | Decimal:
    number = Decimal(text)
    return int(number) if number == number.to_integral_value() else number


async def prepare_connection(conn: asyncpg.Connection) -> None:
    """Each new connection of the pool: whole ``numeric`` values as ``int``; a transaction left
    open ``IDLE_IN_TRANSACTION`` by its process (stopped, hung: it holds row locks a new owner of
    its partition waits for) is ended by the server."""
    await conn.execute(f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION}'")
    await conn.set_type_codec("numeric", encoder=str, decoder=_number, schema="pg_catalog", format="text")
