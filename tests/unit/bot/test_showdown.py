"""The show-down in players' words (bot/display/views/showdown.py): hand names, and what decided a winner.

The tie rules come from RULES.md 2.1 (the seed says the same): straight flush, flush, straight and
high card by the highest card's rank, then its suit; four, full house and three by the rank of the
four / the three; two pair by the higher pair, the lower pair, then the best suit in the higher
pair; one pair by its rank, then the best suit in it.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import pairwise

import pytest

from bot.display.views.common import card_text
from bot.display.views.showdown import beats, hand_name, tie_break
from games.cards import ACE, DECK_28, Card, parse_card, parse_cards
from games.showhand import Category, ShowhandHand, compare, evaluate


def hand(text: str) -> ShowhandHand:
    return evaluate(parse_cards(text))


def card(token: str, language: str = "zh-hans") -> str:
    return card_text(parse_card(token), language)


# ---- hand names --------------------------------------------------------------------------------

NAMES = [
    # cards, zh-hans, zh-hant, en
    ("AS KS QS JS 10S", "同花顺 到 A", "同花順 到 A", "Straight flush to the Ace"),
    ("KH QH JH 10H 9H", "同花顺 到 K", "同花順 到 K", "Straight flush to the King"),
    ("9S 9H 9C 9D AS", "铁支 9", "鐵支 9", "Four Nines"),
    ("JS JH JC 8S 8H", "葫芦 J 带 8", "葫蘆 J 帶 8", "Full house, Jacks over Eights"),
    ("8S 8H 8C AS AH", "葫芦 8 带 A", "葫蘆 8 帶 A", "Full house, Eights over Aces"),
    ("AD JD 10D 9D 8D", "同花 A 大", "同花 A 大", "Flush, Ace high"),
    ("KC JC 10C 9C 8C", "同花 K 大", "同花 K 大", "Flush, King high"),
    ("KS QH JC 10D 9S", "顺子 到 K", "順子 到 K", "Straight to the King"),
    ("QS JH 10C 9D 8S", "顺子 到 Q", "順子 到 Q", "Straight to the Queen"),
    ("QS QH QC AS 9H", "三条 Q", "三條 Q", "Three Queens"),
    ("8S 8H 8C AS 9H", "三条 8", "三條 8", "Three Eights"),
    ("KS KD 9S 9H 8C", "两对 K/9", "兩對 K/9", "Two pair, Kings and Nines"),
    ("9S 9D 10S 10H AC", "两对 10/9", "兩對 10/9", "Two pair, Tens and Nines"),
    ("JS JD AS QH 9C", "一对 J", "一對 J", "Pair of Jacks"),
    ("10S 10D AS QH 9C", "一对 10", "一對 10", "Pair of Tens"),
    ("AS KD JS 9H 8C", "散牌 A 大", "散牌 A 大", "Ace high"),
    ("KS QD 10S 9H 8C", "散牌 K 大", "散牌 K 大", "King high"),
]


@pytest.mark.parametrize(("cards", "hans", "hant", "en"), NAMES)
def test_hand_names(cards, hans, hant, en):
    rated = hand(cards)
    assert hand_name(rated, "zh-hans") == hans
    assert hand_name(rated, "zh-hant") == hant
    assert hand_name(rated, "en") == en


def test_every_category_is_named():
    assert {hand(cards).category for cards, *_ in NAMES} == set(Category)


# ---- what decided, category by category (zh-hans exact) --------------------------------------

TIES = [
    # winner, runner-up, what zh-hans says
    ("AS KS QS JS 10S", "KH QH JH 10H 9H", "都是同花顺，到 A 的大"),
    ("AS KS QS JS 10S", "AH KH QH JH 10H", f"都是同花顺 到 A，{card('AS')} 大过 {card('AH')}"),
    ("9S 9H 9C 9D AS", "8C 8H 8D 8S AH", "都是铁支，9 大过 8"),
    # full house: only the three counts (the runner-up's pair of aces does not)
    ("KS KH KC 8S 8H", "QS QH QC AS AH", "都是葫芦，三张 K 大过三张 Q"),
    ("AC QC JC 9C 8C", "KD JD 10D 9D 8D", "都是同花，A 大过 K"),
    # flush: the highest card, then its suit; the runner-up's K does not count
    ("AC QC JC 9C 8C", "AD KD JD 9D 8D", f"都是同花 A 大，{card('AC')} 大过 {card('AD')}"),
    ("AS KH QC JD 10S", "KS QH JC 10D 9S", "都是顺子，到 A 的大"),
    ("AS KH QC JD 10S", "AH KC QD JS 10H", f"都是顺子 到 A，{card('AS')} 大过 {card('AH')}"),
    # three of a kind: only the three (the runner-up's A K do not count)
    ("QS QH QC 9S 8H", "JS JH JC AH KD", "都是三条，Q 大过 J"),
    ("KS KD 9S 9H 8C", "QS QH JS JH AC", "都是两对，一对 K 大过一对 Q"),
    ("KS KD 9S 9H 8C", "KH KC 8S 8H AC", "都是两对，K 对相同，一对 9 大过一对 8"),
    # two pair: then the best suit in the higher pair (the kickers 8 / 9 do not count)
    ("AS AD KS KD 8H", "AH AC KH KC 9D", f"都是两对 A/K，{card('AS')} 大过 {card('AH')}"),
    ("JS JD AS QH 9C", "9H 9D AH KC QD", "都是对子，一对 J 大过一对 9"),
    ("KS KD AS QH 9C", "KH KC AH QS JD", f"都是一对 K，{card('KS')} 大过 {card('KH')}"),
    ("AS KD JS 9H 8C", "KH QC 10D 9D 8D", "都是散牌，A 大过 K"),
    # high card: the highest card, then its suit; the runner-up's K does not count
    ("AS QD 10S 9H 8C", "AH KC JD 10D 8D", f"都是散牌 A 大，{card('AS')} 大过 {card('AH')}"),
]


@pytest.mark.parametrize(("winner", "runner_up", "text"), TIES)
def test_tie_rules(winner, runner_up, text):
    win, lose = hand(winner), hand(runner_up)
    assert win.category == lose.category and compare(win, lose) > 0
    assert tie_break(win, lose, "zh-hans") == text
    assert beats(win, lose, "zh-hans") == text


def test_every_category_has_a_tie():
    assert {hand(winner).category for winner, *_ in TIES} == set(Category)


def test_ties_in_traditional_chinese_and_english():
    def both(winner, runner_up, language):
        return tie_break(hand(winner), hand(runner_up), language)

    assert both("JS JD AS QH 9C", "9H 9D AH KC QD", "zh-hant") == "都是對子，一對 J 大過一對 9"
    assert both("KS KD 9S 9H 8C", "KH KC 8S 8H AC", "zh-hant") == "都是兩對，K 對相同，一對 9 大過一對 8"
    assert both("KS KH KC 8S 8H", "QS QH QC AS AH", "zh-hant") == "都是葫蘆，三張 K 大過三張 Q"
    assert both("AS KH QC JD 10S", "KS QH JC 10D 9S", "zh-hant") == "都是順子，到 A 的大"
    spade, heart = card("KS", "zh-hant"), card("KH", "zh-hant")
    assert both("KS KD AS QH 9C", "KH KC AH QS JD", "zh-hant") == f"都是一對 K，{spade} 大過 {heart}"

    assert both("JS JD AS QH 9C", "9H 9D AH KC QD", "en") == "Both pairs: Jacks beat Nines"
    assert both("KS KD 9S 9H 8C", "QS QH JS JH AC", "en") == "Two pair each: Kings beat Queens"
    assert both("KS KD 9S 9H 8C", "KH KC 8S 8H AC", "en") == "Two pair each, Kings alike: Nines beat Eights"
    assert both("QS QH QC 9S 8H", "JS JH JC AH KD", "en") == "Three of a kind each: Queens beat Jacks"
    assert both("9S 9H 9C 9D AS", "8C 8H 8D 8S AH", "en") == "Four of a kind each: Nines beat Eights"
    assert both("KS KH KC 8S 8H", "QS QH QC AS AH", "en") == "Both full houses: three Kings beat three Queens"
    assert both("AC QC JC 9C 8C", "KD JD 10D 9D 8D", "en") == "Both flushes: Ace high beats King high"
    assert both("AS KD JS 9H 8C", "KH QC 10D 9D 8D", "en") == "High card each: Ace high beats King high"
    assert both("AS KH QC JD 10S", "KS QH JC 10D 9S", "en") == "Both straights: the one to the Ace wins"
    assert (
        both("AS KS QS JS 10S", "KH QH JH 10H 9H", "en") == "Both straight flushes: the one to the Ace wins"
    )
    spade, heart = card("AS", "en"), card("AH", "en")
    assert both("AS QD 10S 9H 8C", "AH KC JD 10D 8D", "en") == f"Ace high each: {spade} beats {heart}"
    assert both("AS KD JS 9H 8C", "AH KC QD 10D 8D", "en") == f"Ace high each: {spade} beats {heart}"


# ---- different categories --------------------------------------------------------------------


def test_the_category_decides():
    flush, straight = hand("AD JD 10D 9D 8D"), hand("AS KH QC JS 10S")
    full_house = hand("KS KH KC 8S 8H")
    assert tie_break(flush, straight, "zh-hans") is None
    assert beats(flush, straight, "zh-hans") == "同花 大过 顺子"
    assert beats(flush, straight, "zh-hant") == "同花 大過 順子"
    assert beats(flush, straight, "en") == "Flush beats Straight"
    # full house above flush (the seed's order)
    assert beats(full_house, flush, "zh-hans") == "葫芦 大过 同花"
    assert beats(hand("8S 8H 9C 9D 10S"), hand("AS KD JS 9H 8C"), "zh-hans") == "两对 大过 散牌"
    assert beats(hand("AS KS QS JS 10S"), hand("9S 9H 9C 9D 8S"), "zh-hant") == "同花順 大過 鐵支"


def test_the_winner_comes_first():
    flush, straight = hand("AD JD 10D 9D 8D"), hand("AS KH QC JS 10S")
    with pytest.raises(ValueError):
        beats(straight, flush, "zh-hans")
    with pytest.raises(ValueError):
        tie_break(hand("KH KC AH QS JD"), hand("KS KD AS QH 9C"), "en")
    with pytest.raises(ValueError):
        beats(flush, flush, "en")


# ---- many random show-downs: the text names what RULES.md 2.1 says decided ----------------------


def _value(c: Card) -> int:
    return 14 if c.rank == ACE else c.rank


def _suit(c: Card) -> int:
    assert c.suit is not None
    return c.suit.strength


def _rule_key(rated: ShowhandHand) -> tuple[list[int], Card | None]:
    """Per RULES.md 2.1, from the cards alone: the ranks compared in order, then the card whose
    suit breaks a last tie (None for four / full house / three, which never tie)."""
    cards = list(rated.cards)
    counts = Counter(_value(c) for c in cards)
    groups = sorted(counts, key=lambda v: (counts[v], v), reverse=True)

    def best_of(value: int) -> Card:
        return max((c for c in cards if _value(c) == value), key=_suit)

    category = rated.category
    if category in (Category.FOUR_OF_A_KIND, Category.FULL_HOUSE, Category.THREE_OF_A_KIND):
        return [groups[0]], None
    if category is Category.TWO_PAIR:
        return [groups[0], groups[1]], best_of(groups[0])
    if category is Category.ONE_PAIR:
        return [groups[0]], best_of(groups[0])
    top = max(counts)  # straight flush, flush, straight, high card: the highest card
    return [top], best_of(top)


def _expected(win: ShowhandHand, lose: ShowhandHand) -> str:
    """What zh-hans says, from the rule keys (the words of each case are tested above)."""
    zh_category = {
        Category.STRAIGHT_FLUSH: "同花顺",
        Category.FOUR_OF_A_KIND: "铁支",
        Category.FULL_HOUSE: "葫芦",
        Category.FLUSH: "同花",
        Category.STRAIGHT: "顺子",
        Category.THREE_OF_A_KIND: "三条",
        Category.TWO_PAIR: "两对",
        Category.ONE_PAIR: "对子",
        Category.HIGH_CARD: "散牌",
    }
    if win.category is not lose.category:
        assert win.category.power > lose.category.power
        return f"{zh_category[win.category]} 大过 {zh_category[lose.category]}"
    same = "都是" + zh_category[win.category]
    (win_ranks, win_card), (lose_ranks, lose_card) = _rule_key(win), _rule_key(lose)
    token = {14: "A", 13: "K", 12: "Q", 11: "J", 10: "10", 9: "9", 8: "8"}
    for index, (w, lo) in enumerate(zip(win_ranks, lose_ranks, strict=True)):
        if w != lo:
            assert w > lo
            if index == 1:
                return f"{same}，{token[win_ranks[0]]} 对相同，一对 {token[w]} 大过一对 {token[lo]}"
            if win.category in (Category.STRAIGHT_FLUSH, Category.STRAIGHT):
                return f"{same}，到 {token[w]} 的大"
            if win.category is Category.FULL_HOUSE:
                return f"{same}，三张 {token[w]} 大过三张 {token[lo]}"
            if win.category in (Category.TWO_PAIR, Category.ONE_PAIR):
                return f"{same}，一对 {token[w]} 大过一对 {token[lo]}"
            return f"{same}，{token[w]} 大过 {token[lo]}"
    assert win_card is not None and lose_card is not None and _suit(win_card) > _suit(lose_card)
    return f"都是{hand_name(win, 'zh-hans')}，{card(str(win_card))} 大过 {card(str(lose_card))}"


def test_beats_names_the_winner_for_random_show_downs():
    rng = random.Random(2026)
    seen: Counter[str] = Counter()
    for _ in range(4000):
        dealt = rng.sample(DECK_28, 10)
        a, b = evaluate(dealt[:5]), evaluate(dealt[5:])
        assert compare(a, b) != 0  # one deck: never a tie
        win, lose = (a, b) if compare(a, b) > 0 else (b, a)
        assert beats(win, lose, "zh-hans") == _expected(win, lose)
        for language in ("zh-hant", "en"):
            assert beats(win, lose, language)
        with pytest.raises(ValueError):
            beats(lose, win, "zh-hans")
        seen["category" if win.category is not lose.category else win.category] += 1
    # the deals reached the category line and many same-category show-downs
    assert seen["category"] > 1000 and len(seen) >= 7, seen


def test_beats_for_every_same_category_tie_kind():
    """Pairs built to hit every decision: each category's rank, and each suit tie."""
    rng = random.Random(7)
    by_category: dict[Category, list[ShowhandHand]] = {}
    for _ in range(60000):
        rated = evaluate(rng.sample(DECK_28, 5))
        by_category.setdefault(rated.category, []).append(rated)
    assert set(by_category) == set(Category)
    checked = 0
    for hands in by_category.values():
        for a, b in pairwise(hands):
            if set(a.cards) & set(b.cards) or compare(a, b) == 0:
                continue  # not from one deck
            win, lose = (a, b) if compare(a, b) > 0 else (b, a)
            assert beats(win, lose, "zh-hans") == _expected(win, lose)
            checked += 1
    assert checked > 1000
