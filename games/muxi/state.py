"""The muxi table's phases, actions, events and state (RULES.md 1.5 and 1.6): what ``MuxiTable``
takes, reports and saves."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from games.cards import Card
from games.events import TableEvent
from games.muxi.hands import Kind
from games.table import Cancel, CloseAfterRound, Credit, Join, Leave, Ready, TableCore, Timeout


class Phase(StrEnum):
    LOBBY = "lobby"
    BANKER = "banker"  # 叫庄: asking each person in turn
    DRAW = "draw"  # the players choose draw or stand, all at once
    BANKER_DRAW = "banker_draw"
    CLOSED = "closed"


class Status(StrEnum):
    """Where a hand stands in the drawing (RULES.md 1.5.4–5)."""

    WAITING = "waiting"  # may draw or stand
    FORCED = "forced"  # one joker among the first two cards: must draw
    DREW = "drew"
    STOOD = "stood"
    NATURAL = "natural"  # invincible or (double) tiangong: stands by itself
    FORFEIT = "forfeit"  # a forced draw not taken in time
    ESCAPED = "escaped"


PENDING = (Status.WAITING, Status.FORCED)


class RoundEnd(StrEnum):
    """How a round ended (RULES.md 1.5.4, 1.5.6, 1.6)."""

    SHOWDOWN = "showdown"
    BANKER_INVINCIBLE = "banker_invincible"  # the banker's two jokers: everyone pays at once
    PLAYERS_ESCAPED = "players_escaped"  # no player left in the round
    BANKER_ESCAPED = "banker_escaped"

    @property
    def shown_down(self) -> bool:
        """Whether the hands were shown: not when the round ended by an escape (RULES.md 1.6)."""
        return self not in (RoundEnd.PLAYERS_ESCAPED, RoundEnd.BANKER_ESCAPED)


class Move(StrEnum):
    """What a person may press now (``MuxiTable.legal_actions``)."""

    JOIN = "join"
    LEAVE = "leave"
    READY = "ready"
    BE_BANKER = "be_banker"
    PASS = "pass"
    DRAW = "draw"
    STAND = "stand"


@dataclass(frozen=True, slots=True)
class BeBanker:
    person: int


@dataclass(frozen=True, slots=True)
class PassBanker:
    person: int


@dataclass(frozen=True, slots=True)
class Draw:
    person: int


@dataclass(frozen=True, slots=True)
class Stand:
    person: int


MuxiAction = (
    Join | Leave | Ready | Timeout | Credit | Cancel | CloseAfterRound | BeBanker | PassBanker | Draw | Stand
)


@dataclass(frozen=True, slots=True)
class BankerAsked:
    """``person`` is asked whether to be banker."""

    person: int


@dataclass(frozen=True, slots=True)
class BankerChosen:
    person: int


@dataclass(frozen=True, slots=True)
class HandShown:
    """A player's natural (invincible, double tiangong, tiangong), shown to the table at once."""

    person: int
    cards: tuple[Card, ...]
    kind: Kind
    points: int


@dataclass(frozen=True, slots=True)
class Decided:
    """Public: ``person`` drew a card (``drew``) or stood. The card itself goes by ``Dealt``."""

    person: int
    drew: bool


@dataclass(frozen=True, slots=True)
class TurnOf:
    """The people who must now choose draw or stand."""

    people: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PersonResult:
    """One person's round: their cards, what they made of them, and the coins won (+) or lost (−)."""

    person: int
    is_banker: bool
    cards: tuple[Card, ...]
    kind: Kind | None  # None for a hand not judged (escaped, or a lone joker that forfeited)
    points: int
    status: Status
    net: int


@dataclass(frozen=True, slots=True)
class RoundOver:
    """Round ``round_no`` ended for ``reason``; each person's cards, hand and net in ``results``."""

    round_no: int
    reason: RoundEnd
    base: int
    results: tuple[PersonResult, ...]


@dataclass(frozen=True, slots=True)
class SeenHand:
    """A hand as one viewer may see it (``MuxiTable.seen_by``), as PokerKit censors hole cards.

    ``cards`` holds None for each card the viewer may not see. ``status`` is what the table may
    know: a forced draw (one joker) shows as ``WAITING``, since "must draw" would tell of the joker.
    ``shown`` marks a player's natural, shown to the table at once.
    """

    person: int
    is_banker: bool
    cards: tuple[Card | None, ...]
    status: Status
    shown: bool


MuxiEvent = TableEvent | BankerAsked | BankerChosen | HandShown | Decided | TurnOf | RoundOver


@dataclass
class Hand:
    person: int
    cards: list[Card]
    status: Status


@dataclass
class MuxiState:
    """Everything a muxi table is; round-trips through plain JSON."""

    core: TableCore
    phase: Phase = Phase.LOBBY
    last_banker_seat: int = 0
    participants: list[int] = field(default_factory=list)
    asked: int = 0
    banker: int | None = None
    base: int = 0
    hands: list[Hand] = field(default_factory=list)
