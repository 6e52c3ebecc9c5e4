"""What a showhand table reports, besides the shared events of ``games.events``.

A game's events, in order: ``RoundStarted`` (the deck's commitment), ``Stakes``, ``LeadChanged``
(the lead before the deal), the antes (``Paid``), a private ``Dealt`` per person (the face-down
card), ``CardsDealt`` (card 2, face up), ``LeadChanged``, ``BettingRoundStarted``, ``TurnOf`` and
``TimerStarted``; then one of ``BetMade``/``Checked``/``Called``/``Raised``/``WentAllIn``/``Folded``
per action (``FoldedOnTimeout`` after a ``DeadlinePassed`` when the clock folded someone),
``BettingRoundOver``, the next card… and at the end maybe ``ShowDown``, then the pot
(``Paid``), ``GameOver``, ``DeckRevealed``, ``Unseated`` and the lobby's ``TimerStarted``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from games.cards import Card
from games.events import TableEvent
from games.showhand.betting import Option
from games.showhand.hands import Category, DecidedBy


class LeadReason(StrEnum):
    """Why a person leads (RULES.md 2.2)."""

    FIRST_JOINED = "first_joined"  # the first game: the earliest to join among the seated
    LAST_WINNER = "last_winner"  # later games: the previous game's winner
    NEXT_SEAT = "next_seat"  # the previous winner has left: the next seat after theirs
    BEST_FACE_UP = "best_face_up"  # after each card: the best face-up cards among the unfolded


class EndReason(StrEnum):
    """How a game ended (RULES.md 2.5)."""

    SHOWDOWN = "showdown"
    LAST_STANDING = "last_standing"
    ESCAPE = "escape"

    @property
    def shown_down(self) -> bool:
        """Whether the unfolded hands were shown (only a show-down shows the face-down cards)."""
        return self is EndReason.SHOWDOWN


@dataclass(frozen=True, slots=True)
class Stakes:
    """The game's base B, its most one person may put in (M), and the caps after cards 2 to 5."""

    base: int
    max_stake: int
    caps: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LeadChanged:
    """``person`` leads (speaks first) from now on; announced before the deal and after every card."""

    person: int
    reason: LeadReason


@dataclass(frozen=True, slots=True)
class FaceUp:
    person: int
    card: Card


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """Card number ``card_no`` (2 to 5) went face up to every unfolded person, in dealing order."""

    card_no: int
    cards: tuple[FaceUp, ...]


@dataclass(frozen=True, slots=True)
class BettingRoundStarted:
    """Betting after card ``card_no``; no total may pass ``cap`` by its end."""

    card_no: int
    cap: int


@dataclass(frozen=True, slots=True)
class TurnOf:
    """``person`` speaks now and may press one of ``options``."""

    person: int
    options: tuple[Option, ...]


@dataclass(frozen=True, slots=True)
class BetMade:
    """``person`` opened the betting, paying ``paid`` so that their game total is ``total``."""

    person: int
    paid: int
    total: int


@dataclass(frozen=True, slots=True)
class Checked:
    person: int
    paid: int
    total: int


@dataclass(frozen=True, slots=True)
class Called:
    person: int
    paid: int
    total: int


@dataclass(frozen=True, slots=True)
class Raised:
    person: int
    paid: int
    total: int


@dataclass(frozen=True, slots=True)
class WentAllIn:
    """``person``'s total is now M."""

    person: int
    paid: int
    total: int


@dataclass(frozen=True, slots=True)
class Folded:
    """``person`` gave up (pressed Fold, or ran out of time: then it is a ``FoldedOnTimeout``)."""

    person: int
    paid: int
    total: int


@dataclass(frozen=True, slots=True)
class FoldedOnTimeout(Folded):
    """``person``'s turn ran out and the clock folded for them (RULES.md 2.4: timeout = fold);
    a ``DeadlinePassed`` comes just before it."""


@dataclass(frozen=True, slots=True)
class BettingRoundOver:
    """The betting after card ``card_no`` ended with ``pot`` coins in the pot."""

    card_no: int
    pot: int


@dataclass(frozen=True, slots=True)
class ShownHand:
    """A hand shown at the show-down: the face-down card, the face-up ones, and what they make."""

    person: int
    hole: Card
    face_up: tuple[Card, ...]
    category: Category
    best_first: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class ShowDown:
    """Every unfolded person's five cards, in speaking order; ``winner`` holds the best hand,
    ``runner_up`` the next best, and ``decided_by`` says what put the winner's above it."""

    hands: tuple[ShownHand, ...]
    winner: int
    runner_up: int
    decided_by: DecidedBy


@dataclass(frozen=True, slots=True)
class PersonResult:
    """One person's game: their face-up cards, the face-down one only if shown, and their net (±)."""

    person: int
    face_up: tuple[Card, ...]
    hole: Card | None
    category: Category | None
    total: int
    folded: bool
    escaped: bool
    net: int


@dataclass(frozen=True, slots=True)
class GameOver:
    """Game ``game_no`` ended for ``reason``; ``winner`` took the ``pot``."""

    game_no: int
    reason: EndReason
    winner: int
    pot: int
    results: tuple[PersonResult, ...]


ShowhandEvent = (
    TableEvent
    | Stakes
    | LeadChanged
    | CardsDealt
    | BettingRoundStarted
    | TurnOf
    | BetMade
    | Checked
    | Called
    | Raised
    | WentAllIn
    | Folded
    | FoldedOnTimeout
    | BettingRoundOver
    | ShowDown
    | GameOver
)

__all__ = [
    "BetMade",
    "BettingRoundOver",
    "BettingRoundStarted",
    "Called",
    "CardsDealt",
    "Checked",
    "EndReason",
    "FaceUp",
    "Folded",
    "FoldedOnTimeout",
    "GameOver",
    "LeadChanged",
    "LeadReason",
    "PersonResult",
    "Raised",
    "ShowDown",
    "ShowhandEvent",
    "ShownHand",
    "Stakes",
    "TurnOf",
    "WentAllIn",
]
