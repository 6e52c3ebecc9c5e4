"""The muxi table's phases, actions, events and state (RULES.md 1.5 and 1.6): what ``MuxiTable``
takes, reports and saves."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from games.cards import Card
from games.muxi.hands import Kind
from games.table import Cancel, Join, Leave, Ready, TableCore, Timeout


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


MuxiAction = Join | Leave | Ready | Timeout | Cancel | BeBanker | PassBanker | Draw | Stand


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
    """``reason``: ``showdown``, ``banker_invincible``, ``players_escaped`` or ``banker_escaped``."""

    round_no: int
    reason: str
    base: int
    results: tuple[PersonResult, ...]


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
