"""Muxi (木虱) hands: kinds, points, multipliers, the order of RULES.md 1.2, and settlement (1.3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from itertools import product

from games.cards import ACE, DECK_54, KING, Card


class Kind(StrEnum):
    """The hand kinds of RULES.md 1.2, best first; the values are the engine names."""

    INVINCIBLE = "invincible"
    DOUBLE_TIANGONG = "double_tiangong"
    TIANGONG = "tiangong"
    STRAIGHT_FLUSH = "straight_flush"
    THREE_OF_A_KIND = "three_of_a_kind"
    STRAIGHT = "straight"
    FLUSH = "flush"
    DOUBLE = "double"
    NORMAL = "normal"
    MUXI = "muxi"

    @property
    def multiplier(self) -> int:
        """What a winning hand of this kind is paid, × the base (``muxi`` never wins: 1)."""
        return _MULTIPLIERS[self]

    @property
    def is_natural(self) -> bool:
        """Invincible, double tiangong and tiangong: two dealt cards that stand by themselves."""
        return self in (Kind.INVINCIBLE, Kind.DOUBLE_TIANGONG, Kind.TIANGONG)


_MULTIPLIERS = {
    Kind.INVINCIBLE: 10,
    Kind.DOUBLE_TIANGONG: 2,
    Kind.TIANGONG: 1,
    Kind.STRAIGHT_FLUSH: 8,
    Kind.THREE_OF_A_KIND: 5,
    Kind.STRAIGHT: 4,
    Kind.FLUSH: 3,
    Kind.DOUBLE: 2,
    Kind.NORMAL: 1,
    Kind.MUXI: 1,
}
# The order of 1.2 as one number: special kinds by rank; point hands by points, then multiplier.
_SPECIAL_ORDER = {
    Kind.INVINCIBLE: 1000,
    Kind.STRAIGHT_FLUSH: 500,
    Kind.THREE_OF_A_KIND: 400,
    Kind.STRAIGHT: 300,
}
_POINT_KINDS = (Kind.FLUSH, Kind.DOUBLE, Kind.NORMAL)


@dataclass(frozen=True, slots=True)
class MuxiHand:
    """A judged hand: its ``kind``, ``points`` (0–9) and ``multiplier``.

    ``cards`` are the cards as held (jokers included); ``order`` ranks hands for :func:`compare`.
    For kinds judged without points (straight flush, three of a kind, straight, invincible)
    ``points`` is still the sum of the cards the jokers stand for (0 for invincible).
    """

    kind: Kind
    points: int
    cards: tuple[Card, ...]
    order: int

    @property
    def multiplier(self) -> int:
        return self.kind.multiplier


def card_points(card: Card) -> int:
    """A–9 count 1–9; 10, J, Q, K count 0 (RULES.md 1.1)."""
    return card.rank if card.rank < 10 else 0


def _points(cards: Sequence[Card]) -> int:
    return sum(card_points(card) for card in cards) % 10


def _order(kind: Kind, points: int) -> int:
    if kind in _SPECIAL_ORDER:
        return _SPECIAL_ORDER[kind]
    if kind in (Kind.DOUBLE_TIANGONG, Kind.TIANGONG):
        return (900 if kind is Kind.DOUBLE_TIANGONG else 700) - (100 if points == 8 else 0)
    if kind is Kind.MUXI:
        return 0
    return 200 + points * 10 + kind.multiplier


def _is_run(ranks: Sequence[int]) -> bool:
    """Three ranks consecutive on the circle A-2-…-K-A (Q-K-A and K-A-2 count, 10-J-K does not)."""
    if len(set(ranks)) != 3:
        return False
    return any({(rank - ACE - start) % KING for rank in ranks} == {0, 1, 2} for start in range(KING))


def _kind_of_two(cards: Sequence[Card]) -> tuple[Kind, int]:
    points = _points(cards)
    suited_or_pair = cards[0].suit == cards[1].suit or cards[0].rank == cards[1].rank
    if points >= 8:
        return (Kind.DOUBLE_TIANGONG if suited_or_pair else Kind.TIANGONG), points
    if points == 0:
        return Kind.MUXI, 0
    return (Kind.DOUBLE if suited_or_pair else Kind.NORMAL), points


def _kind_of_three(cards: Sequence[Card]) -> tuple[Kind, int]:
    points = _points(cards)
    ranks = [card.rank for card in cards]
    one_suit = len({card.suit for card in cards}) == 1
    run = _is_run(ranks)
    if run and one_suit:
        return Kind.STRAIGHT_FLUSH, points
    if len(set(ranks)) == 1:
        return Kind.THREE_OF_A_KIND, points
    if run:
        return Kind.STRAIGHT, points
    if points == 0:
        return Kind.MUXI, 0
    return (Kind.FLUSH if one_suit else Kind.NORMAL), points


_PLAIN_CARDS = tuple(card for card in DECK_54 if not card.is_joker)


@cache
def _evaluate_sorted(cards: tuple[Card, ...]) -> MuxiHand:
    jokers = sum(card.is_joker for card in cards)
    if len(cards) == 2:
        if jokers == 2:
            return MuxiHand(Kind.INVINCIBLE, 0, cards, _SPECIAL_ORDER[Kind.INVINCIBLE])
        if jokers == 1:
            raise ValueError("a two-card hand with one joker is not a hand: it must draw (RULES.md 1.2)")
        kind, points = _kind_of_two(cards)
        return MuxiHand(kind, points, cards, _order(kind, points))
    plain = [card for card in cards if not card.is_joker]
    best: tuple[int, Kind, int] | None = None
    # A joker stands for any card, even one already in the hand (任意一张牌).
    for stand_ins in product(_PLAIN_CARDS, repeat=jokers):
        kind, points = _kind_of_three([*plain, *stand_ins])
        order = _order(kind, points)
        if best is None or order > best[0]:
            best = (order, kind, points)
    assert best is not None
    order, kind, points = best
    return MuxiHand(kind, points, cards, order)


def _sort_key(card: Card) -> tuple[int, str]:
    return card.rank, card.suit.value if card.suit else ""


def evaluate(cards: Sequence[Card]) -> MuxiHand:
    """Judge 2 or 3 muxi cards (RULES.md 1.2); jokers resolve to the best hand they can make.

    Raises ``ValueError`` for a wrong count, a repeated card, and two cards holding one joker
    (that hand must draw a third card before it can be judged).
    """
    if len(cards) not in (2, 3):
        raise ValueError(f"a muxi hand has 2 or 3 cards, not {len(cards)} (RULES.md 1.5)")
    if len(set(cards)) != len(cards):
        repeated = next(str(card) for card in cards if list(cards).count(card) > 1)
        raise ValueError(f"card {repeated} appears twice: one deck has one of each card (RULES.md 1)")
    hand = _evaluate_sorted(tuple(sorted(cards, key=_sort_key)))
    return hand if hand.cards == tuple(cards) else MuxiHand(hand.kind, hand.points, tuple(cards), hand.order)


def compare(a: MuxiHand, b: MuxiHand) -> int:
    """> 0 when ``a`` wins, 0 for a tie, < 0 when ``b`` wins: the full order of RULES.md 1.2."""
    return (a.order > b.order) - (a.order < b.order)


def settle(banker: MuxiHand, player: MuxiHand, base: int) -> int:
    """The coins the player receives from the banker (negative: the player pays), per RULES.md 1.3.

    The winner of the pair is paid ``base ×`` the winner's multiplier; a tie pays nothing.
    """
    result = compare(banker, player)
    if result > 0:
        return -base * banker.multiplier
    if result < 0:
        return base * player.multiplier
    return 0
