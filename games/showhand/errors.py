"""Showhand's own refusals (RULES.md 2.x), made like the shared ones in ``games.errors``.

The shared errors (``NotYourTurn``, ``WrongPhase``, ``NotSeated``, ``NotInRound``, ``StaleTimer``, …)
are used as they are; these are the refusals only a betting round has.
"""

from __future__ import annotations

from games.errors import _error

CannotCheck = _error("CannotCheck", "cannot_check", "2.4", "someone has bet this round: call, raise or fold")
CannotBet = _error(
    "CannotBet", "cannot_bet", "2.4", "someone has already bet this round: call, raise or fold"
)
NothingToCall = _error("NothingToCall", "nothing_to_call", "2.4", "nobody has bet this round: check or bet")
NothingToRaise = _error(
    "NothingToRaise", "nothing_to_raise", "2.4", "nobody has bet this round: bet instead of raising"
)
CannotRaisePastCap = _error(
    "CannotRaisePastCap",
    "past_cap",
    "2.4",
    "no total may pass this round's cap, and raising stops once the largest total reaches it",
)
BadAmount = _error(
    "BadAmount",
    "bad_amount",
    "2.4",
    "bets and raises are whole multiples of the base, adding at least the base",
)
AllInNotYet = _error("AllInNotYet", "all_in_not_yet", "2.4", "all-in is only allowed after cards 4 and 5")
StakeChanged = _error(
    "StakeChanged", "stake_changed", "2.4", "the bets changed since that button was shown: look again"
)
AlreadyFolded = _error("AlreadyFolded", "already_folded", "2.4", "you have folded in this game")

__all__ = [
    "AllInNotYet",
    "AlreadyFolded",
    "BadAmount",
    "CannotBet",
    "CannotCheck",
    "CannotRaisePastCap",
    "NothingToCall",
    "NothingToRaise",
]
