"""A showhand show-down in players' words: what each hand is, and why the winner's hand won.

Pure functions of rated hands (``games.showhand.hands``) and a language; every text comes from the
catalogs (keys ``showdown.*``). ``hand_name`` says a hand with its ranks (一对 J, 葫芦 J 带 8, Two
pair, Kings and Nines); ``tie_break`` says what decided between two hands of one category, following
RULES.md 2.1 as ``hands.py`` rates them; ``beats`` is the one short line for any winner.

The tie rules (RULES.md 2.1 and the seed agree on each): straight flush, flush, straight and high
card compare the highest card's rank, then that card's suit (the other cards never count); four of
a kind, full house and three of a kind the rank of the four / the three; two pair the higher pair's
rank, then the lower pair's, then the best suit in the higher pair; one pair the pair's rank, then
the best suit in it. Two hands from one deck never tie.
"""

from __future__ import annotations

from bot.i18n import t
from bot.views.common import card_text
from games.cards import ACE, JACK, KING, QUEEN, Card
from games.showhand.hands import Category, ShowhandHand

__all__ = ["beats", "hand_name", "tie_break"]

#: A rank's word in the catalogs: ``showdown.rank.<word>`` (one card: "Ace", "A") and
#: ``showdown.ranks.<word>`` (a group of them: "Aces", "A").
_RANK_WORDS = {ACE: "ace", KING: "king", QUEEN: "queen", JACK: "jack", 10: "ten", 9: "nine", 8: "eight"}
#: Categories whose ties go by the highest card (its rank, then its suit).
_BY_TOP_CARD = (Category.STRAIGHT_FLUSH, Category.FLUSH, Category.STRAIGHT, Category.HIGH_CARD)
#: Categories whose ties go by the rank of the four / the three alone.
_BY_SET = (Category.FOUR_OF_A_KIND, Category.FULL_HOUSE, Category.THREE_OF_A_KIND)


def _value(card: Card) -> int:
    """The rank's place in showhand: 8 lowest, A highest (A is 1 in ``Card``)."""
    return 14 if card.rank == ACE else card.rank


def _rank(card: Card, language: str) -> str:
    return t(language, f"showdown.rank.{_RANK_WORDS[card.rank]}")


def _ranks(card: Card, language: str) -> str:
    return t(language, f"showdown.ranks.{_RANK_WORDS[card.rank]}")


def _category(category: Category, language: str) -> str:
    return t(language, f"showhand.category.{category}")


def hand_name(hand: ShowhandHand, language: str) -> str:
    """The hand as players say it: 一对 J, 两对 K/9, 顺子 到 K, 葫芦 J 带 8, 散牌 A 大 (zh-hans)."""
    cards, category = hand.cards, hand.category
    name = _category(category, language)
    top = cards[0]  # the four / the three / the higher pair / the highest card
    if category is Category.STRAIGHT_FLUSH:
        return t(language, "showdown.hand.straight_flush", category=name, rank=_rank(top, language))
    if category is Category.FOUR_OF_A_KIND:
        return t(language, "showdown.hand.four_of_a_kind", ranks=_ranks(top, language))
    if category is Category.FULL_HOUSE:
        return t(
            language,
            "showdown.hand.full_house",
            category=name,
            three=_ranks(top, language),
            two=_ranks(cards[3], language),
        )
    if category is Category.FLUSH:
        return t(language, "showdown.hand.flush", category=name, rank=_rank(top, language))
    if category is Category.STRAIGHT:
        return t(language, "showdown.hand.straight", category=name, rank=_rank(top, language))
    if category is Category.THREE_OF_A_KIND:
        return t(language, "showdown.hand.three_of_a_kind", ranks=_ranks(top, language))
    if category is Category.TWO_PAIR:
        return t(
            language,
            "showdown.hand.two_pair",
            category=name,
            high=_ranks(top, language),
            low=_ranks(cards[2], language),
        )
    if category is Category.ONE_PAIR:
        return t(language, "showdown.hand.one_pair", ranks=_ranks(top, language))
    return t(language, "showdown.hand.high_card", rank=_rank(top, language))


def _check_order(winner: ShowhandHand, runner_up: ShowhandHand) -> None:
    if winner.strength <= runner_up.strength:
        raise ValueError(
            f"the winner's hand must be the stronger: {winner.category} {winner.strength} "
            f"vs {runner_up.category} {runner_up.strength}"
        )


def tie_break(winner: ShowhandHand, runner_up: ShowhandHand, language: str) -> str | None:
    """What decided between two hands of one category (都是一对 J，J♠ 大过 J♥); None when the
    categories differ (the category decided). ``winner`` must be the stronger hand (ValueError)."""
    _check_order(winner, runner_up)
    category = winner.category
    if runner_up.category is not category:
        return None
    same = t(language, f"showdown.same.{category}")  # 都是同花, Both flushes
    win, lose = winner.cards, runner_up.cards
    same_high = _value(win[0]) == _value(lose[0])
    if category is Category.TWO_PAIR and same_high and _value(win[2]) != _value(lose[2]):
        return t(
            language,
            "showdown.tie.low_pair",
            same=same,
            high=_ranks(win[0], language),
            win=_ranks(win[2], language),
            lose=_ranks(lose[2], language),
        )
    # Every other tie is decided by the first card of each hand (see the module's docstring).
    top, other = win[0], lose[0]
    if same_high:  # the same rank (never for the sets): its suit decided
        return t(
            language,
            "showdown.tie.suit",
            hand=hand_name(winner, language),
            win=card_text(top, language),
            lose=card_text(other, language),
        )
    if category in (Category.STRAIGHT_FLUSH, Category.STRAIGHT):
        return t(language, "showdown.tie.straight", same=same, win=_rank(top, language))
    win_rank, lose_rank = _rank(top, language), _rank(other, language)
    if category in _BY_TOP_CARD:
        return t(language, "showdown.tie.high", same=same, win=win_rank, lose=lose_rank)
    win_ranks, lose_ranks = _ranks(top, language), _ranks(other, language)
    if category is Category.FULL_HOUSE:
        return t(language, "showdown.tie.full_house", same=same, win=win_ranks, lose=lose_ranks)
    if category in _BY_SET:
        return t(language, "showdown.tie.set", same=same, win=win_ranks, lose=lose_ranks)
    # One pair, or two pair with different higher pairs.
    return t(language, "showdown.tie.pair", same=same, win=win_ranks, lose=lose_ranks)


def beats(winner: ShowhandHand, runner_up: ShowhandHand, language: str) -> str:
    """One short line naming why ``winner`` won: 同花 大过 顺子 when the categories differ, else
    what broke the tie (:func:`tie_break`). ``winner`` must be the stronger hand (ValueError)."""
    tie = tie_break(winner, runner_up, language)
    if tie is not None:
        return tie
    return t(
        language,
        "showdown.category_beats",
        win=_category(winner.category, language),
        lose=_category(runner_up.category, language),
    )
