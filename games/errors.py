"""Refusals. Every illegal action raises a ``RuleError`` subclass that names the rule refusing it.

``code`` is stable (the bot turns it into a translated message); ``rule`` points into RULES.md.
"""

from __future__ import annotations

from typing import ClassVar


class RuleError(Exception):
    """An action the rules refuse; the table is left exactly as it was."""

    code: ClassVar[str] = "rule"
    rule: ClassVar[str] = ""
    text: ClassVar[str] = "the rules refuse this"

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        suffix = f": {detail}" if detail else ""
        super().__init__(f"{self.text} (RULES.md {self.rule}){suffix}")


def _error(name: str, code: str, rule: str, text: str) -> type[RuleError]:
    return type(name, (RuleError,), {"code": code, "rule": rule, "text": text, "__doc__": text})


TableIsClosed = _error("TableIsClosed", "table_closed", "1.5.2", "this table is closed")
WrongPhase = _error(
    "WrongPhase", "wrong_phase", "1.5", "that action does not belong to this stage of the game"
)
NotSeated = _error("NotSeated", "not_seated", "1.5.1", "you are not seated at this table")
NotInRound = _error("NotInRound", "not_in_round", "1.5.3", "you are not playing in this round")
AlreadySeated = _error("AlreadySeated", "already_seated", "1.5.1", "you are already seated")
TableFull = _error("TableFull", "table_full", "1.5.1", "the table is full")
NotEnoughCoins = _error("NotEnoughCoins", "not_enough_coins", "1.4", "sitting needs at least 1,000 coins")
AlreadyReady = _error("AlreadyReady", "already_ready", "1.5.1", "you have already pressed Start")
NotYourTurn = _error("NotYourTurn", "not_your_turn", "1.5", "it is not your turn")
AlreadyDecided = _error("AlreadyDecided", "already_decided", "1.5.5", "you have already decided")
MustDraw = _error("MustDraw", "must_draw", "1.2", "one joker among the first two cards must draw")
CannotDraw = _error("CannotDraw", "cannot_draw", "1.5.5", "a tiangong or invincible hand stands by itself")
StaleTimer = _error("StaleTimer", "stale_timer", "1.5.5", "that deadline is no longer running")
AlreadyClosing = _error(
    "AlreadyClosing", "already_closing", "1.5", "the table already ends once this round is settled"
)
