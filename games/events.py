"""What the engines report. Events say what happened; the bot renders them, storage books ``Paid``.

Accounts: a person is their Telegram id (an ``int``); the house and the escrow are the named
accounts ``HOUSE`` and ``ESCROW`` (``str``). Every coin movement is one ``Paid`` event.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from games.cards import Card

HOUSE = "house"
ESCROW = "escrow"
Account = int | str


class PayReason(StrEnum):
    """Why coins moved; stored in the ledger's ``reason`` column."""

    SETTLEMENT = "settlement"  # muxi: banker against one player at the show-down
    FORFEIT = "forfeit"  # muxi: a forced draw not taken in time
    ESCAPE_PENALTY = "escape_penalty"  # muxi player or showhand escaper: into the escrow
    ESCAPE_SHARE = "escape_share"  # muxi: the escrowed penalty shared out at the round's end
    BANKER_ESCAPE = "banker_escape"  # muxi: the banker's 50x base, to the players and the house
    REFUND = "refund"  # a cancelled table gives the escrow back to whoever put it in
    ANTE = "ante"  # showhand: into the pot (the escrow)
    BET = "bet"  # showhand: into the pot (the escrow)
    POT = "pot"  # showhand: the pot to the winner


@dataclass(frozen=True, slots=True)
class Paid:
    """``amount`` (> 0) coins moved from ``payer`` to ``payee``."""

    payer: Account
    payee: Account
    amount: int
    reason: PayReason


@dataclass(frozen=True, slots=True)
class Joined:
    person: int
    balance: int


@dataclass(frozen=True, slots=True)
class Left:
    """A person left the table; ``escaped`` when it happened during a round, after the deal."""

    person: int
    escaped: bool = False


@dataclass(frozen=True, slots=True)
class Unseated:
    """A person was unseated because their balance fell below the minimum to sit (1,000)."""

    person: int
    balance: int


@dataclass(frozen=True, slots=True)
class Readied:
    person: int


@dataclass(frozen=True, slots=True)
class TimerStarted:
    """A deadline begins: the caller arms a timer of ``seconds`` that sends ``Timeout(timer)``."""

    timer: int
    seconds: int


@dataclass(frozen=True, slots=True)
class DeadlinePassed:
    """A deadline passed; ``people`` are those it acted for (who passed, stood, folded...).

    (Not ``TimedOut``: that is the Telegram library's network error, which the bot also handles.)
    """

    timer: int
    people: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A round (muxi) or a game (showhand) begins, with the deck's fairness commitment."""

    round_no: int
    commitment: str
    base: int


@dataclass(frozen=True, slots=True)
class Dealt:
    """Private: ``cards`` go to ``person`` face down (only they may see them)."""

    person: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class DeckRevealed:
    """After a round: the deck order and salt, so anyone can recompute the commitment."""

    round_no: int
    deck: tuple[Card, ...]
    salt: str
    commitment: str


@dataclass(frozen=True, slots=True)
class ClosingAfterRound:
    """``by`` asked to end the table during a round: it closes once the round is settled."""

    by: int


@dataclass(frozen=True, slots=True)
class TableClosed:
    """The table is over: ``reason`` is ``no_banker``, ``lobby_expired``, ``empty`` or ``cancelled``."""

    reason: str


# What every table reports, whatever the game: each game's event union (``MuxiEvent``,
# ``ShowhandEvent``) is this plus its own.
TableEvent = (
    Joined
    | Left
    | Unseated
    | Readied
    | TimerStarted
    | DeadlinePassed
    | RoundStarted
    | Dealt
    | Paid
    | DeckRevealed
    | ClosingAfterRound
    | TableClosed
)
