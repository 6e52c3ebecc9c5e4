"""What people did this round, as ``ViewState.moves`` keeps it: the one place that reads it."""

from __future__ import annotations

from bot.model.live_table import Acted, ViewState

FOLD = "fold"


def acted(view: ViewState, person: int) -> Acted:
    """``person``'s last move this round (an empty one: nothing done yet)."""
    return next((move for move in reversed(view.moves) if move.person == person), Acted(person))


def since_turn(view: ViewState, person: int) -> list[Acted]:
    """The moves made since ``person``'s last one (all of this round's, before their first)."""
    last = max((at for at, move in enumerate(view.moves) if move.person == person), default=-1)
    return view.moves[last + 1 :]


def folded_on_timeout(view: ViewState, person: int) -> bool:
    """Whether the deadline folded ``person`` (showhand: the table says so instead of "folded")."""
    last = acted(view, person)
    return last.timed_out and last.move == FOLD


def folded_as(view: ViewState, person: int) -> str:
    """How ``person``'s fold is told (showhand): ``timed_out`` (the deadline folded them),
    ``autopilot_folded`` (autopilot, 托管, folded them: there was a bet to call) or ``folded``."""
    if folded_on_timeout(view, person):
        return "timed_out"
    last = acted(view, person)
    return "autopilot_folded" if last.move == FOLD and last.autopilot else "folded"
