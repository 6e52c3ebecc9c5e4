"""Showhand stakes and the betting round's arithmetic (RULES.md 2.3 and 2.4), free of any table.

Every amount here is a person's **total for the game** (their ante included): ``Bet(person, 300)``
means "bet so that my total becomes 300", and ``Option.amount`` is that same new total, with
``Option.pay`` the coins it moves now. A "to" amount makes a double-pressed button harmless: the
second "raise to 300" finds the largest total already at 300 and is refused instead of raising again.

A raise lifts the largest total by at least the base B (not by the size of the previous raise, as
in no-limit poker): RULES.md only asks for whole multiples of B, and the caps bound everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from games.errors import RuleError
from games.showhand.errors import (
    AllInNotYet,
    BadAmount,
    CannotBet,
    CannotCheck,
    CannotRaisePastCap,
    NothingToCall,
    NothingToRaise,
    StakeChanged,
)

MAX_STAKE_BASES = 100  # M is at most 100 × B (RULES.md 2.3)
FIRST_CARD_FOR_ALL_IN = 4  # all-in only after cards 4 and 5 (RULES.md 2.4)
LAST_CARD = 5


class Move(StrEnum):
    """What a person may press now (``ShowhandTable.legal_actions``)."""

    JOIN = "join"
    LEAVE = "leave"
    READY = "ready"
    CHECK = "check"
    BET = "bet"
    CALL = "call"
    RAISE = "raise"
    ALL_IN = "all_in"
    FOLD = "fold"


@dataclass(frozen=True, slots=True)
class Option:
    """A button: ``move`` taking the person's game total to ``amount``, paying ``pay`` coins now.

    For Join, Leave and Ready both are 0.
    """

    move: Move
    amount: int = 0
    pay: int = 0


@dataclass(frozen=True, slots=True)
class Bet:
    """Open the betting of this round: make my game total ``amount`` (nobody has bet yet)."""

    person: int
    amount: int


@dataclass(frozen=True, slots=True)
class Check:
    """Bet nothing (nobody has bet yet this round)."""

    person: int


@dataclass(frozen=True, slots=True)
class Call:
    """Match the largest total. ``amount``, when given (the button's "call to N"), must still be the
    largest total: a button pressed after someone raised is refused instead of calling the raise."""

    person: int
    amount: int = 0


@dataclass(frozen=True, slots=True)
class Raise:
    """Make my game total ``amount``: at least B above the largest total, at most this round's cap."""

    person: int
    amount: int


@dataclass(frozen=True, slots=True)
class AllIn:
    """Make my game total M, the most anyone may put in this game (after cards 4 and 5 only)."""

    person: int


@dataclass(frozen=True, slots=True)
class Fold:
    """Give up this game; what I put in stays in the pot."""

    person: int


BettingAction = Bet | Check | Call | Raise | AllIn | Fold


def max_stake(balances: Iterable[int], base: int) -> int:
    """M: the lowest balance, capped at 100 × B, rounded down to a multiple of B (RULES.md 2.3)."""
    return min(min(balances), MAX_STAKE_BASES * base) // base * base


def round_cap(card_no: int, stake: int, base: int) -> int:
    """The most a total may reach by the end of the betting after card ``card_no`` (RULES.md 2.3)."""
    share = {2: stake // 4, 3: stake // 2, 4: stake, 5: stake}[card_no]
    return share // base * base


def round_caps(stake: int, base: int) -> tuple[int, ...]:
    """The caps after cards 2, 3, 4 and 5."""
    return tuple(round_cap(card_no, stake, base) for card_no in range(2, LAST_CARD + 1))


@dataclass(frozen=True, slots=True)
class Spot:
    """What the person whose turn it is faces: the stakes, the round, the largest and their own total.

    ``opening`` is every unfolded person's total when the round began (they are all equal then:
    the previous round ended on equal totals), so "nobody has bet yet" is ``largest == opening``.
    """

    base: int
    stake: int
    card_no: int
    opening: int
    largest: int
    own: int

    @property
    def cap(self) -> int:
        return round_cap(self.card_no, self.stake, self.base)

    @property
    def nobody_bet(self) -> bool:
        return self.largest == self.opening

    @property
    def all_in_open(self) -> bool:
        return self.card_no >= FIRST_CARD_FOR_ALL_IN and self.largest < self.stake

    def amounts(self) -> tuple[Move, int, int] | None:
        """A bet or raise of any step: its move, and the least and the most total it may reach, in
        steps of B (RULES.md 2.4; a total of M is left to the all-in button); None when none may."""
        move, above = (Move.BET, self.opening) if self.nobody_bet else (Move.RAISE, self.largest)
        top = self.cap - self.base if self.all_in_open and self.cap == self.stake else self.cap
        return (move, above + self.base, top) if above + self.base <= top else None

    def options(self) -> tuple[Option, ...]:
        """The buttons, in display order, each legal and none twice (RULES.md 2.4).

        Bet and raise offer B and 2B more and "to the cap"; a bet or raise to M is left to the
        all-in button, which does the same.
        """
        base, cap = self.base, self.cap
        if self.nobody_bet:
            first, move = Option(Move.CHECK, self.own), Move.BET
            floor, targets = self.opening + base, (self.opening + base, self.opening + 2 * base, cap)
        else:
            first, move = Option(Move.CALL, self.largest, self.largest - self.own), Move.RAISE
            floor, targets = self.largest + base, (self.largest + base, self.largest + 2 * base, cap)
        options = [first]
        for target in sorted(set(targets)):
            if floor <= target <= cap and not (self.all_in_open and target == self.stake):
                options.append(Option(move, target, target - self.own))
        if self.all_in_open:
            options.append(Option(Move.ALL_IN, self.stake, self.stake - self.own))
        options.append(Option(Move.FOLD, self.own))
        return tuple(options)

    def new_total(self, action: BettingAction) -> int:
        """The person's total after ``action``, or the ``RuleError`` naming why it is refused."""
        if isinstance(action, Check):
            if not self.nobody_bet:
                raise CannotCheck(f"the largest total is {self.largest}")
            return self.own
        if isinstance(action, Call):
            if self.largest == self.own:
                raise NothingToCall()
            if action.amount and action.amount != self.largest:
                raise StakeChanged(f"call to {action.amount}, but the largest total is now {self.largest}")
            return self.largest
        if isinstance(action, Bet):
            if not self.nobody_bet:
                raise CannotBet(f"the largest total is {self.largest}")
            return self._target(action.amount, self.opening)
        if isinstance(action, Raise):
            if self.nobody_bet:
                raise NothingToRaise()
            if self.largest >= self.cap:
                raise CannotRaisePastCap(f"the largest total {self.largest} is this round's cap")
            return self._target(action.amount, self.largest)
        if isinstance(action, AllIn):
            if self.card_no < FIRST_CARD_FOR_ALL_IN:
                raise AllInNotYet(f"{self.card_no} cards dealt")
            if self.largest >= self.stake:
                raise CannotRaisePastCap(f"the largest total is already M = {self.stake}: call or fold")
            return self.stake
        return self.own  # Fold

    def _target(self, amount: int, above: int) -> int:
        if amount > self.cap:
            raise CannotRaisePastCap(f"{amount} > cap {self.cap}")
        step = amount - above
        if step < self.base or step % self.base:
            raise BadAmount(f"{amount} is not {above} plus a multiple of {self.base}")
        return amount

    def accepts(self, action: BettingAction) -> bool:
        """Whether ``action`` is legal here (the tests' view of :meth:`new_total`)."""
        try:
            self.new_total(action)
        except RuleError:
            return False
        return True
