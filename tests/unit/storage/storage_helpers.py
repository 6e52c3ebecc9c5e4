"""Helpers shared by the storage tests: a clock moved by hand, the ledger's usual payments, and
child processes (``python -m storage``, another process holding a database)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from games.events import ESCROW, Paid, PayReason

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2025, 3, 1, 4, 0, tzinfo=UTC)  # the tests' present: 1 March 2025, 04:00 UTC


@dataclass
class FakeClock:
    """A clock the test moves by hand (UTC, aware)."""

    moment: datetime = NOW

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **kwargs: float) -> None:
        self.moment += timedelta(**kwargs)


def subprocess_env() -> dict[str, str]:
    """The environment for a child Python that must import this checkout's packages."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def python() -> str:
    return sys.executable


def storage_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m storage *args`` in a child process, its output captured."""
    return subprocess.run(
        [python(), "-m", "storage", *args],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def count_people(path: Path) -> int:
    """How many people the database at ``path`` knows (opened read-only)."""
    with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM people").fetchone()[0]


HOLDER = """
import sys
from storage import hold_database

lock = hold_database(sys.argv[1])
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin (or kills us)
lock.release()
print("released", flush=True)
"""


@contextmanager
def holder(db_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``db_path``: yielded once it says it holds it."""
    child = subprocess.Popen(
        [python(), "-c", HOLDER, str(db_path)],
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(60, child.kill)  # a hung child must not hang the suite
    watchdog.start()
    try:
        line = child.stdout.readline()  # returns at once if the child dies: EOF
        assert line == "held\n", child.stderr.read()
        yield child
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
        for stream in (child.stdin, child.stdout, child.stderr):
            stream.close()


def ante(person: int, amount: int) -> Paid:
    return Paid(person, ESCROW, amount, PayReason.ANTE)


def pot(person: int, amount: int) -> Paid:
    return Paid(ESCROW, person, amount, PayReason.POT)


def settle(payer: int, payee: int, amount: int) -> Paid:
    return Paid(payer, payee, amount, PayReason.SETTLEMENT)


STATE = {"phase": "playing", "seats": [1, 2, 3], "pad": "x" * 64}
