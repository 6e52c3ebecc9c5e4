"""Storage functions as generators of SQL statements: one code for SQLite and for PostgreSQL.

A storage function does no I/O. It yields each statement it wants run (a :class:`Sql`) and gets
back its :class:`Result`; what it returns is the function's answer. A driver runs it on a
connection: ``storage/sqlite.py`` on a ``sqlite3`` connection (a whole function in one call: a
read on the reader's thread, a batch of writes in the writer's process), ``storage/postgres.py``
on an ``asyncpg`` connection. A call to another
storage function is ``yield from``, so every place that waits for the database is marked, as
``await`` marks it in async code (the "sans-I/O" style of h11 and hyper-h2).

Statements are written in SQLite's dialect with ``?`` placeholders, which both drivers take: the
PostgreSQL driver numbers them (``$1``, ``$2`` …). Where the two dialects differ, a statement
carries its PostgreSQL text too (``postgres=``; an empty text: nothing to run there).

A constraint that refuses a statement (a ``CHECK``, a unique key, a foreign key, the ledger's
append-only trigger) is raised into the function at its ``yield`` as :class:`Violation`, whatever
the database, so a function may catch it where it has something better to say (and raise
that). On PostgreSQL the refusal also aborts the transaction: a function that went on would have
nothing committed, and its commit raises (``storage/on_postgres.py``) rather than say otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from storage.errors import StorageError

T = TypeVar("T")


class Want(Enum):
    """What the function needs back from a statement (a driver runs each kind its best way)."""

    ROWS = "rows"  # the rows it returns
    COUNT = "count"  # how many rows it changed
    MANY = "many"  # nothing: one statement run for each set of arguments
    IN_TRANSACTION = "in_transaction"  # no statement: is a transaction still open?


@dataclass(frozen=True, slots=True)
class Sql:
    """One statement: SQLite's text with ``?`` placeholders, its arguments, and the PostgreSQL
    text where that differs (None: the same text; empty: nothing to run on PostgreSQL)."""

    text: str
    args: Sequence[Any] | Iterable[Sequence[Any]] = ()
    want: Want = Want.ROWS
    postgres: str | None = None

    def text_for(self, postgresql: bool) -> str:
        return self.text if not postgresql or self.postgres is None else self.postgres


@dataclass(frozen=True, slots=True)
class Result:
    """What a statement gave: its rows (each indexable by position and by column name, and
    iterable over its values), and the rows it changed (-1 where that was not asked)."""

    rows: list[Any]
    count: int = -1
    in_transaction: bool = False


Query = Generator[Sql, Result, T]
"""A storage function's generator: yields statements, is sent their results, returns a ``T``."""


class Violation(StorageError):
    """A constraint of the schema refused a statement (the database's own error is the cause)."""

    @classmethod
    def of(cls, error: Exception) -> Violation:
        violation = cls(str(error))
        violation.__cause__ = error
        return violation


def rows(text: str, args: Sequence[Any] = (), *, postgres: str | None = None) -> Query[list[Any]]:
    """The rows of a query."""
    return (yield Sql(text, args, Want.ROWS, postgres)).rows


def first(text: str, args: Sequence[Any] = (), *, postgres: str | None = None) -> Query[Any | None]:
    """The first row of a query, or None."""
    found = (yield Sql(text, args, Want.ROWS, postgres)).rows
    return found[0] if found else None


def first_to_change(text: str, args: Sequence[Any] = ()) -> Query[Any | None]:
    """:func:`first`, the row to be changed in this transaction: locked against other writers until
    it ends (PostgreSQL's ``FOR UPDATE``; SQLite's write transaction holds the whole file)."""
    return (yield from first(text, args, postgres=f"{text} FOR UPDATE"))


def value(text: str, args: Sequence[Any] = (), *, postgres: str | None = None) -> Query[Any]:
    """The first column of the first row of a query, or None when it returns no row."""
    row = yield from first(text, args, postgres=postgres)
    return None if row is None else row[0]


def run(text: str, args: Sequence[Any] = (), *, postgres: str | None = None) -> Query[int]:
    """Run a statement; how many rows it changed."""
    return (yield Sql(text, args, Want.COUNT, postgres)).count


def many(text: str, arguments: Iterable[Sequence[Any]], *, postgres: str | None = None) -> Query[None]:
    """Run one statement for each set of arguments (nothing at all for none)."""
    batch = [tuple(args) for args in arguments]
    if batch:
        yield Sql(text, batch, Want.MANY, postgres)


def transaction(body: Query[T], begin: Query[None] | None = None) -> Query[T]:
    """``body`` in a transaction of its own: committed if it returns, undone if it raises (a
    transaction the database ended already is no second error: the first one says why).
    ``begin`` starts it (default: SQLite's ``BEGIN IMMEDIATE``, which takes the write lock at once,
    so a reader never has to be upgraded; PostgreSQL's ``BEGIN``, which locks rows as they are
    written)."""
    try:
        yield from (begin if begin is not None else run("BEGIN IMMEDIATE", postgres="BEGIN"))
        result = yield from body
        yield from run("COMMIT")
    except GeneratorExit:
        raise
    except BaseException:
        with contextlib.suppress(Exception):
            yield from run("ROLLBACK")
        raise
    return result


def in_transaction() -> Query[bool]:
    """Whether the connection is still inside a transaction (a database may end one on an error)."""
    return (yield Sql("", (), Want.IN_TRANSACTION)).in_transaction


def marks(count: int) -> str:
    """``?, ?, ?``: the placeholders of an ``IN (...)`` list of ``count`` values."""
    return ", ".join("?" * count)
