"""The showhand table: a pure state machine, game by game (RULES.md 2.2 to 2.5).

``ShowhandTable.apply(action) -> list[event]`` either refuses the action with a ``RuleError``
(changing nothing: every handler checks everything before it touches the state) or carries it out
and says what happened. Phases: the lobby, then a game (its deals happen inside ``apply``, so a
game always waits for someone's bet until it ends), then the lobby again.

Every coin moves through the escrow: the antes and bets go in (``Paid(person, ESCROW, …)``), the
whole pot comes out to the winner in one ``Paid(ESCROW, winner, pot, POT)``. Totals (ante
included) never pass M, and everyone holds at least M when the game starts, so nobody's balance
can go below zero and there are no side pots.

Where things live: the stakes, the actions and the betting arithmetic in ``betting``, the events in
``events``, the state and the course of a game in ``game``, the refusals in ``errors``.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.cards import DECK_28, Card
from games.errors import NotInRound, NotYourTurn, WrongPhase
from games.events import DeadlinePassed
from games.fairness import Shuffle
from games.showhand.betting import (
    AllIn,
    Bet,
    BettingAction,
    Call,
    Check,
    Fold,
    Move,
    Option,
    Raise,
)
from games.showhand.errors import AlreadyFolded
from games.showhand.events import ShowhandEvent
from games.showhand.game import Event, Game, Phase, Player, ShowhandState
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
    expire_lobby,
    leave_freely,
)

MIN_SEATS, MAX_SEATS = 2, 4

ShowhandAction = Join | Leave | Ready | Timeout | Credit | Cancel | CloseAfterRound | BettingAction


@dataclass(frozen=True, slots=True)
class SeenPlayer:
    """A player as one viewer may see them (``ShowhandTable.seen_by``), as PokerKit censors hole
    cards: the face-down card only for its owner (``hole`` None for anyone else, ``has_hole`` says
    one was dealt), the face-up cards and the totals for everyone."""

    person: int
    hole: Card | None
    has_hole: bool
    face_up: tuple[Card, ...]
    total: int
    folded: bool
    escaped: bool


class ShowhandTable(Table[ShowhandAction, ShowhandEvent]):
    """A showhand table. Create with :meth:`new`, then ``apply`` actions; save with :meth:`to_dict`."""

    STATE = ShowhandState
    DECK = DECK_28
    state: ShowhandState

    def __init__(self, state: ShowhandState) -> None:
        super().__init__(state)
        self.game = Game(state)

    @classmethod
    def new(cls, *, turn_seconds: int = 30, lobby_seconds: int = 300) -> ShowhandTable:
        return cls(ShowhandState(TableCore(MIN_SEATS, MAX_SEATS, turn_seconds, lobby_seconds)))

    # -- what the bot reads -----------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self.state.phase

    @property
    def timer(self) -> int:
        """The running deadline's number (0: none); its ``Timeout`` must name it."""
        return self.core.timer

    @property
    def game_no(self) -> int:
        return self.core.round_no

    @property
    def base(self) -> int:
        """B of the game under way (or of the last one)."""
        return self.state.base

    @property
    def max_stake(self) -> int:
        """M: the most one person may put in this game."""
        return self.state.max_stake

    @property
    def card_no(self) -> int:
        """How many cards each unfolded person holds (2 to 5 during a game, 0 in the lobby)."""
        return self.state.card_no

    @property
    def cap(self) -> int | None:
        """The most a total may reach by the end of this betting round; None outside a game."""
        return self.game.cap() if self.state.phase is Phase.BETTING else None

    @property
    def lead(self) -> int | None:
        """Who speaks first (the seed's 庄家); None outside a game."""
        return self.state.lead

    @property
    def turn(self) -> int | None:
        """Whose turn it is to bet; None outside a game."""
        return self.state.turn

    @property
    def pot(self) -> int:
        return self.core.escrow_total

    @property
    def players(self) -> tuple[Player, ...]:
        """The people in the game under way, in seat order (read them, do not change them).

        Each has ``face_up``, ``total``, ``folded``; ``hole`` is private to its owner.
        """
        return tuple(self.state.players)

    def player(self, person: int) -> Player | None:
        return self.game.player(person)

    def awaited(self) -> tuple[int, ...]:
        """Who must act now: the person whose turn it is to bet; nobody between games."""
        return () if self.state.turn is None else (self.state.turn,)

    def card_holders(self) -> tuple[int, ...]:
        """Who holds cards in the game under way (their face-down card private to them)."""
        return tuple(player.person for player in self.state.players)

    def seen_by(self, viewer: int | None) -> tuple[SeenPlayer, ...]:
        """The game's people in seat order as ``viewer`` may see them (None: a spectator, or the
        group chat): every face-down card but the viewer's own is None."""
        return tuple(
            SeenPlayer(
                person=player.person,
                hole=player.hole if player.person == viewer else None,
                has_hole=player.hole is not None,
                face_up=tuple(player.face_up),
                total=player.total,
                folded=player.folded,
                escaped=player.escaped,
            )
            for player in self.state.players
        )

    def ended_as(self, person: int) -> Player | None:
        """``person``'s part in the last game as it ended (their cards, ``hole`` private to them),
        from its end until the next game starts; None during a game."""
        return next((player for player in self.state.ended if player.person == person), None)

    def escape_cost(self, person: int) -> int | None:
        """What leaving now would cost ``person`` (RULES.md 2.5: what they put in); None when free."""
        player = self.game.player(person)
        if self.state.phase is not Phase.BETTING or player is None or not player.in_game:
            return None
        return player.total

    def legal_actions(self, person: int) -> tuple[Option, ...]:
        """The buttons ``person`` may press now, with amounts (see ``Option``), Leave last."""
        state, seat = self.state, self.core.seat_of(person)
        if state.phase is Phase.CLOSED:
            return ()
        if seat is None:
            return (Option(Move.JOIN),) if len(self.core.seats) < self.core.max_seats else ()
        options: list[Option] = []
        if self.may_press_ready(seat):
            options.append(Option(Move.READY))
        elif state.phase is Phase.BETTING and state.turn == person:
            options += self.game.spot(self.game.require_player(person)).options()
        return (*options, Option(Move.LEAVE))

    def bet_amounts(self, person: int) -> tuple[Move, int, int] | None:
        """When it is ``person``'s turn to bet: a bet or raise of any step (``Spot.amounts``)."""
        if self.state.phase is not Phase.BETTING or self.state.turn != person:
            return None
        return self.game.spot(self.game.require_player(person)).amounts()

    # -- applying actions -------------------------------------------------------------------------
    def _start(self, shuffle: Shuffle) -> list[Event]:
        return self.game.start(shuffle)

    def _leave(self, action: Leave) -> list[Event]:
        person = action.person
        self.core.require_seat(person)
        player = self.game.player(person)
        if self.state.phase is Phase.BETTING and player is not None and player.in_game:
            return self.game.escape(player)
        # The lobby, a seated onlooker, or someone who folded: what they put in stays in the pot.
        return [*leave_freely(self.state, person)]

    def _timeout(self, action: Timeout) -> list[Event]:
        self.core.check_timer(action.timer)
        if self.state.phase is Phase.LOBBY:
            return [*expire_lobby(self.state, action.timer)]
        assert self.state.turn is not None, "a game's timer runs for someone's turn"
        player = self.game.require_player(self.state.turn)
        events: list[Event] = [DeadlinePassed(action.timer, (player.person,))]
        return events + self.game.take(player, Fold(player.person), player.total, on_timeout=True)

    def _cancel(self, _action: Cancel) -> list[Event]:
        return self.game.cancel()

    def _act(self, action: BettingAction) -> list[Event]:
        if self.state.phase is not Phase.BETTING:
            raise WrongPhase("betting happens during a game")
        self.core.require_seat(action.person)
        player = self.game.player(action.person)
        if player is None:
            raise NotInRound()
        if player.folded:
            raise AlreadyFolded()
        if self.state.turn != player.person:
            raise NotYourTurn(f"waiting for {self.state.turn}")
        total = self.game.spot(player).new_total(action)
        return self.game.take(player, action, total)

    # Set once, never changed (a ClassVar, as RUF012 asks, cannot name the game's event type).
    HANDLERS = {  # noqa: RUF012
        Join: Table._join,
        Credit: Table._credit,
        Leave: _leave,
        Ready: Table._ready,
        Timeout: _timeout,
        Cancel: _cancel,
        CloseAfterRound: Table._close_after_round,
        **dict.fromkeys((Bet, Check, Call, Raise, AllIn, Fold), _act),
    }


__all__ = [
    "MAX_SEATS",
    "MIN_SEATS",
    "Phase",
    "Player",
    "SeenPlayer",
    "ShowhandAction",
    "ShowhandState",
    "ShowhandTable",
]
