"""The rows storage hands back (frozen dataclasses) and the round record it takes in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

GAMES: tuple[str, ...] = ("muxi", "showhand")

MINT = "mint"
"""The named account grants come from; its balance is minus every coin ever granted."""


@dataclass(frozen=True, slots=True)
class Person:
    id: int
    name: str
    language: str | None
    balance: int
    created_at: datetime
    dm_refused: bool = False  # Telegram refused a message to their DM (never opened, or blocked)


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """A chat's settings; None (language, seconds) means "not chosen: the bot's default"."""

    chat_id: int
    language: str | None = None
    turn_seconds: int | None = None
    lobby_seconds: int | None = None
    allowed_games: tuple[str, ...] = GAMES
    pause_seconds: int | None = None  # after a round's results, before auto-ready readies (0: none)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One leg of a coin movement: ``delta`` for ``account``, the other leg is ``counterparty``'s."""

    id: int
    account: int | str
    delta: int
    reason: str
    counterparty: int | str
    table_id: int | None
    round_no: int | None
    key: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class DailyClaim:
    """The answer to a daily-bonus claim: ``claimed`` False when today's was taken already."""

    claimed: bool
    amount: int
    balance: int
    day: date
    next_claim_at: datetime


@dataclass(frozen=True, slots=True)
class SavedTable:
    id: int
    chat_id: int
    game: str
    state: dict[str, Any]
    version: int
    deadline: datetime | None
    message_id: int | None
    dm_message_ids: dict[int, int]
    escrow: int
    closed: bool
    created_at: datetime
    updated_at: datetime
    shown: dict[str, str] = field(default_factory=dict)  # what each kept message shows (a hash)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One person's outcome of a round: net coins (signed), whether they won, their hand's name,
    and the cards the show-down showed of it (canonical tokens; None where none were shown)."""

    person_id: int
    net: int
    won: bool
    hand: str | None = None
    cards: str | None = None


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """What the caller passes to ``commit_action`` when a round ends; the game is the table's."""

    round_no: int
    commitment: str
    deck: str
    salt: str
    results: tuple[RoundResult, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class RoundMove:
    """One action of a round under way, saved with it (for the round's replay): the action as
    plain JSON, and for the round's first action the table as saved just before it."""

    action: Mapping[str, Any]
    before: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RoundMoves:
    """A round's kept actions, in order, and the table as it was before the first."""

    before: dict[str, Any]
    actions: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class SavedRound:
    """A stored round with its fairness proof (commitment, revealed deck order and salt)."""

    id: int
    table_id: int
    chat_id: int
    game: str
    round_no: int
    commitment: str
    deck: str
    salt: str
    created_at: datetime
    results: tuple[RoundResult, ...]


@dataclass(frozen=True, slots=True)
class LeaderRow:
    """A leaderboard line: ``coins`` is net won in the chat, or the balance on the global board."""

    rank: int
    person_id: int
    name: str
    coins: int
    rounds: int


@dataclass(frozen=True, slots=True)
class GameStats:
    game: str
    rounds: int = 0
    won: int = 0
    net: int = 0


@dataclass(frozen=True, slots=True)
class PersonStats:
    """Per-game and overall (``total.game == "all"``) round statistics of one person."""

    person_id: int
    games: tuple[GameStats, ...]
    total: GameStats


# -- a table's 总结算 (storage/summaries.py) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryRound:
    """One recorded round of a table: its proof's commitment, how many had a result in it (0: the
    round ended before it was played, nobody took the bank or it was cancelled), and the coins
    that changed hands in it (what the winners took: the sum of the positive nets)."""

    round_no: int
    commitment: str
    people: int
    moved: int


@dataclass(frozen=True, slots=True)
class SummaryNet:
    """One person's outcome over a whole table: their net, the rounds they played and won."""

    person_id: int
    name: str
    net: int
    rounds: int
    won: int


@dataclass(frozen=True, slots=True)
class SummaryHand:
    """A hand a round's show-down showed: whose, in which round, its kind's name, its cards (None
    in rounds recorded before the cards were kept)."""

    person_id: int
    name: str
    round_no: int
    hand: str
    cards: str | None


@dataclass(frozen=True, slots=True)
class TableSummary:
    """What a table's 总结算 is made of, as the store keeps it: its rounds, each person's net over
    them (best first), and every hand shown. ``ended_at``: its last change (when it closed, for a
    closed table)."""

    table_id: int
    chat_id: int
    game: str
    closed: bool
    created_at: datetime
    ended_at: datetime
    rounds: tuple[SummaryRound, ...]
    nets: tuple[SummaryNet, ...]
    hands: tuple[SummaryHand, ...]

    @property
    def played(self) -> int:
        """The rounds played (with results): a table with none gets no 总结算."""
        return sum(1 for found in self.rounds if found.people)
