"""Muxi hands: every 2- and 3-card hand of the 54-card deck, against counts derived here."""

from collections import Counter
from itertools import combinations, pairwise
from math import comb
from pathlib import Path

import pytest

from games.cards import DECK_54, parse_cards
from games.muxi import Kind, base_for_balance, compare, evaluate, settle

EXAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "examples"
PLAIN = [card for card in DECK_54 if not card.is_joker]


def points_of(ranks):
    return sum(rank if rank < 10 else 0 for rank in ranks) % 10


def circle_gap(a, b):
    gap = (a - b) % 13
    return min(gap, 13 - gap)


def is_run(ranks):
    """Independent of the engine: three distinct ranks spanning at most 2 steps on the A..K circle."""
    return len(set(ranks)) == 3 and max(circle_gap(a, b) for a, b in combinations(ranks, 2)) <= 2


def expected_two(ranks, suited):
    points = points_of(ranks)
    special = suited or ranks[0] == ranks[1]
    if points >= 8:
        return ("double_tiangong" if special else "tiangong"), points
    if points == 0:
        return "muxi", 0
    return ("double" if special else "normal"), points


def expected_three(ranks, suits):
    points = points_of(ranks)
    if is_run(ranks) and len(set(suits)) == 1:
        return "straight_flush", None
    if len(set(ranks)) == 1:
        return "three_of_a_kind", None
    if is_run(ranks):
        return "straight", None
    if points == 0:
        return "muxi", 0
    return ("flush" if len(set(suits)) == 1 else "normal"), points


def expected_one_joker(a, b):
    """Two real cards and a joker: the best the joker can make, reasoned by hand."""
    near = a.rank != b.rank and circle_gap(a.rank, b.rank) <= 2
    if near and a.suit == b.suit:
        return "straight_flush", None
    if a.rank == b.rank:
        return "three_of_a_kind", None
    if near:
        return "straight", None
    return ("flush" if a.suit == b.suit else "normal"), 9  # the joker always reaches 9 points


def derived_counts():
    """Counts of each kind over all hands, by combinatorics over ranks and suit patterns."""
    counts = Counter()
    ranks = range(1, 14)
    # two cards: a pair of one rank (6 suit pairs) or two ranks (4 suited, 12 not)
    for r in ranks:
        counts[expected_two((r, r), False)[0]] += comb(4, 2)
    for r1, r2 in combinations(ranks, 2):
        counts[expected_two((r1, r2), True)[0]] += 4
        counts[expected_two((r1, r2), False)[0]] += 12
    counts["invincible"] += 1
    # three cards
    for r in ranks:
        counts["three_of_a_kind"] += comb(4, 3)
        for kicker in ranks:
            if kicker != r:
                counts[expected_three((r, r, kicker), "SHC")[0]] += comb(4, 2) * 4
    for trio in combinations(ranks, 3):
        counts[expected_three(trio, "SSS")[0]] += 4
        counts[expected_three(trio, "SHC")[0]] += 60
    # one joker (two of them) and two cards
    counts["three_of_a_kind"] += len(ranks) * 2 * comb(4, 2)
    for r1, r2 in combinations(ranks, 2):
        near = circle_gap(r1, r2) <= 2
        counts["straight_flush" if near else "flush"] += 2 * 4
        counts["straight" if near else "normal"] += 2 * 12
    counts["straight_flush"] += 52  # both jokers and any card
    return counts


def test_derived_counts_cover_every_hand():
    counts = derived_counts()
    two_card_hands = comb(52, 2) + 1  # the lone-joker pairs are not hands
    assert sum(counts.values()) == two_card_hands + comb(54, 3)
    assert counts["straight_flush"] == 13 * 4 + 2 * 4 * 13 * 2 + 52


def test_every_hand_of_the_deck_is_classified():
    got, derived = Counter(), derived_counts()
    for pair in combinations(DECK_54, 2):
        jokers = sum(card.is_joker for card in pair)
        if jokers == 1:
            with pytest.raises(ValueError, match="must draw"):
                evaluate(pair)
            continue
        hand = evaluate(pair)
        got[hand.kind.value] += 1
        if jokers == 0:
            want = expected_two((pair[0].rank, pair[1].rank), pair[0].suit == pair[1].suit)
            assert (hand.kind.value, hand.points) == want, pair
    for trio in combinations(DECK_54, 3):
        hand = evaluate(trio)
        got[hand.kind.value] += 1
        real = [card for card in trio if not card.is_joker]
        if len(real) == 3:
            want = expected_three([c.rank for c in real], [c.suit for c in real])
        elif len(real) == 2:
            want = expected_one_joker(*real)
        else:
            want = ("straight_flush", None)
        assert hand.kind.value == want[0], trio
        if want[1] is not None:
            assert hand.points == want[1], trio
    assert got == derived


def test_multipliers():
    assert {kind.value: kind.multiplier for kind in Kind} == {
        "invincible": 10,
        "double_tiangong": 2,
        "tiangong": 1,
        "straight_flush": 8,
        "three_of_a_kind": 5,
        "straight": 4,
        "flush": 3,
        "double": 2,
        "normal": 1,
        "muxi": 1,
    }


def rows(name):
    if not EXAMPLES.is_dir():
        pytest.skip("the shared examples are not beside the project")
    for line in (EXAMPLES / name).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            yield line.split("\t")


def test_worked_hand_examples():
    for cards, kind, points, multiplier in rows("muxi_hands.tsv"):
        hand = evaluate(parse_cards(cards))
        assert hand.kind.value == kind, cards
        if points != "-":
            assert hand.points == int(points), cards
        if multiplier != "-":
            assert hand.multiplier == int(multiplier), cards


def test_worked_settlement_examples():
    for banker, player, winner, coins in rows("muxi_compare.tsv"):
        b, p = evaluate(parse_cards(banker)), evaluate(parse_cards(player))
        want = {"banker": 1, "player": -1, "tie": 0}[winner]
        assert compare(b, p) == want, (banker, player)
        assert settle(b, p, 10) == int(coins), (banker, player)


@pytest.mark.parametrize(
    ("cards", "kind"),
    [("KD AD BJ", "straight_flush"), ("7D 8C SJ", "straight"), ("SJ 5H BJ", "straight_flush")],
)
def test_the_seeds_joker_examples(cards, kind):
    assert evaluate(parse_cards(cards)).kind.value == kind


def test_the_seeds_seven_point_flush():
    flush7 = evaluate(parse_cards("3C 4C JC"))
    assert (flush7.kind, flush7.points) == (Kind.FLUSH, 7)
    eight = evaluate(parse_cards("2D 2H 4H"))
    seven = evaluate(parse_cards("2D AH 4H"))
    # the flush loses to 8 points and pays 1×; it beats 7 points and is paid 3×
    assert settle(flush7, eight, 100) == 100
    assert settle(flush7, seven, 100) == -300


def test_order_of_the_special_kinds():
    ladder = ["BJ SJ", "9S KS", "8S KS", "9S KH", "8S KH", "2S 3S 4S", "5S 5H 5D", "2S 3H 4D", "4S 5S JS"]
    hands = [evaluate(parse_cards(text)) for text in ladder]
    for better, worse in pairwise(hands):
        assert compare(better, worse) > 0 and compare(worse, better) < 0


def test_same_special_kind_ties_whatever_the_cards():
    assert compare(evaluate(parse_cards("AS 2S 3S")), evaluate(parse_cards("QH KH AH"))) == 0
    assert compare(evaluate(parse_cards("9S KS")), evaluate(parse_cards("4D 4C 10H")[:2])) > 0
    assert compare(evaluate(parse_cards("4S 4H")), evaluate(parse_cards("9D 9C"))) == 0


def test_point_hands_compare_points_then_multiplier():
    flush, double, normal = (evaluate(parse_cards(t)) for t in ("2C 3C 9C", "AS 3S", "AS 3H"))
    assert (flush.points, double.points, normal.points) == (4, 4, 4)
    assert compare(flush, double) > 0 and compare(double, normal) > 0
    assert compare(evaluate(parse_cards("AS 3H")), evaluate(parse_cards("3D AC"))) == 0
    assert compare(evaluate(parse_cards("KS QS")), evaluate(parse_cards("10H JD QC 10S")[:3])) < 0


def test_muxi_loses_to_everything_and_ties_muxi():
    muxi = evaluate(parse_cards("KS QH"))
    assert compare(muxi, evaluate(parse_cards("AS 10H"))) < 0
    assert compare(muxi, evaluate(parse_cards("10S JH KD"))) == 0
    assert settle(muxi, muxi, 10) == 0


@pytest.mark.parametrize(
    ("cards", "problem"),
    [("AS", "2 or 3"), ("AS 2S 3S 4S", "2 or 3"), ("AS AS", "AS appears twice"), ("BJ 5H", "must draw")],
)
def test_wrong_hands_are_refused(cards, problem):
    with pytest.raises(ValueError, match=problem):
        evaluate(parse_cards(cards))


def test_evaluate_keeps_the_cards_as_given():
    assert [str(c) for c in evaluate(parse_cards("KD AD BJ")).cards] == ["KD", "AD", "BJ"]


@pytest.mark.parametrize(
    ("balance", "base"),
    [
        (999, None),
        (1_000, 10),
        (3_999, 10),
        (4_000, 100),
        (39_999, 100),
        (40_000, 1_000),
        (399_999, 1_000),
        (400_000, 10_000),
        (3_999_999, 10_000),
        (4_000_000, 100_000),
        (10**9, 100_000),
    ],
)
def test_base_for_balance(balance, base):
    assert base_for_balance(balance) == base
