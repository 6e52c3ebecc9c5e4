"""Showhand (梭哈) hands: the 28-card five-card stud of RULES.md section 2.

Every one of the C(28, 5) = 98,280 five-card hands is rated once, at import, and kept in a list
numbered from the hand's 28-bit mask (one bit per card). :func:`evaluate` is then three list reads
(which also validate), and returns a shared :class:`ShowhandHand`. The face-up cards of RULES.md
2.2 (1 to 4 cards) get a second, smaller table (a dict by mask) behind :func:`visible_strength`.

Order (RULES.md 2.1): straight flush > four of a kind > full house > flush > straight > three of a
kind > two pair > one pair > high card; ranks A > K > Q > J > 10 > 9 > 8 (8 and A are not
consecutive); suits spade > heart > club > diamond, used only by the tie rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations
from math import comb

from games.cards import ACE, DECK_28, JACK, KING, QUEEN, Card

__all__ = [
    "Category",
    "DecidedBy",
    "ShowhandHand",
    "Verdict",
    "compare",
    "compare_visible",
    "decided_by",
    "evaluate",
    "verdict",
    "visible_strength",
]


class Category(StrEnum):
    """The nine showhand hand kinds, best first (full house above flush, as the seed ranks them)."""

    STRAIGHT_FLUSH = "straight_flush"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE = "full_house"
    FLUSH = "flush"
    STRAIGHT = "straight"
    THREE_OF_A_KIND = "three_of_a_kind"
    TWO_PAIR = "two_pair"
    ONE_PAIR = "one_pair"
    HIGH_CARD = "high_card"

    @property
    def power(self) -> int:
        """8 for a straight flush down to 0 for high card: the category's place in the order."""
        return _POWER[self]


_POWER: dict[Category, int] = {category: 8 - i for i, category in enumerate(Category)}
_SHIFT = 8  # the tie-break key of any category stays below 2**8 (two pair: at most 6*28 + 6*4 + 3)


@dataclass(frozen=True, slots=True)
class ShowhandHand:
    """A rated five-card hand: shared instances, one per distinct set of five cards.

    ``strength`` orders every hand as RULES.md 2.1 does (category, then the tie rules): the larger
    strength wins, and two hands dealt from one deck never have the same strength. ``cards`` holds
    the five cards best first, for display (the quads / trips / pairs first, each by suit).
    """

    category: Category
    cards: tuple[Card, ...]
    strength: int

    @property
    def lead(self) -> Card:
        """The card the tie rules look at first: the highest card, or the best of the four, the
        three or the (higher) pair."""
        return self.cards[0]


class DecidedBy(StrEnum):
    """What put one hand above another (RULES.md 2.1): the category, else the tie rules."""

    CATEGORY = "category"  # a better category
    LEAD_RANK = "lead_rank"  # the lead card's rank: the highest card, the four / three, the (higher) pair
    LOW_PAIR = "low_pair"  # two pair with the same higher pair: the lower pair's rank
    LEAD_SUIT = "lead_suit"  # the same ranks: the lead card's suit (the best suit in the pair)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A show-down's outcome: the best hand, the next best, and what put the one above the other."""

    winner: ShowhandHand
    runner_up: ShowhandHand
    decided_by: DecidedBy


#: Rank order for showhand: 8 is 0, ..., K is 5, A is 6 (the top card).
_RANK_INDEX: dict[int, int] = {8: 0, 9: 1, 10: 2, JACK: 3, QUEEN: 4, KING: 5, ACE: 6}
#: The three straights, as sets of rank indexes: Q-J-10-9-8, K-Q-J-10-9, A-K-Q-J-10.
_STRAIGHTS: frozenset[frozenset[int]] = frozenset(frozenset(range(low, low + 5)) for low in range(3))


def _order(card: Card) -> int:
    """0 (8♦) to 27 (A♠): rank index * 4 + suit strength, so a larger number is a better card."""
    return _RANK_INDEX[card.rank] * 4 + (card.suit.strength if card.suit is not None else 0)


#: The deck by order number (a hand mask ORs its cards' own ``Card.bit``).
_BY_ORDER: tuple[Card, ...] = tuple(sorted(DECK_28, key=_order))
_IN_DECK: frozenset[Card] = frozenset(DECK_28)


def _mask(orders: tuple[int, ...]) -> int:
    mask = 0
    for order in orders:
        mask |= _BY_ORDER[order].bit
    return mask


def _rate(orders: tuple[int, ...]) -> tuple[Category, int, tuple[Card, ...]]:
    """Category, strength and display order of 1 to 5 distinct cards given by order number.

    ``orders`` must be descending (best card first). Straights and flushes need five cards.
    """
    groups: dict[int, list[int]] = {}
    for order in orders:
        groups.setdefault(order >> 2, []).append(order)
    # Bigger groups first; the sort is stable, so equal sizes stay higher rank first, and inside
    # a group the best suit is already first.
    ordered = sorted(groups.values(), key=len, reverse=True)
    display = tuple(_BY_ORDER[order] for group in ordered for order in group)
    top = ordered[0]
    top_rank, top_card = top[0] >> 2, top[0]
    if len(top) == 4:
        category, key = Category.FOUR_OF_A_KIND, top_rank
    elif len(top) == 3:
        full = len(ordered) > 1 and len(ordered[1]) == 2
        category, key = (Category.FULL_HOUSE if full else Category.THREE_OF_A_KIND), top_rank
    elif len(top) == 2 and len(ordered) > 1 and len(ordered[1]) == 2:
        category, key = Category.TWO_PAIR, top_rank * 28 + (ordered[1][0] >> 2) * 4 + (top_card & 3)
    elif len(top) == 2:
        category, key = Category.ONE_PAIR, top_card
    else:
        flush = len(orders) == 5 and len({order & 3 for order in orders}) == 1
        if len(orders) == 5 and frozenset(groups) in _STRAIGHTS:
            category = Category.STRAIGHT_FLUSH if flush else Category.STRAIGHT
        else:
            category = Category.FLUSH if flush else Category.HIGH_CARD
        key = top_card
    return category, (category.power << _SHIFT) | key, display


#: A five-card mask is numbered 0 to 98,279 by adding two list items, one per half of its 28 bits:
#: ``_LOW[mask & _HALF_MASK] + _HIGH[mask >> _HALF]``. A hand with k cards in the low half counts
#: from the start of the k-card hands, by the rank of its low pattern among the k-card patterns
#: times C(14, 5 - k), plus the rank of its high pattern among the (5 - k)-card ones. The low half
#: also adds (its cards) * ``_STRIDE`` and the high half (its cards - 5) * ``_STRIDE``: the shifts
#: cancel only when the halves hold five cards between them, and any other mask (a repeated card
#: adds its bit once) lands past either end of ``_BY_INDEX``: IndexError. So does a card outside
#: the 28 (its bit is 28 or more, past the end of ``_HIGH``).
#: Two list reads and an addition instead of a lookup in a 98,280-entry dict, whose int keys
#: share their low bits (12,616 distinct low 18 bits) and probe long: 1.4x treys, not 1.05x.
_HALF = 14
_HALF_MASK = (1 << _HALF) - 1
_COUNT = comb(28, 5)
_STRIDE = 2 * _COUNT  # a shift of one stride puts any index past either end of the list
_NOWHERE = 10 * _STRIDE  # a half holding more than five cards


def _index_tables() -> tuple[list[int], list[int]]:
    by_count: dict[int, list[int]] = {}
    for pattern in range(1 << _HALF):  # numerically, so each count's patterns are ranked in order
        by_count.setdefault(pattern.bit_count(), []).append(pattern)
    low, high = [_NOWHERE] * (1 << _HALF), [_NOWHERE] * (1 << _HALF)
    start = 0
    for count in range(6):
        for rank, pattern in enumerate(by_count[count]):
            low[pattern] = count * _STRIDE + start + rank * comb(_HALF, 5 - count)
            high[pattern] = (count - 5) * _STRIDE + rank
        start += comb(_HALF, count) * comb(_HALF, 5 - count)
    assert start == _COUNT
    return low, high


_LOW, _HIGH = _index_tables()


def _index(mask: int) -> int:
    return _LOW[mask & _HALF_MASK] + _HIGH[mask >> _HALF]  # inlined in evaluate(): it is hot


def _build_tables() -> tuple[list[ShowhandHand], dict[int, int]]:
    """Every five-card hand by index (see ``_LOW``), and the strength of 1 to 4 face-up cards by mask."""
    hands: list[ShowhandHand | None] = [None] * _COUNT
    visible: dict[int, int] = {}
    best_first = range(27, -1, -1)
    for combo in combinations(best_first, 5):
        category, strength, display = _rate(combo)
        hands[_index(_mask(combo))] = ShowhandHand(category, display, strength)
    for count in range(1, 5):
        for face_up in combinations(best_first, count):
            visible[_mask(face_up)] = _rate(face_up)[1]
    every = [hand for hand in hands if hand is not None]
    assert len(every) == _COUNT
    return every, visible


_BY_INDEX, _VISIBLE = _build_tables()


def _invalid(cards: object, *, allowed: str) -> ValueError:
    """The ValueError for cards that missed the fast path, naming what is wrong and the bad token."""
    if isinstance(cards, (Card, str)) or not isinstance(cards, Iterable):
        return ValueError(f"expected a sequence of cards, got {cards!r}")
    items = list(cards)
    seen: set[Card] = set()
    for item in items:
        if not isinstance(item, Card):
            return ValueError(f"not a card: {item!r}")
        if item not in _IN_DECK:
            return ValueError(f"not a card of the 28-card showhand deck (8 to A): {item}")
        if item in seen:
            return ValueError(f"repeated card: {item}")
        seen.add(item)
    tokens = " ".join(str(item) for item in items) or "no cards"
    return ValueError(f"{allowed}, got {len(items)}: {tokens}")


def evaluate(cards: Sequence[Card]) -> ShowhandHand:
    """Rate exactly five distinct cards of the 28-card deck (RULES.md 2.1).

    Returns the shared :class:`ShowhandHand` of that set of cards (the order given does not
    matter). ``ValueError`` naming the problem and the bad card for a wrong count, a repeated card,
    or a card outside the deck (``2S``, a joker).
    """
    try:
        a, b, c, d, e = cards
        mask = a.bit | b.bit | c.bit | d.bit | e.bit
        return _BY_INDEX[_LOW[mask & _HALF_MASK] + _HIGH[mask >> _HALF]]
    except (ValueError, TypeError, AttributeError, IndexError):
        # A 2S or a joker has a bit past the 28 and a repeat adds its bit once: either way the
        # index falls outside the list. The slow path works out which card to blame.
        raise _invalid(cards, allowed="a showhand hand is exactly 5 cards") from None


def compare(a: ShowhandHand, b: ShowhandHand) -> int:
    """Positive when ``a`` wins, negative when ``b`` wins, 0 only for equal strength.

    Two hands dealt from one deck (no card in common) never compare 0.
    """
    return a.strength - b.strength


def decided_by(winner: ShowhandHand, runner_up: ShowhandHand) -> DecidedBy:
    """What put ``winner`` above ``runner_up`` (RULES.md 2.1); ``ValueError`` unless ``winner`` is
    the stronger. Two hands of one category differ in the lead card's rank, else (two pair) in the
    lower pair's rank, else in the lead card's suit: the sets (four, full house, three) always
    differ in rank, as no two hands from one deck hold the same set."""
    if winner.strength <= runner_up.strength:
        raise ValueError(
            f"the winner's hand must be the stronger: {winner.category} {winner.strength} "
            f"vs {runner_up.category} {runner_up.strength}"
        )
    if winner.category is not runner_up.category:
        return DecidedBy.CATEGORY
    if winner.lead.rank != runner_up.lead.rank:
        return DecidedBy.LEAD_RANK
    if winner.category is Category.TWO_PAIR and winner.cards[2].rank != runner_up.cards[2].rank:
        return DecidedBy.LOW_PAIR
    return DecidedBy.LEAD_SUIT


def verdict(hands: Iterable[ShowhandHand]) -> Verdict | None:
    """The best of the hands shown, the next best and why (None for fewer than two hands)."""
    ranked = sorted(hands, key=lambda hand: hand.strength, reverse=True)
    if len(ranked) < 2:
        return None
    return Verdict(ranked[0], ranked[1], decided_by(ranked[0], ranked[1]))


def visible_strength(cards: Sequence[Card]) -> int:
    """The strength of 1 to 4 face-up cards for choosing the lead (RULES.md 2.2).

    Only what face-up cards can show counts: four of a kind > three of a kind > two pair > pair >
    high card, with the tie rules of 2.1 (high card: top rank, then its suit; pair: rank, then best
    suit in it; two pair: higher pair, lower pair, best suit in the higher pair; three and four:
    rank). Compare only strengths of equally many cards; the largest one leads. ``ValueError``
    naming the bad card for a wrong count, a repeated card or a card outside the deck.
    """
    try:
        mask = 0
        for card in cards:
            mask |= card.bit
        if mask.bit_count() == len(cards):
            return _VISIBLE[mask]
    except (TypeError, KeyError, AttributeError, IndexError):
        pass
    raise _invalid(cards, allowed="face-up cards are 1 to 4 cards")


def compare_visible(cards_a: Sequence[Card], cards_b: Sequence[Card]) -> int:
    """Positive when face-up ``cards_a`` beat ``cards_b`` for the lead, negative when they lose.

    Both sides must show the same number of cards, 1 to 4 (``ValueError`` otherwise). Two sets of
    face-up cards with no card in common never compare 0.
    """
    if len(cards_a) != len(cards_b):
        raise ValueError(
            f"face-up cards to compare must be as many on each side, got {len(cards_a)} vs {len(cards_b)}"
        )
    return visible_strength(cards_a) - visible_strength(cards_b)
