"""Writes and connection calls the tests send to SQLite's writer process.

The writer runs in a process of its own (``storage/writer_process.py``), which imports what it
is sent by name: these live here, in a module it can import, not in the test files. A test holds
a write where it wants with a :class:`Gate` (files: the writer is another process).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from storage import wallet
from storage.sql import Violation, rows, run


@dataclass(frozen=True)
class Gate:
    """A point a write waits at, in the writer, until the test opens the gate."""

    folder: Path

    @classmethod
    def made_in(cls, folder: Path) -> Gate:
        return cls(Path(tempfile.mkdtemp(prefix="gate-", dir=folder)))

    def reached(self) -> bool:
        return (self.folder / "reached").exists()

    def open(self) -> None:
        (self.folder / "open").touch()

    def wait(self) -> None:
        """In the writer: say it is reached, then wait until it is opened (10 s at most)."""
        (self.folder / "reached").touch()
        give_up = time.monotonic() + 10
        while not (self.folder / "open").exists():
            if time.monotonic() > give_up:
                raise TimeoutError("the test never opened the gate")
            time.sleep(0.002)


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


def gives_a_row(person: int, name: str):
    """A write renaming a person that returns SQLite's own row (which cannot be pickled)."""
    yield from run("UPDATE people SET name = ? WHERE id = ?", (name, person))
    found = yield from rows("SELECT name FROM people WHERE id = ?", (person,))
    return found[0]


class Odd(Exception):
    """An error whose constructor takes other arguments than it keeps (it does not unpickle)."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")


def raises_odd():
    """A write that raises :class:`Odd`."""
    yield from run("UPDATE people SET name = 'odd' WHERE id = 1")
    raise Odd("odd", "refused")


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


def _blind(people, named):
    yield from ()  # a storage function that asks the database nothing
    return {**{p: 10**9 for p in people}, **{n: 10**9 for n in named}}


_SEEING = wallet._balances


# -- calls on the writer's connection (``WriterProcess.on_connection``) --------------------------


def fool_the_precheck(conn: sqlite3.Connection, fooled: bool) -> None:
    """The wallet's precheck reads every balance as 10**9 (fooled), or reads them again."""
    wallet._balances = _blind if fooled else _SEEING


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


def echo(conn: sqlite3.Connection, value: object) -> object:
    """``value`` as it went in (a call's result comes back as itself, bytes too)."""
    return value


def returns(value: object):
    """A write that changes nothing and gives ``value`` back."""
    yield from run("SELECT 1")
    return value


def a_row(conn: sqlite3.Connection) -> object:
    """A database row: it does not pickle."""
    return conn.execute("SELECT 1 AS one").fetchone()


def dies_at_start(link: object, path: str, code: str) -> None:
    """A writer process that ends before it says it started (in place of ``writer_process._serve``)."""
    os._exit(3)
