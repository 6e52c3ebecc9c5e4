"""Writes and connection calls the storage tests run on SQLite's writer thread (and PostgreSQL's
connections), and the gate a test holds one of them at.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading

from storage.sql import Violation, rows, run


class Gate:
    """A point a write waits at, on the writer's thread, until the test opens the gate."""

    def __init__(self) -> None:
        self._reached, self._open = threading.Event(), threading.Event()

    def reached(self) -> bool:
        return self._reached.is_set()

    def open(self) -> None:
        self._open.set()

    def wait(self) -> None:
        """In the write: say it is reached, then wait until it is opened (10 s at most)."""
        self._reached.set()
        if not self._open.wait(timeout=10):
            raise TimeoutError("the test never opened the gate")


class Refused(Exception):
    """What :func:`renamed` raises when told to refuse."""


def held(sql: str, gate: Gate):
    """A write that changes something, then waits at ``gate`` with its transaction open."""
    yield from run(sql)
    gate.wait()
    return "done"


def waits_then_renames(gate: Gate):
    """A write that waits at ``gate`` before it changes anything, then renames person 1."""
    gate.wait()
    yield from run("UPDATE people SET name = 'held' WHERE id = 1")
    return "done"


def renamed(person: int, name: str, refuse: bool = False, gate: Gate | None = None):
    """A write renaming a person; told to, it then raises (once ``gate`` is opened, given one)."""
    yield from run("UPDATE people SET name = ? WHERE id = ?", (name, person))
    if not refuse:
        return name
    if gate is not None:
        gate.wait()
    raise Refused(f"{name} refused")


def name_of(person: int):
    """A write that reads a person's name (as the writes before it in its batch left it)."""
    found = yield from rows("SELECT name FROM people WHERE id = ?", (person,))
    return found[0][0]


def rename_then_collide():
    """A write that renames person 1, then goes on after a statement a unique key refused."""
    yield from run("UPDATE people SET name = 'renamed' WHERE id = 1")
    with contextlib.suppress(Violation):
        yield from run("UPDATE people SET id = 2 WHERE id = 1")
    return "handled"


def ends_its_transaction():
    """A write that ends the batch's transaction and returns (as one that swallowed a disk-full would)."""
    yield from run("ROLLBACK")
    return "went on"


def abandoned_write(gate: Gate):
    """A write that changes a balance, waits at ``gate``, then raises: nothing of it is kept."""
    yield from run("UPDATE people SET balance = 1 WHERE id = 1")
    gate.wait()
    raise Refused("abandoned")


_statements: list[str] = []


def pragma(conn: sqlite3.Connection, name: str) -> object:
    return conn.execute(f"PRAGMA {name}").fetchall()[0][0]


def set_pragma(conn: sqlite3.Connection, name: str, value: object) -> None:
    conn.execute(f"PRAGMA {name} = {value}")


def execute(conn: sqlite3.Connection, sql: str) -> list[tuple]:
    return [tuple(row) for row in conn.execute(sql).fetchall()]


def start_tracing(conn: sqlite3.Connection) -> None:
    """Keep each statement the writer runs from now on (SQLite's trace of its connection)."""
    _statements.clear()
    conn.set_trace_callback(_statements.append)


def stop_tracing(conn: sqlite3.Connection) -> list[str]:
    """The statements kept since :func:`start_tracing`."""
    conn.set_trace_callback(None)
    return list(_statements)
