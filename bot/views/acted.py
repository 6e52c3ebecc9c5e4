"""What a person last did this round, as ``ViewState.acted`` keeps it: the one place that writes
and reads those saved strings.

The format is the one tables have always been saved with, so a table saved by an older bot reads
the same: ``"<move>"`` or ``"<move>:<coins paid>"`` (``draw``, ``banker``, ``call:100``), with
``timeout_`` before a move the deadline made for the person (a fold the clock made: ``timeout_``
then ``fold:0``), and a bare ``timeout`` when the deadline acted and the engine's state says what
it did (stood, forfeited, declined the bank).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.live import ViewState

TIMED_OUT = "timeout"
FOLD = "fold"


@dataclass(frozen=True, slots=True)
class Acted:
    """A person's last move: its action code ("" when the deadline alone is known), the coins it
    paid, and whether the deadline made it."""

    move: str
    paid: int
    timed_out: bool


def record(move: str = "", paid: int | None = None, *, timed_out: bool = False) -> str:
    """The saved string of a move (see the module's docstring)."""
    head = f"{TIMED_OUT}_{move}" if timed_out and move else TIMED_OUT if timed_out else move
    return head if paid is None else f"{head}:{paid}"


def read(text: str) -> Acted:
    """A saved string back as an ``Acted`` (an empty string: nothing done yet)."""
    head, _, paid = text.partition(":")
    timed_out = head == TIMED_OUT or head.startswith(TIMED_OUT + "_")
    move = head.removeprefix(TIMED_OUT).removeprefix("_") if timed_out else head
    return Acted(move, int(paid or 0), timed_out)


def acted(view: ViewState, person: int) -> Acted:
    return read(view.acted.get(person, ""))


def folded_on_timeout(view: ViewState, person: int) -> bool:
    """Whether the deadline folded ``person`` (showhand: the table says so instead of "folded")."""
    last = acted(view, person)
    return last.timed_out and last.move == FOLD
