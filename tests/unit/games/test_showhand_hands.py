"""Showhand hand evaluator (games/showhand/hands.py) against RULES.md 2.1 / 2.2 and the seed.

The expected counts and the expected order come from this file alone: combinatorics and a naive
classifier written from the rule text, never from the engine's output.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from math import comb
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.cards import DECK_28, Card, parse_cards
from games.showhand import Category, ShowhandHand, compare, compare_visible, evaluate, visible_strength

EXAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "examples"

# ---- an independent naive rating, written from RULES.md 2.1 ------------------------------------

NAIVE_ORDER = [
    "high_card",
    "one_pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
]
SUIT_POWER = {"S": 4, "H": 3, "C": 2, "D": 1}  # spade > heart > club > diamond


def naive_rank(card: Card) -> int:
    return 14 if card.rank == 1 else card.rank  # A is the top rank; the deck holds 8 to A


def naive_suit(card: Card) -> int:
    assert card.suit is not None
    return SUIT_POWER[card.suit.value]


def naive_rate(cards: tuple[Card, ...]) -> tuple[str, tuple[int, ...]]:
    """(category, sort key) by the rule text; straights and flushes only with five cards."""
    ranks = sorted((naive_rank(c) for c in cards), reverse=True)
    counts = Counter(ranks)
    shape = sorted(counts.values(), reverse=True)
    top = max(cards, key=lambda c: (naive_rank(c), naive_suit(c)))
    top_key = (naive_rank(top), naive_suit(top))

    def best_suit(rank: int) -> int:
        return max(naive_suit(c) for c in cards if naive_rank(c) == rank)

    if shape[0] == 4:
        category, key = "four_of_a_kind", (ranks[0] if counts[ranks[0]] == 4 else ranks[-1],)
    elif shape[0] == 3:
        trips = next(r for r, n in counts.items() if n == 3)
        category, key = ("full_house" if shape[1:] == [2] else "three_of_a_kind"), (trips,)
    elif shape[:2] == [2, 2]:
        high, low = sorted((r for r, n in counts.items() if n == 2), reverse=True)
        category, key = "two_pair", (high, low, best_suit(high))
    elif shape[0] == 2:
        pair = next(r for r, n in counts.items() if n == 2)
        category, key = "one_pair", (pair, best_suit(pair))
    else:
        five = len(cards) == 5
        flush = five and len({c.suit for c in cards}) == 1
        straight = five and ranks[0] - ranks[-1] == 4  # 8 and A are 8 and 14: never consecutive
        if straight and flush:
            category = "straight_flush"
        elif flush or straight:
            category = "flush" if flush else "straight"
        else:
            category = "high_card"
        key = top_key
    return category, (NAIVE_ORDER.index(category), *key)


AllHands = list[tuple[tuple[Card, ...], ShowhandHand]]


@pytest.fixture(scope="module")
def all_hands() -> AllHands:
    return [(combo, evaluate(combo)) for combo in itertools.combinations(DECK_28, 5)]


def expected_counts() -> dict[str, int]:
    """Every category's count in the 28-card deck: 7 ranks of 4 suits, 3 straights (AKQJT..QJT98)."""
    straights, suit_patterns = 3, 4**5
    rank_sets = comb(7, 5)
    return {
        "straight_flush": straights * 4,
        "four_of_a_kind": 7 * 24,
        "full_house": 7 * comb(4, 3) * 6 * comb(4, 2),
        "flush": 4 * (rank_sets - straights),
        "straight": straights * (suit_patterns - 4),
        "three_of_a_kind": 7 * comb(4, 3) * comb(6, 2) * 4**2,
        "two_pair": comb(7, 2) * comb(4, 2) ** 2 * 5 * 4,
        "one_pair": 7 * comb(4, 2) * comb(6, 3) * 4**3,
        "high_card": (rank_sets - straights) * (suit_patterns - 4),
    }


def hand(text: str) -> ShowhandHand:
    return evaluate(parse_cards(text))


# ---- every hand -------------------------------------------------------------------------------


def test_category_order_is_the_rules_order() -> None:
    assert [c.value for c in Category] == NAIVE_ORDER[::-1]
    assert [c.power for c in Category] == list(range(8, -1, -1))
    assert isinstance(Category.FULL_HOUSE, str)


def test_expected_counts_cover_the_deck() -> None:
    assert sum(expected_counts().values()) == comb(28, 5) == 98_280


def test_every_hand_has_the_counted_category(all_hands: AllHands) -> None:
    assert len(all_hands) == 98_280
    got = Counter(h.category.value for _, h in all_hands)
    naive = Counter(naive_rate(combo)[0] for combo, _ in all_hands)
    assert naive == expected_counts()
    assert got == expected_counts()


def test_every_hand_agrees_with_the_naive_order(all_hands: AllHands) -> None:
    pairs = sorted(((naive_rate(combo), h) for combo, h in all_hands), key=lambda p: p[0][1])
    for (naive_a, a), (naive_b, b) in itertools.pairwise(pairs):
        assert a.category.value == naive_a[0]
        if naive_a[1] == naive_b[1]:
            assert a.strength == b.strength, (a, b)
        else:
            assert a.strength < b.strength, (a, b)


def test_hands_are_shared_and_their_cards_are_the_hand(all_hands: AllHands) -> None:
    for combo, h in all_hands[::97]:
        assert evaluate(list(reversed(combo))) is h
        assert sorted(h.cards, key=str) == sorted(combo, key=str)


def test_no_two_disjoint_hands_share_a_strength(all_hands: AllHands) -> None:
    """Exhaustive: inside each strength, every two hands have a card in common."""
    assert_no_disjoint_pair(group_by_strength((h.strength, combo) for combo, h in all_hands))


def group_by_strength(rated: Iterable[tuple[int, tuple[Card, ...]]]) -> dict[int, list[int]]:
    """Card sets as bit masks, grouped by strength."""
    bit = {card: 1 << i for i, card in enumerate(DECK_28)}
    groups: dict[int, list[int]] = {}
    for strength, combo in rated:
        groups.setdefault(strength, []).append(sum(bit[c] for c in combo))
    return groups


def assert_no_disjoint_pair(groups: dict[int, list[int]]) -> None:
    for strength, masks in groups.items():
        common = masks[0]
        for mask in masks:
            common &= mask
        if common:  # one card in every hand of the group
            continue
        distinct = set(masks)
        for a, b in itertools.combinations(distinct, 2):
            assert a & b, f"two disjoint card sets share strength {strength}"


# ---- display order ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("8H KS 8S KC KH", "KS KH KC 8S 8H"),
        ("9D 8C AS 9S 9H", "9S 9H 9D AS 8C"),
        ("10S JD QH KC AD", "AD KC QH JD 10S"),
        ("8C QS 8D QD 9H", "QS QD 8C 8D 9H"),
        ("AH 9C 9S KD 8D", "9S 9C AH KD 8D"),
        ("8S AS AH AD AC", "AS AH AC AD 8S"),
    ],
)
def test_cards_are_shown_best_first(text: str, shown: str) -> None:
    assert " ".join(str(c) for c in hand(text).cards) == shown


# ---- the categories and the seed's tie rules --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("AS KS QS JS 10S", "straight_flush"),
        ("QD JD 10D 9D 8D", "straight_flush"),
        ("AS 8S 9S 10S JS", "flush"),  # 8 and A are not consecutive
        ("AS 8H 9C 10D JS", "high_card"),
        ("KH QS JC 10D 9S", "straight"),
        ("9S 9H 9C 9D AS", "four_of_a_kind"),
        ("AS AH AC 8D 8S", "full_house"),
        ("AD QD 10D 9D 8D", "flush"),
        ("AS AH AC 9D 8S", "three_of_a_kind"),
        ("AS AH 9C 9D 8S", "two_pair"),
        ("AS KH 9C 9D 8S", "one_pair"),
        ("AS KH JC 9D 8S", "high_card"),
    ],
)
def test_categories_of_the_seed_examples(text: str, category: str) -> None:
    assert hand(text).category.value == category


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        # Category order, full house above flush.
        ("QD JD 10D 9D 8D", "AS AH AC AD KS"),
        ("8S 8H 8C 8D 9S", "AS AH AC KS KH"),
        ("8S 8H 8C 9D 9S", "AH KH QH JH 9H"),
        ("KC JC 10C 9C 8C", "AS KH QD JD 10S"),
        ("QH JH 10C 9D 8S", "AS AH AC KD QS"),
        ("8S 8H 8C 9D 10S", "AS AH KC KD QS"),
        ("8S 8H 9C 9D 10S", "AS AH KC QD JS"),
        ("8S 8H 9C 10D JS", "AS KH QC JD 9S"),
        # Straight flush: highest card's rank, then its suit.
        ("KD QD JD 10D 9D", "QS JS 10S 9S 8S"),
        ("AS KS QS JS 10S", "AH KH QH JH 10H"),
        # Four of a kind and full house: the rank of the four / the three, whatever else.
        ("9S 9H 9C 9D 10S", "8H 8C 8D 8S AH"),
        ("QS QH QC 8S 8H", "JS JH JC AS AH"),
        # Flush: highest card's rank, then that card's suit (nothing below it counts).
        ("AD JD 10D 9D 8D", "KS QS JS 10S 8S"),
        ("AC QC JC 9C 8C", "AD KD QD JD 9D"),
        # Straight: highest card's rank, then its suit.
        ("AS KH QC JD 10S", "AH KC QD JS 10H"),
        ("AD KD QC JC 10C", "KS QS JH 10H 9H"),
        # Three of a kind: the rank of the three, kickers ignored.
        ("9S 9H 9C 8D 10D", "8S 8H 8C AS KD"),
        # Two pair: higher pair, then lower pair, then the best suit in the higher pair.
        ("KS KH 8S 8H 9C", "QS QH JS JH AS"),
        ("AC AD 9H 9C 8C", "AS AH 8S 8H 9S"),
        ("AS AD KS KD 8H", "AH AC KH KC QD"),
        # One pair: the pair's rank, then the best suit in the pair, kickers ignored.
        ("9S 9H 8C 10D JD", "8S 8H AS KD QC"),
        ("KS KD 8S 9S 10H", "KH KC AS QS JD"),
        # High card: highest card's rank, then its suit.
        ("AD JC 10C 9C 8H", "KS QS JS 10D 8S"),
        ("AS QD 10S 9H 8C", "AH KC JD 10D 8D"),
    ],
)
def test_tie_rules(winner: str, loser: str) -> None:
    a, b = hand(winner), hand(loser)
    assert compare(a, b) > 0
    assert compare(b, a) < 0


def example_rows(name: str, width: int) -> list[object]:
    path = EXAMPLES / name
    if not path.is_file():
        return [pytest.param(*([""] * width), marks=pytest.mark.skip(reason=f"{path} is not here"))]
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            fields = line.split("\t")
            assert len(fields) == width, line
            rows.append(pytest.param(*fields, id=" | ".join(fields)))
    return rows


@pytest.mark.parametrize(("a", "b", "cat_a", "cat_b", "winner"), example_rows("showhand_compare.tsv", 5))
def test_showhand_compare_examples(a: str, b: str, cat_a: str, cat_b: str, winner: str) -> None:
    ha, hb = hand(a), hand(b)
    assert (ha.category.value, hb.category.value) == (cat_a, cat_b)
    assert ("A" if compare(ha, hb) > 0 else "B") == winner
    assert compare(ha, hb) == -compare(hb, ha) != 0


@pytest.mark.parametrize(("a", "b", "winner"), example_rows("showhand_lead.tsv", 3))
def test_showhand_lead_examples(a: str, b: str, winner: str) -> None:
    got = compare_visible(parse_cards(a), parse_cards(b))
    assert got != 0
    assert ("A" if got > 0 else "B") == winner


# ---- face-up cards (RULES.md 2.2) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        ("AD", "KS"),  # 1 card: rank, then suit
        ("KS", "KH"),
        ("8S", "8H"),
        ("8S 8D", "AS KS"),  # 2 cards: pair > high card
        ("9D 9C", "8S 8H"),
        ("QS QD", "QH QC"),
        ("AD 8S", "KS QS"),
        ("AH 8D", "AC KS"),
        ("8S 8H 8C", "AS AH KS"),  # 3 cards: three of a kind > pair > high card
        ("8S 8H 9C", "AS KH QS"),
        ("JH JC 8S", "10S 10H AS"),
        ("KS KH 8C", "KC KD AH"),
        ("AS JH 10S", "AH KS QS"),  # no straight and no flush among face-up cards
        ("8S 8H 8C 8D", "AS AH AC KS"),  # 4 cards: four > three > two pair > pair > high card
        ("8S 8H 8C 9D", "AS AH KC KD"),
        ("9S 9H 8C 8D", "AS AH KC QD"),
        ("AS AH 8C 8D", "KS KH QC QD"),
        ("KS KD 9S 9D", "KH KC 8S 8D"),
        ("KS KD 9H 9C", "KH KC 9S 9D"),
        ("8S 8H 9C 10D", "AS KH QC JD"),
        ("AD 8H 9H 10H", "KS QS JS 10S"),
        ("AS KH QC JD", "AH KS QS JS"),
    ],
)
def test_visible_cards(winner: str, loser: str) -> None:
    a, b = parse_cards(winner), parse_cards(loser)
    assert compare_visible(a, b) > 0
    assert compare_visible(b, a) < 0
    assert visible_strength(a) > visible_strength(b)


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_visible_strength_agrees_with_the_naive_order(count: int) -> None:
    combos = list(itertools.combinations(DECK_28, count))
    rated = sorted(((naive_rate(c)[1], visible_strength(c), c) for c in combos), key=lambda r: r[0])
    for (key_a, a, _), (key_b, b, _) in itertools.pairwise(rated):
        assert (a == b) if key_a == key_b else (a < b)
    assert_no_disjoint_pair(group_by_strength((strength, combo) for _, strength, combo in rated))


# ---- properties -------------------------------------------------------------------------------

deals = st.permutations(DECK_28)


@settings(max_examples=300, deadline=None)
@given(deals)
def test_two_hands_from_one_deck_never_tie(deck: list[Card]) -> None:
    a, b = evaluate(deck[:5]), evaluate(deck[5:10])
    assert compare(a, b) != 0
    assert compare(a, b) == -compare(b, a)
    assert compare_visible(deck[1:5], deck[6:10]) != 0


@settings(max_examples=300, deadline=None)
@given(deals, deals, deals)
def test_compare_is_a_total_order(d1: list[Card], d2: list[Card], d3: list[Card]) -> None:
    a, b, c = evaluate(d1[:5]), evaluate(d2[:5]), evaluate(d3[:5])
    assert (compare(a, b) > 0) == (compare(b, a) < 0)
    assert (compare(a, b) == 0) == (a.strength == b.strength)
    if compare(a, b) >= 0 and compare(b, c) >= 0:
        assert compare(a, c) >= 0
    ordered = sorted([a, b, c], key=lambda h: h.strength)
    assert compare(ordered[0], ordered[1]) <= 0 and compare(ordered[1], ordered[2]) <= 0


# ---- refused input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("AS KS QS JS", r"exactly 5 cards, got 4: AS KS QS JS"),
        ("AS KS QS JS 10S 9S", r"exactly 5 cards, got 6"),
        ("AS KS QS JS AS", r"repeated card: AS"),
        ("AS KS QS JS 2S", r"28-card showhand deck.*: 2S"),
        ("AS KS QS JS 7H", r"28-card showhand deck.*: 7H"),
        ("AS KS QS JS BJ", r"28-card showhand deck.*: BJ"),
        ("SJ KS QS JS 10S", r"28-card showhand deck.*: SJ"),
    ],
)
def test_evaluate_refuses_bad_hands(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(parse_cards(text))


def test_evaluate_refuses_no_cards_and_non_cards() -> None:
    with pytest.raises(ValueError, match="got 0"):
        evaluate([])
    with pytest.raises(ValueError, match="not a card: 'AS'"):
        evaluate(["AS", "KS", "QS", "JS", "10S"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="expected a sequence of cards"):
        evaluate("AS KS")  # type: ignore[arg-type]


# A hand's index is two list reads on its mask: a repeated card (its bit counted once) or cards
# outside the deck (bits past the 28) must land outside the list, never on another hand.
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("AS AS KS KS QS", r"repeated card: AS"),
        ("AS AS KS QS JS", r"repeated card: AS"),
        ("AS AS AS KS QS", r"repeated card: AS"),
        ("AS AS AS AS AS", r"repeated card: AS"),
        ("2S 3S AS KS QS", r"28-card showhand deck.*: 2S"),
        ("2S 2S AS KS QS", r"28-card showhand deck.*: 2S"),
        ("AS KS QS 7H 7D", r"28-card showhand deck.*: 7H"),
        ("BJ SJ AS KS QS", r"28-card showhand deck.*: BJ"),
        ("AS KS QS JS SJ", r"28-card showhand deck.*: SJ"),
    ],
)
def test_evaluate_refuses_repeats_and_cards_outside_the_deck(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(parse_cards(text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("AS AS", r"repeated card: AS"),
        ("AS AS AS", r"repeated card: AS"),
        ("AS AS KS", r"repeated card: AS"),
        ("AS AS KS KS", r"repeated card: AS"),
        ("AS AS AS KS", r"repeated card: AS"),
        ("2S 3S", r"28-card showhand deck.*: 2S"),
        ("2S 2S AS", r"28-card showhand deck.*: 2S"),
        ("AS KS 7H 7D", r"28-card showhand deck.*: 7H"),
        ("BJ SJ", r"28-card showhand deck.*: BJ"),
        ("AS SJ", r"28-card showhand deck.*: SJ"),
    ],
)
def test_visible_strength_refuses_repeats_and_cards_outside_the_deck(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        visible_strength(parse_cards(text))


def test_no_repeat_of_deck_cards_is_ever_rated() -> None:
    """Every 2 to 5 cards of the deck with a card repeated (any number of times) is refused."""
    for count in range(2, 6):
        for combo in itertools.combinations_with_replacement(DECK_28, count):
            if len(set(combo)) == count:
                continue
            with pytest.raises(ValueError, match="repeated card"):
                (evaluate if count == 5 else visible_strength)(combo)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ("AS", "AH KH", r"as many on each side, got 1 vs 2"),
        ("", "", r"1 to 4 cards, got 0"),
        ("AS KS QS JS 10S", "AH KH QH JH 10H", r"1 to 4 cards, got 5"),
        ("AS AS", "KS KH", r"repeated card: AS"),
        ("AS 2S", "KS KH", r"28-card showhand deck.*: 2S"),
        ("AS KS", "KH BJ", r"28-card showhand deck.*: BJ"),
    ],
)
def test_compare_visible_refuses_bad_cards(a: str, b: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compare_visible(parse_cards(a), parse_cards(b))
