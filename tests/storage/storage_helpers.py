"""Helpers shared by the storage tests."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from games.events import ESCROW, Paid, PayReason

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class FakeClock:
    """A clock the test moves by hand (UTC, aware)."""

    moment: datetime = datetime(2025, 3, 1, 4, 0, tzinfo=UTC)

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


def ante(person: int, amount: int) -> Paid:
    return Paid(person, ESCROW, amount, PayReason.ANTE)


def pot(person: int, amount: int) -> Paid:
    return Paid(ESCROW, person, amount, PayReason.POT)


def settle(payer: int, payee: int, amount: int) -> Paid:
    return Paid(payer, payee, amount, PayReason.SETTLEMENT)


STATE = {"phase": "playing", "seats": [1, 2, 3], "pad": "x" * 64}
