"""A showhand table's state, and the course of one game once its actions are checked (RULES.md 2.2–2.5).

``ShowhandTable`` (``games.showhand.table``) refuses what the rules refuse; ``Game`` then carries out
what was accepted: the antes and the deal, the lead after every card, the betting rounds, the
show-down, the fold-out and the escape, the pot to the winner and the return to the lobby.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from games.cards import Card
from games.events import ESCROW, Dealt, Left, PayReason
from games.fairness import Shuffle
from games.showhand.betting import (
    LAST_CARD,
    AllIn,
    Bet,
    BettingAction,
    Call,
    Check,
    Fold,
    Raise,
    Spot,
    max_stake,
    round_cap,
    round_caps,
)
from games.showhand.events import (
    BetMade,
    BettingRoundOver,
    BettingRoundStarted,
    Called,
    CardsDealt,
    Checked,
    EndReason,
    FaceUp,
    Folded,
    FoldedOnTimeout,
    GameOver,
    LeadChanged,
    LeadReason,
    PersonResult,
    Raised,
    ShowDown,
    ShowhandEvent,
    ShownHand,
    Stakes,
    TurnOf,
    WentAllIn,
)
from games.showhand.hands import ShowhandHand, evaluate, verdict, visible_strength
from games.stakes import base_for_table
from games.table import Seat, TableCore, back_to_lobby, cancel

Event = ShowhandEvent


class Phase(StrEnum):
    LOBBY = "lobby"
    BETTING = (
        "betting"  # a game is under way: its deals happen inside an action, so it always waits for a bet
    )
    CLOSED = "closed"


@dataclass
class Player:
    """One person's part in the game under way; ``total`` is all they put in, the ante included."""

    person: int
    seat_no: int
    hole: Card | None = None
    face_up: list[Card] = field(default_factory=list)
    total: int = 0
    folded: bool = False
    acted: bool = False  # has had a turn in this betting round
    escaped: bool = False

    @property
    def in_game(self) -> bool:
        return not (self.folded or self.escaped)


@dataclass
class ShowhandState:
    """Everything a showhand table is; round-trips through plain JSON."""

    core: TableCore
    phase: Phase = Phase.LOBBY
    winner_seat: int = 0  # seat number of the last game's winner; 0 before the first game
    base: int = 0
    max_stake: int = 0
    card_no: int = 0  # cards each unfolded person holds
    opening: int = 0  # every unfolded person's total when this betting round began
    lead: int | None = None
    turn: int | None = None
    players: list[Player] = field(default_factory=list)  # in seat order
    # The last game's people as it ended, until the next one starts: each may still be shown their
    # own cards (the face-down one too) once the game is over.
    ended: list[Player] = field(default_factory=list)


class Game:
    """The course of a game on ``state``; every method expects an action the table has checked."""

    def __init__(self, state: ShowhandState) -> None:
        self.state = state
        self.core = state.core

    # -- reading ----------------------------------------------------------------------------------
    def player(self, person: int) -> Player | None:
        for player in self.state.players:  # a loop, not next(genexpr): called for every view drawn
            if player.person == person:
                return player
        return None

    def require_player(self, person: int) -> Player:
        player = self.player(person)
        assert player is not None, f"{person} is not in the game"
        return player

    def in_game(self) -> list[Player]:
        """The people still playing (neither folded nor escaped), in seat order."""
        return [player for player in self.state.players if player.in_game]

    def spot(self, player: Player) -> Spot:
        """What ``player`` faces if it is their turn."""
        state = self.state
        largest = max(other.total for other in self.in_game())
        return Spot(state.base, state.max_stake, state.card_no, state.opening, largest, player.total)

    def cap(self) -> int:
        state = self.state
        return round_cap(state.card_no, state.max_stake, state.base)

    # -- the start --------------------------------------------------------------------------------
    def start(self, shuffle: Shuffle) -> list[Event]:
        """Stakes, the lead, the antes, cards 1 (face down) and 2 (face up), the first betting round."""
        state, core = self.state, self.core
        balances = [seat.balance for seat in core.seats]
        base = state.base = base_for_table(balances)
        stake = state.max_stake = max_stake(balances, base)
        assert all(balance >= stake for balance in balances), "everyone can cover M: no side pots"
        started = core.begin_round(shuffle, base)
        lead, reason = self._lead_before_deal()
        state.players = [Player(seat.person, seat.seat_no) for seat in sorted(core.seats, key=_seat_no)]
        state.ended = []
        state.lead, state.card_no, state.phase = lead, 1, Phase.BETTING
        events: list[Event] = [
            started,
            Stakes(base, stake, round_caps(stake, base)),
            LeadChanged(lead, reason),
        ]
        order = self._from(lead)
        for player in order:
            events += core.pay(player.person, ESCROW, base, PayReason.ANTE)
            player.total = base
        for player in order:
            player.hole = core.deal()
            events.append(Dealt(player.person, (player.hole,)))
        return events + self._deal_face_up() + self._open_round()

    def _lead_before_deal(self) -> tuple[int, LeadReason]:
        """The first to join (first game), else the last winner, else the seat after theirs."""
        seats = sorted(self.core.seats, key=_seat_no)
        if self.state.winner_seat == 0:
            return seats[0].person, LeadReason.FIRST_JOINED
        for seat in seats:
            if seat.seat_no == self.state.winner_seat:
                return seat.person, LeadReason.LAST_WINNER
        return self.core.seat_order_from(self.state.winner_seat)[0], LeadReason.NEXT_SEAT

    # -- cards and betting rounds -----------------------------------------------------------------
    def _deal_face_up(self) -> list[Event]:
        """The next card face up to every unfolded person, from the lead round the table."""
        state = self.state
        assert state.lead is not None
        state.card_no += 1
        dealt = []
        for player in self._from(state.lead):
            if player.in_game:
                card = self.core.deal()
                player.face_up.append(card)
                dealt.append(FaceUp(player.person, card))
        best = _best_face_up(self.in_game())
        state.lead = best.person
        return [CardsDealt(state.card_no, tuple(dealt)), LeadChanged(best.person, LeadReason.BEST_FACE_UP)]

    def _open_round(self) -> list[Event]:
        state = self.state
        in_game = self.in_game()
        if all(player.total == state.max_stake for player in in_game):
            return self._next_card()  # all in: the rest is dealt with no more betting
        totals = {player.total for player in in_game}
        assert len(totals) == 1, "a round opens on equal totals"
        state.opening = totals.pop()
        for player in state.players:
            player.acted = False
        assert state.lead is not None
        return [
            BettingRoundStarted(state.card_no, self.cap()),
            *self._give_turn(self.require_player(state.lead)),
        ]

    def _give_turn(self, player: Player) -> list[Event]:
        self.state.turn = player.person
        timer = self.core.start_timer(self.core.turn_seconds)
        return [TurnOf(player.person, self.spot(player).options()), timer]

    def take(
        self, player: Player, action: BettingAction, total: int, *, on_timeout: bool = False
    ) -> list[Event]:
        """Carry out a checked betting action that brings ``player``'s total to ``total``
        (``on_timeout``: the clock folds for them)."""
        state = self.state
        assert total <= self.cap() <= state.max_stake, "no total past the round's cap or M"
        paid = total - player.total
        events: list[Event] = list(self.core.pay(player.person, ESCROW, paid, PayReason.BET))
        player.total, player.acted = total, True
        player.folded = isinstance(action, Fold)
        report = FoldedOnTimeout if on_timeout else _REPORTS[type(action)]
        events.append(report(player.person, paid, total))
        in_game = self.in_game()
        if len(in_game) == 1:
            return events + self._finish(in_game[0], EndReason.LAST_STANDING)
        largest = max(other.total for other in in_game)
        for other in self._from(player.person)[1:]:
            if other.in_game and (not other.acted or other.total < largest):
                return events + self._give_turn(other)
        return [*events, BettingRoundOver(state.card_no, self.core.escrow_total), *self._next_card()]

    def _next_card(self) -> list[Event]:
        self.state.turn = None
        if self.state.card_no == LAST_CARD:
            return self._showdown()
        return self._deal_face_up() + self._open_round()

    # -- the end ----------------------------------------------------------------------------------
    def escape(self, escaper: Player) -> list[Event]:
        """RULES.md 2.5: the game ends at once; the lead takes the pot, or the best face-up cards
        when the escaper was the lead (or the lead has folded since the last card)."""
        assert self.state.lead is not None
        escaper.escaped = True
        lead = self.require_player(self.state.lead)
        winner = lead if lead.in_game else _best_face_up(self.in_game())
        self.core.remove_seat(escaper.person)
        return [Left(escaper.person, escaped=True), *self._finish(winner, EndReason.ESCAPE)]

    def _showdown(self) -> list[Event]:
        assert self.state.lead is not None
        shown: list[ShownHand] = []
        held: dict[ShowhandHand, int] = {}  # each hand shown, by whose it is (no two are alike)
        for player in self._from(self.state.lead):
            if player.in_game:
                assert player.hole is not None
                hand = evaluate([player.hole, *player.face_up])
                held[hand] = player.person
                shown.append(
                    ShownHand(player.person, player.hole, tuple(player.face_up), hand.category, hand.cards)
                )
        judged = verdict(held)
        assert judged is not None, "a show-down has two hands at least"
        winner = self.require_player(held[judged.winner])
        showdown = ShowDown(tuple(shown), winner.person, held[judged.runner_up], judged.decided_by)
        return [showdown, *self._finish(winner, EndReason.SHOWDOWN)]

    def _finish(self, winner: Player, reason: EndReason) -> list[Event]:
        state, core = self.state, self.core
        pot = core.escrow_total
        events: list[Event] = list(core.release_all(winner.person, PayReason.POT))
        state.winner_seat = winner.seat_no
        results = tuple(self._result(player, reason) for player in state.players)
        events += [GameOver(core.round_no, reason, winner.person, pot, results), core.end_round()]
        self._clear()
        return events + core.unseat_poor() + back_to_lobby(self.state)

    def cancel(self) -> list[Event]:
        """The table is cancelled: the escrow goes back to whoever put it in, the deck is revealed."""
        self._clear()
        return [*cancel(self.state)]

    def _clear(self) -> None:
        state = self.state
        state.ended, state.players = state.players, []
        state.lead, state.turn, state.card_no, state.opening = None, None, 0, 0

    def _result(self, player: Player, reason: EndReason) -> PersonResult:
        shown = player.hole if reason is EndReason.SHOWDOWN and player.in_game else None
        return PersonResult(
            person=player.person,
            face_up=tuple(player.face_up),
            hole=shown,
            category=evaluate([shown, *player.face_up]).category if shown else None,
            total=player.total,
            folded=player.folded,
            escaped=player.escaped,
            net=self.core.round_net.get(player.person, 0),
        )

    def _from(self, person: int) -> list[Player]:
        """The game's people in seat order, starting with ``person``."""
        players = self.state.players
        index = next(i for i, player in enumerate(players) if player.person == person)
        return players[index:] + players[:index]


def _best_face_up(players: list[Player]) -> Player:
    return max(players, key=lambda player: visible_strength(player.face_up))


def _seat_no(seat: Seat) -> int:
    return seat.seat_no


_REPORTS: dict[type[BettingAction], type[BetMade | Checked | Called | Raised | WentAllIn | Folded]] = {
    Bet: BetMade,
    Check: Checked,
    Call: Called,
    Raise: Raised,
    AllIn: WentAllIn,
    Fold: Folded,
}

__all__ = ["Game", "Phase", "Player", "ShowhandState"]
