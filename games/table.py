"""What both games' tables share: seats and readiness, the deck and its commitment, timers, the escrow.

A game's table keeps a ``TableCore`` and adds its own phases. Nothing here reads a clock or a random
source: a deadline is a number the caller arms a timer for, the deck arrives in a ``Shuffle``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Generic, Protocol, Self, TypeVar

from games.cards import Card
from games.codec import Plain, from_plain, to_plain
from games.errors import (
    AlreadyClosing,
    AlreadyReady,
    AlreadySeated,
    NotEnoughCoins,
    NotSeated,
    StaleTimer,
    TableFull,
    TableIsClosed,
    WrongPhase,
)
from games.events import (
    ESCROW,
    Account,
    ClosingAfterRound,
    DeadlinePassed,
    DeckRevealed,
    Joined,
    Left,
    Paid,
    PayReason,
    Readied,
    RoundStarted,
    TableClosed,
    TableEvent,
    TimerStarted,
    Unseated,
)
from games.fairness import Shuffle
from games.stakes import MIN_BALANCE


@dataclass
class Seat:
    """A seated person, their coins as the table knows them, and whether they pressed Start."""

    person: int
    balance: int
    seat_no: int
    ready: bool = False


@dataclass(frozen=True, slots=True)
class Join:
    """Sit down with ``balance`` coins (the caller reads it from the wallet)."""

    person: int
    balance: int


@dataclass(frozen=True, slots=True)
class Leave:
    """Get up; during a round, after the deal, this is an escape and costs what the rules say."""

    person: int


@dataclass(frozen=True, slots=True)
class Ready:
    """Press Start (or Continue). ``shuffle`` is the deck used if this press starts the round."""

    person: int
    shuffle: Shuffle


@dataclass(frozen=True, slots=True)
class Timeout:
    """The deadline ``timer`` (from ``TimerStarted``) has passed."""

    timer: int


@dataclass(frozen=True, slots=True)
class Credit:
    """Coins came to a seated person from outside the table (the daily bonus): the table's view of
    their balance follows, so it stays exact."""

    person: int
    amount: int


@dataclass(frozen=True, slots=True)
class Cancel:
    """End the table now (an emergency): the escrow goes back to whoever put it in."""


@dataclass(frozen=True, slots=True)
class CloseAfterRound:
    """End the table once the round under way is settled (an admin's decision: nobody can void a
    round they are losing); in the lobby, at once. ``by`` is who asked."""

    by: int


@dataclass
class TableCore:
    """Seats, the round's deck, the running deadline and the escrow, with their invariants."""

    min_seats: int
    max_seats: int
    turn_seconds: int
    lobby_seconds: int
    seats: list[Seat] = field(default_factory=list)
    version: int = 0
    round_no: int = 0
    seats_taken: int = 0
    timer: int = 0
    timers_started: int = 0
    shuffle: Shuffle | None = None
    dealt: int = 0
    escrow: dict[int, int] = field(default_factory=dict)
    round_net: dict[int, int] = field(default_factory=dict)
    closing: bool = False  # the table ends when the round under way is settled

    # -- seats ------------------------------------------------------------------------------------
    def seat_of(self, person: int) -> Seat | None:
        for seat in self.seats:  # a loop, not next(genexpr): called for every action and view
            if seat.person == person:
                return seat
        return None

    def require_seat(self, person: int) -> Seat:
        seat = self.seat_of(person)
        if seat is None:
            raise NotSeated(f"person {person}")
        return seat

    def check_join(self, person: int, balance: int) -> None:
        if self.seat_of(person) is not None:
            raise AlreadySeated(f"person {person}")
        if len(self.seats) >= self.max_seats:
            raise TableFull(f"{self.max_seats} seats")
        if balance < MIN_BALANCE:
            raise NotEnoughCoins(f"{balance} < {MIN_BALANCE}")

    def add_seat(self, person: int, balance: int) -> Joined:
        self.check_join(person, balance)
        self.seats_taken += 1
        self.seats.append(Seat(person, balance, self.seats_taken))
        return Joined(person, balance)

    def remove_seat(self, person: int) -> None:
        self.seats = [seat for seat in self.seats if seat.person != person]

    def set_ready(self, person: int) -> Readied:
        seat = self.require_seat(person)
        if seat.ready:
            raise AlreadyReady()
        seat.ready = True
        return Readied(person)

    def everyone_ready(self) -> bool:
        return len(self.seats) >= self.min_seats and all(seat.ready for seat in self.seats)

    def clear_ready(self) -> None:
        for seat in self.seats:
            seat.ready = False

    def seat_order_from(self, seat_no: int) -> list[int]:
        """Seated people in seat order, starting with the first whose seat number is after ``seat_no``."""
        ordered = sorted(self.seats, key=lambda seat: seat.seat_no)
        later = [seat.person for seat in ordered if seat.seat_no > seat_no]
        return later + [seat.person for seat in ordered if seat.seat_no <= seat_no]

    def unseat_poor(self) -> list[Unseated]:
        """After a round: unseat everyone under the minimum to sit (RULES.md 1.5.7, 2.5)."""
        poor = [seat for seat in self.seats if seat.balance < MIN_BALANCE]
        for seat in poor:
            self.remove_seat(seat.person)
        return [Unseated(seat.person, seat.balance) for seat in poor]

    # -- the round's deck -------------------------------------------------------------------------
    def begin_round(self, shuffle: Shuffle, base: int) -> RoundStarted:
        self.round_no += 1
        self.shuffle = shuffle
        self.dealt = 0
        self.round_net = {}
        return RoundStarted(self.round_no, shuffle.commitment, base)

    def deal(self) -> Card:
        assert self.shuffle is not None, "dealing needs a round"
        card = self.shuffle.deck[self.dealt]
        self.dealt += 1
        return card

    def end_round(self) -> DeckRevealed:
        """Reveal the deck and salt of the round that just ended, and stop its timer."""
        assert self.shuffle is not None, "no round to end"
        shuffle, self.shuffle = self.shuffle, None
        self.timer = 0
        return DeckRevealed(self.round_no, shuffle.deck, shuffle.salt, shuffle.commitment)

    # -- deadlines --------------------------------------------------------------------------------
    def start_timer(self, seconds: int) -> TimerStarted:
        self.timers_started += 1
        self.timer = self.timers_started
        return TimerStarted(self.timer, seconds)

    def check_timer(self, timer: int) -> None:
        if self.timer == 0 or timer != self.timer:
            raise StaleTimer(f"timer {timer}, running {self.timer or 'none'}")

    # -- coins ------------------------------------------------------------------------------------
    @property
    def escrow_total(self) -> int:
        return sum(self.escrow.values())

    def pay(self, payer: Account, payee: Account, amount: int, reason: PayReason) -> list[Paid]:
        """Move coins between seated people, the house and the escrow; nothing for 0.

        A seated payer never pays more than they hold (the callers cap amounts first).
        """
        if amount <= 0:
            return []
        for account, delta in ((payer, -amount), (payee, amount)):
            if isinstance(account, int):
                seat = self.seat_of(account)
                if seat is not None:
                    seat.balance += delta
                    assert seat.balance >= 0, f"{account} would go below zero"
                self.round_net[account] = self.round_net.get(account, 0) + delta
        if payee == ESCROW:
            assert isinstance(payer, int)
            self.escrow[payer] = self.escrow.get(payer, 0) + amount
        return [Paid(payer, payee, amount, reason)]

    def release(self, contributor: int, payee: Account, amount: int, reason: PayReason) -> list[Paid]:
        """Pay ``amount`` out of what ``contributor`` put in the escrow."""
        held = self.escrow.get(contributor, 0)
        assert 0 <= amount <= held, f"escrow holds {held} of {contributor}, not {amount}"
        if held == amount:
            del self.escrow[contributor]
        else:
            self.escrow[contributor] = held - amount
        return self.pay(ESCROW, payee, amount, reason)

    def release_all(self, payee: Account, reason: PayReason) -> list[Paid]:
        """The whole escrow (a showhand pot) to ``payee`` as one payment."""
        pot = self.escrow_total
        self.escrow.clear()
        return self.pay(ESCROW, payee, pot, reason)

    def refund_escrow(self) -> list[Paid]:
        """Give everything in the escrow back to whoever put it in (a cancelled table)."""
        paid: list[Paid] = []
        for contributor, held in list(self.escrow.items()):
            paid += self.release(contributor, contributor, held, PayReason.REFUND)
        return paid


ActionT = TypeVar("ActionT")
EventT = TypeVar("EventT")  # a game's event union: ``TableEvent`` and the game's own
PhaseT = TypeVar("PhaseT", bound=StrEnum)


class Table(ABC, Generic[ActionT, EventT]):
    """What both games' tables do alike: apply actions by type, sit, press Start, save and load.

    A subclass names the actions it takes and the events it reports (``Table[MuxiAction,
    MuxiEvent]``, the events including every ``TableEvent``), its state dataclass (``STATE``, with
    ``core`` and a ``phase`` whose values include ``"lobby"`` and ``"closed"``), its deck, its
    handlers, and how a round starts.
    """

    STATE: ClassVar[type[TableState]]
    DECK: ClassVar[tuple[Card, ...]]
    # Each action's handler, by the action's type (a class attribute: set once per game). Its
    # events are this game's (``TableEvent | EventT`` is ``EventT``, which includes them).
    HANDLERS: dict[type, Callable[..., list[TableEvent | EventT]]]

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.core: TableCore = state.core

    def to_dict(self) -> dict[str, Plain]:
        plain = to_plain(self.state)
        assert isinstance(plain, dict)
        return plain

    @classmethod
    def from_dict(cls, data: dict[str, Plain]) -> Self:
        return cls(from_plain(cls.STATE, data))

    @property
    def version(self) -> int:
        """Counts accepted actions."""
        return self.core.version

    @property
    def closed(self) -> bool:
        return self.state.phase == "closed"

    def apply(self, action: ActionT) -> list[TableEvent | EventT]:
        """Carry out ``action`` and return what happened, or raise a ``RuleError`` changing nothing."""
        if self.closed:
            raise TableIsClosed()
        handler = self.HANDLERS.get(type(action))
        if handler is None:
            raise TypeError(f"not an action of this table: {action!r}")
        events = handler(self, action)
        self.core.version += 1
        return events

    def _join(self, action: Join) -> list[TableEvent | EventT]:
        if self.core.closing:
            raise AlreadyClosing()
        events: list[TableEvent | EventT] = [self.core.add_seat(action.person, action.balance)]
        if self.state.phase == "lobby":
            events.append(self.core.start_timer(self.core.lobby_seconds))
        return events

    def _ready(self, action: Ready) -> list[TableEvent | EventT]:
        if self.state.phase != "lobby":
            raise WrongPhase("Start is pressed between rounds")
        seat = self.require_seat_for_ready(action)
        # Someone left while all the others were ready: pressing again starts the round.
        if seat.ready and self.core.everyone_ready():
            return self._start(action.shuffle)
        events: list[TableEvent | EventT] = [self.core.set_ready(action.person)]
        if self.core.everyone_ready():
            events += self._start(action.shuffle)
        return events

    def _credit(self, action: Credit) -> list[TableEvent | EventT]:
        if action.amount <= 0:
            raise ValueError("a credit is a positive amount")
        self.core.require_seat(action.person).balance += action.amount
        return []

    def _close_after_round(self, action: CloseAfterRound) -> list[TableEvent | EventT]:
        if self.state.phase == "lobby" or self.core.dealt == 0:  # no card is out: nothing to void
            return self._cancel(Cancel())
        if self.core.closing:
            raise AlreadyClosing()
        self.core.closing = True
        return [ClosingAfterRound(action.by)]

    @abstractmethod
    def _cancel(self, action: Cancel) -> list[TableEvent | EventT]:
        """End the table now, the escrow back to whoever put it in."""

    def require_seat_for_ready(self, action: Ready) -> Seat:
        seat = self.core.require_seat(action.person)
        if sorted(map(str, action.shuffle.deck)) != sorted(map(str, self.DECK)):
            raise ValueError(f"this table's shuffle holds its {len(self.DECK)}-card deck")
        return seat

    def may_press_ready(self, seat: Seat) -> bool:
        return self.state.phase == "lobby" and (not seat.ready or self.core.everyone_ready())

    @abstractmethod
    def _start(self, shuffle: Shuffle) -> list[TableEvent | EventT]:
        """Everyone pressed Start: begin a round with this deck."""


class TableState(Protocol):
    """What ``Table`` reads of a game's state dataclass."""

    @property
    def core(self) -> TableCore: ...
    @property
    def phase(self) -> StrEnum: ...


class PhasedState(Protocol[PhaseT]):
    """A game's state whose phase the lobby and the end of a table move (``PhaseT``: the game's
    ``Phase``, with a ``"lobby"`` and a ``"closed"``)."""

    core: TableCore
    phase: PhaseT


# -- the lobby and the end of a table, for either game's state ---------------------------------------
def back_to_lobby(state: PhasedState[PhaseT]) -> list[TableEvent]:
    """A round is over: everyone presses Start again for the next one (or the table ends, when
    asked to during the round)."""
    if state.core.closing:
        return [*state.core.refund_escrow(), *close(state, "cancelled")]
    state.phase = type(state.phase)("lobby")
    state.core.clear_ready()
    return lobby_changed(state)


def lobby_changed(state: PhasedState[PhaseT]) -> list[TableEvent]:
    """The lobby's seats changed: its expiry starts again, or the table closes when nobody is left."""
    if not state.core.seats:
        return close(state, "empty")
    return [state.core.start_timer(state.core.lobby_seconds)]


def leave_freely(state: PhasedState[PhaseT], person: int) -> list[TableEvent]:
    """Someone gets up at no cost (in the lobby, or not playing the round under way)."""
    state.core.remove_seat(person)
    events: list[TableEvent] = [Left(person)]
    return events + (lobby_changed(state) if state.phase == "lobby" else [])


def expire_lobby(state: PhasedState[PhaseT], timer: int) -> list[TableEvent]:
    """Nobody started the lobby in time: the table closes."""
    everyone = tuple(seat.person for seat in state.core.seats)
    return [DeadlinePassed(timer, everyone), *close(state, "lobby_expired")]


def close(state: PhasedState[PhaseT], reason: str) -> list[TableEvent]:
    state.phase = type(state.phase)("closed")
    state.core.timer = 0
    return [TableClosed(reason)]


def cancel(state: PhasedState[PhaseT]) -> list[TableEvent]:
    """An admin ends the table: the escrow goes back to whoever put it in, the deck is revealed."""
    events: list[TableEvent] = list(state.core.refund_escrow())
    if state.core.shuffle is not None:
        events.append(state.core.end_round())
    return events + close(state, "cancelled")
