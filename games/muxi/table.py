"""The muxi table: a pure state machine, round by round (RULES.md 1.5 and 1.6).

``MuxiTable.apply(action) -> list[event]`` either refuses the action with a ``RuleError`` (changing
nothing) or carries it out and says what happened. Phases: the lobby, the banker choice, the
players' draw (all at once), the banker's draw; the show-down ends a round and returns to the lobby
(``games.muxi.settlement``: the settlement, the escapes' penalties, the results).
"""

from __future__ import annotations

from games.cards import DECK_54
from games.errors import (
    AlreadyDecided,
    CannotDraw,
    MustDraw,
    NotInRound,
    NotYourTurn,
    WrongPhase,
)
from games.events import (
    ESCROW,
    DeadlinePassed,
    Dealt,
    Joined,
    Left,
    PayReason,
)
from games.fairness import Shuffle
from games.muxi.hands import evaluate
from games.muxi.settlement import BANKER_ESCAPE, PLAYER_ESCAPE, RoundEnding
from games.muxi.state import (
    PENDING,
    BankerAsked,
    BankerChosen,
    BeBanker,
    Decided,
    Draw,
    Hand,
    HandShown,
    Move,
    MuxiAction,
    MuxiEvent,
    MuxiState,
    PassBanker,
    PersonResult,
    Phase,
    RoundEnd,
    RoundOver,
    SeenHand,
    Stand,
    Status,
    TurnOf,
)
from games.stakes import base_for_table
from games.table import (
    Cancel,
    CloseAfterRound,
    Credit,
    Join,
    Leave,
    Ready,
    Table,
    TableCore,
    Timeout,
    back_to_lobby,
    cancel,
    close,
    expire_lobby,
    leave_freely,
)

MIN_SEATS, MAX_SEATS = 2, 5

Event = MuxiEvent


class MuxiTable(RoundEnding, Table[MuxiAction, MuxiEvent]):
    """A muxi table. Create with :meth:`new`, then ``apply`` actions; save with :meth:`to_dict`."""

    STATE = MuxiState
    DECK = DECK_54
    state: MuxiState

    @classmethod
    def new(cls, *, turn_seconds: int = 30, lobby_seconds: int = 300) -> MuxiTable:
        return cls(MuxiState(TableCore(MIN_SEATS, MAX_SEATS, turn_seconds, lobby_seconds)))

    # -- what the bot reads -----------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self.state.phase

    def hand_of(self, person: int) -> Hand | None:
        return next((hand for hand in self.state.hands if hand.person == person), None)

    def pending(self) -> tuple[int, ...]:
        """Who must still choose draw or stand."""
        return tuple(hand.person for hand in self._deciders() if hand.status in PENDING)

    def awaited(self) -> tuple[int, ...]:
        """Who must act now: the person asked to be banker, else the players still to choose draw
        or stand (all at once), else the banker choosing. Empty between rounds."""
        asked = self.asked_person()
        return (asked,) if asked is not None else self.pending()

    def card_holders(self) -> tuple[int, ...]:
        """Who holds cards in the round under way (their own stay private to them)."""
        return tuple(hand.person for hand in self.state.hands)

    def seen_by(self, viewer: int | None) -> tuple[SeenHand, ...]:
        """The round's hands as ``viewer`` may see them (None: a spectator, or the group chat):
        their own cards and the players' naturals shown to the table; every other card is None.
        The banker's hand comes last, as it is dealt."""
        banker = self.state.banker
        seen = []
        for hand in self.state.hands:
            is_banker = hand.person == banker
            shown = hand.status is Status.NATURAL and not is_banker
            visible = shown or hand.person == viewer
            seen.append(
                SeenHand(
                    person=hand.person,
                    is_banker=is_banker,
                    cards=tuple(card if visible else None for card in hand.cards),
                    status=Status.WAITING if hand.status is Status.FORCED else hand.status,
                    shown=shown,
                )
            )
        return tuple(seen)

    def declined_bank(self, person: int) -> bool:
        """Whether ``person`` was asked to be banker this round and said no (or let the time run
        out): everyone asked before the one asked now, or before the banker."""
        return person in self.state.participants[: max(self.state.asked, 0)]

    def asked_person(self) -> int | None:
        """Who is being asked to be banker now."""
        return self.state.participants[self.state.asked] if self.state.phase is Phase.BANKER else None

    def escape_cost(self, person: int) -> int | None:
        """What leaving now would cost ``person`` (RULES.md 1.6); None when leaving is free."""
        hand = self.hand_of(person)
        if (
            self.state.phase not in (Phase.DRAW, Phase.BANKER_DRAW)
            or hand is None
            or hand.status is Status.ESCAPED
            or self.core.seat_of(person) is None
        ):
            return None
        times = BANKER_ESCAPE if person == self.state.banker else PLAYER_ESCAPE
        return min(times * self.state.base, self._balance(person))

    def legal_actions(self, person: int) -> tuple[Move, ...]:
        """The buttons ``person`` may press now."""
        state, seat = self.state, self.core.seat_of(person)
        if state.phase is Phase.CLOSED:
            return ()
        if seat is None:
            return (Move.JOIN,) if len(self.core.seats) < self.core.max_seats else ()
        moves: list[Move] = []
        if self.may_press_ready(seat):
            moves.append(Move.READY)
        elif state.phase is Phase.BANKER and self.asked_person() == person:
            moves += [Move.BE_BANKER, Move.PASS]
        elif person in self.pending():
            hand = self.hand_of(person)
            assert hand is not None
            moves += [Move.DRAW] if hand.status is Status.FORCED else [Move.DRAW, Move.STAND]
        return (*moves, Move.LEAVE)

    # -- applying actions -------------------------------------------------------------------------
    def _leave(self, action: Leave) -> list[Event]:
        person, phase = action.person, self.state.phase
        self.core.require_seat(person)
        price = self.escape_cost(person)  # the price quoted is the price paid
        if price is not None:
            if person == self.state.banker:
                return self._banker_escapes(price)
            hand = self.hand_of(person)
            assert hand is not None
            return self._player_escapes(hand, price)
        events: list[Event] = [*leave_freely(self.state, person)]
        if phase is Phase.BANKER and person in self.state.participants:
            events += self._leave_banker_choice(person)
        return events

    def _timeout(self, action: Timeout) -> list[Event]:
        self.core.check_timer(action.timer)
        phase = self.state.phase
        if phase is Phase.LOBBY:
            return [*expire_lobby(self.state, action.timer)]
        if phase is Phase.BANKER:
            asked = self.asked_person()
            assert asked is not None
            return [DeadlinePassed(action.timer, (asked,)), *self._ask_next()]
        late = [hand for hand in self._deciders() if hand.status in PENDING]
        for hand in late:
            hand.status = Status.FORFEIT if hand.status is Status.FORCED else Status.STOOD
        events: list[Event] = [DeadlinePassed(action.timer, tuple(hand.person for hand in late))]
        return events + (self._to_banker() if phase is Phase.DRAW else self._showdown())

    def _cancel(self, _action: Cancel) -> list[Event]:
        return [*cancel(self.state)]

    # -- the banker choice (叫庄) ------------------------------------------------------------------
    def _start(self, shuffle: Shuffle) -> list[Event]:
        state = self.state
        state.base = base_for_table(seat.balance for seat in self.core.seats)
        started = self.core.begin_round(shuffle, state.base)
        state.participants = self.core.seat_order_from(state.last_banker_seat)
        state.asked = -1
        state.phase = Phase.BANKER
        return [started, *self._ask_next()]

    def _ask_next(self) -> list[Event]:
        state = self.state
        state.asked += 1
        if state.asked >= len(state.participants):
            return [self.core.end_round(), *close(self.state, "no_banker")]
        return [BankerAsked(state.participants[state.asked]), self.core.start_timer(self.core.turn_seconds)]

    def _check_asked(self, person: int) -> None:
        if self.state.phase is not Phase.BANKER:
            raise WrongPhase("the banker is chosen before the deal")
        self.core.require_seat(person)
        if person not in self.state.participants:
            raise NotInRound()
        if self.asked_person() != person:
            raise NotYourTurn(f"waiting for {self.asked_person()}")

    def _be_banker(self, action: BeBanker) -> list[Event]:
        self._check_asked(action.person)
        self.state.banker = action.person
        return [BankerChosen(action.person), *self._deal()]

    def _pass(self, action: PassBanker) -> list[Event]:
        self._check_asked(action.person)
        return self._ask_next()

    def _leave_banker_choice(self, person: int) -> list[Event]:
        """Leaving before the deal costs nothing; the round goes on while two people remain."""
        state = self.state
        index = state.participants.index(person)
        state.participants.remove(person)
        if len(state.participants) < MIN_SEATS:
            state.participants = []
            return [self.core.end_round(), *back_to_lobby(self.state)]
        if index < state.asked:
            state.asked -= 1
        elif index == state.asked:
            state.asked -= 1
            return self._ask_next()
        return []

    # -- the deal and the draw --------------------------------------------------------------------
    def _deal(self) -> list[Event]:
        state, core = self.state, self.core
        assert state.banker is not None
        banker_seat = core.require_seat(state.banker).seat_no
        order = [person for person in core.seat_order_from(banker_seat) if person in state.participants]
        state.last_banker_seat = banker_seat
        state.hands = [Hand(person, [], Status.WAITING) for person in order]
        for _ in range(2):
            for hand in state.hands:
                hand.cards.append(core.deal())
        state.phase = Phase.DRAW
        events: list[Event] = [Dealt(hand.person, tuple(hand.cards)) for hand in state.hands]
        banker = self._banker_hand()
        if all(card.is_joker for card in banker.cards):
            return events + self._banker_invincible()
        for hand in state.hands:
            if any(card.is_joker for card in hand.cards) and not all(card.is_joker for card in hand.cards):
                hand.status = Status.FORCED
            elif evaluate(hand.cards).kind.is_natural:
                hand.status = Status.NATURAL
                if hand is not banker:
                    judged = evaluate(hand.cards)
                    events.append(HandShown(hand.person, tuple(hand.cards), judged.kind, judged.points))
        if self.pending():
            return [*events, TurnOf(self.pending()), core.start_timer(core.turn_seconds)]
        return events + self._to_banker()

    def _deciders(self) -> list[Hand]:
        """The hands that choose now: the players in the draw, the banker after them."""
        if self.state.phase is Phase.DRAW:
            return self._players()
        if self.state.phase is Phase.BANKER_DRAW:
            return [self._banker_hand()]
        return []

    def _decide(self, person: int, draw: bool) -> list[Event]:
        if self.state.phase not in (Phase.DRAW, Phase.BANKER_DRAW):
            raise WrongPhase("drawing comes after the deal")
        self.core.require_seat(person)
        hand = self.hand_of(person)
        if hand is None or hand.status is Status.ESCAPED:
            raise NotInRound()
        if hand.status is Status.NATURAL:
            raise CannotDraw()
        if hand.status not in PENDING:
            raise AlreadyDecided()
        if hand not in self._deciders():
            raise NotYourTurn("the players choose first, then the banker")
        if hand.status is Status.FORCED and not draw:
            raise MustDraw()
        events: list[Event] = [Decided(person, draw)]
        if draw:
            card = self.core.deal()
            hand.cards.append(card)
            events.append(Dealt(person, (card,)))
        hand.status = Status.DREW if draw else Status.STOOD
        if self.pending():
            return events
        return events + (self._to_banker() if self.state.phase is Phase.DRAW else self._showdown())

    def _draw(self, action: Draw) -> list[Event]:
        return self._decide(action.person, draw=True)

    def _stand(self, action: Stand) -> list[Event]:
        return self._decide(action.person, draw=False)

    def _to_banker(self) -> list[Event]:
        banker = self._banker_hand()
        if banker.status not in PENDING:
            return self._showdown()
        self.state.phase = Phase.BANKER_DRAW
        return [TurnOf((banker.person,)), self.core.start_timer(self.core.turn_seconds)]

    # -- the end of a round -----------------------------------------------------------------------
    def _player_escapes(self, hand: Hand, penalty: int) -> list[Event]:
        person = hand.person
        events: list[Event] = list(self.core.pay(person, ESCROW, penalty, PayReason.ESCAPE_PENALTY))
        hand.status = Status.ESCAPED
        self.core.remove_seat(person)
        events.append(Left(person, escaped=True))
        if not self._players():
            shared = self._share_escape_penalties(self.state.banker)
            return events + shared + self._end_round(RoundEnd.PLAYERS_ESCAPED)
        if self.state.phase is Phase.DRAW and not self.pending():
            events += self._to_banker()
        return events

    # Set once, never changed (a ClassVar, as RUF012 asks, cannot name the game's event type).
    HANDLERS = {  # noqa: RUF012
        Join: Table._join,
        Credit: Table._credit,
        Leave: _leave,
        Ready: Table._ready,
        Timeout: _timeout,
        Cancel: _cancel,
        CloseAfterRound: Table._close_after_round,
        BeBanker: _be_banker,
        PassBanker: _pass,
        Draw: _draw,
        Stand: _stand,
    }


__all__ = [
    "BankerAsked",
    "BankerChosen",
    "BeBanker",
    "Decided",
    "Draw",
    "HandShown",
    "Joined",
    "Move",
    "MuxiAction",
    "MuxiEvent",
    "MuxiTable",
    "PassBanker",
    "PersonResult",
    "Phase",
    "RoundEnd",
    "RoundOver",
    "SeenHand",
    "Stand",
    "Status",
    "TurnOf",
]
