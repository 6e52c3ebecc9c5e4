"""How a muxi round ends: the show-down's settlement (RULES.md 1.3, 1.5.6), the banker's
invincible hand (1.5.4), the escapes' penalties (1.6), and each person's result.

``RoundEnding`` is the part of ``MuxiTable`` that ends a round; it reads and changes only the
table's state and core, and hands the table back to the lobby.
"""

from __future__ import annotations

from games.cards import Card
from games.events import HOUSE, Left, Paid, PayReason
from games.muxi.hands import Kind, MuxiHand, evaluate, settle
from games.muxi.state import Hand, MuxiEvent, MuxiState, PersonResult, RoundEnd, RoundOver, Status
from games.stakes import pro_rata
from games.table import TableCore, back_to_lobby

PLAYER_ESCAPE, BANKER_ESCAPE = 10, 50  # × base (RULES.md 1.6)
ESCAPE_TO_BANKER = 8  # of every 10 a player's escape costs, the banker receives 8, the house 2
PLAYER_SHARE_OF_BANKER_ESCAPE = 10  # × base to every player still in the round

Event = MuxiEvent


class RoundEnding:
    """Settling and ending the round under way (mixed into ``MuxiTable``)."""

    state: MuxiState
    core: TableCore

    def _banker_hand(self) -> Hand:
        return self.state.hands[-1]

    def _players(self) -> list[Hand]:
        return [hand for hand in self.state.hands[:-1] if hand.status is not Status.ESCAPED]

    def _balance(self, person: int) -> int:
        return self.core.require_seat(person).balance

    def _owed_to_players(self) -> list[tuple[Hand, int]]:
        """What each player receives from the banker (negative: pays), before anyone's limits."""
        base, banker = self.state.base, self._banker_hand()
        banker_judged = evaluate(banker.cards) if banker.status is not Status.FORFEIT else None
        owed = []
        for hand in self._players():
            judged = evaluate(hand.cards) if hand.status is not Status.FORFEIT else None
            if judged is None:
                # the banker's multiplier: 1× when the banker holds muxi
                amount = 0 if banker_judged is None else -base * banker_judged.multiplier
            elif banker_judged is None:
                amount = base * judged.multiplier
            else:
                amount = settle(banker_judged, judged, base)
            owed.append((hand, amount))
        return owed

    def _showdown(self) -> list[Event]:
        banker = self._banker_hand()
        owed = self._owed_to_players()
        events: list[Event] = list(self._share_escape_penalties(banker.person))
        for hand, amount in owed:
            if amount < 0:
                loss = min(-amount, self._balance(hand.person))
                events += self.core.pay(hand.person, banker.person, loss, PayReason.SETTLEMENT)
        winners = [(hand, amount) for hand, amount in owed if amount > 0]
        shares = pro_rata(self._balance(banker.person), [amount for _, amount in winners])
        for (hand, _), share in zip(winners, shares, strict=True):
            events += self.core.pay(banker.person, hand.person, share, PayReason.SETTLEMENT)
        return events + self._end_round(RoundEnd.SHOWDOWN)

    def _banker_invincible(self) -> list[Event]:
        banker, events = self._banker_hand(), []
        for hand in self._players():
            loss = min(self.state.base * Kind.INVINCIBLE.multiplier, self._balance(hand.person))
            events += self.core.pay(hand.person, banker.person, loss, PayReason.SETTLEMENT)
        return events + self._end_round(RoundEnd.BANKER_INVINCIBLE)

    def _share_escape_penalties(self, banker: int | None) -> list[Paid]:
        """Escaped players' penalties leave the escrow: 8 of 10 to the banker, the rest to the house."""
        paid: list[Paid] = []
        for contributor, held in list(self.core.escrow.items()):
            to_banker = held * ESCAPE_TO_BANKER // PLAYER_ESCAPE if banker is not None else 0
            paid += self.core.release(
                contributor, banker if banker is not None else HOUSE, to_banker, PayReason.ESCAPE_SHARE
            )
            paid += self.core.release(contributor, HOUSE, held - to_banker, PayReason.ESCAPE_SHARE)
        return paid

    def _banker_escapes(self, payment: int) -> list[Event]:
        base, banker = self.state.base, self._banker_hand().person
        players = self._players()
        shares = pro_rata(payment, [PLAYER_SHARE_OF_BANKER_ESCAPE * base] * len(players))
        events: list[Event] = []
        for hand, share in zip(players, shares, strict=True):
            events += self.core.pay(banker, hand.person, share, PayReason.BANKER_ESCAPE)
        events += self.core.pay(banker, HOUSE, payment - sum(shares), PayReason.BANKER_ESCAPE)
        events += self._share_escape_penalties(None)
        self._banker_hand().status = Status.ESCAPED
        self.core.remove_seat(banker)
        events.append(Left(banker, escaped=True))
        return events + self._end_round(RoundEnd.BANKER_ESCAPED)

    def _end_round(self, reason: RoundEnd) -> list[Event]:
        state = self.state
        results = tuple(self._result(hand, reason) for hand in state.hands)
        events: list[Event] = [
            RoundOver(self.core.round_no, reason, state.base, results),
            self.core.end_round(),
        ]
        state.hands, state.banker, state.participants = [], None, []
        return events + self.core.unseat_poor() + back_to_lobby(self.state)

    def _result(self, hand: Hand, reason: RoundEnd) -> PersonResult:
        judged: MuxiHand | None = None
        if hand.status not in (Status.FORFEIT, Status.ESCAPED) and reason is not RoundEnd.BANKER_ESCAPED:
            judged = _judge_or_none(hand.cards)
        return PersonResult(
            person=hand.person,
            is_banker=hand.person == self.state.banker,
            cards=tuple(hand.cards),
            kind=judged.kind if judged else None,
            points=judged.points if judged else 0,
            status=hand.status,
            net=self.core.round_net.get(hand.person, 0),
        )


def _judge_or_none(cards: list[Card]) -> MuxiHand | None:
    try:
        return evaluate(cards)
    except ValueError:  # two cards with one joker: a hand that never drew
        return None
