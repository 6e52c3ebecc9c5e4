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

from bot.display.i18n import t
from bot.display.views.common import card_text
from games.cards import ACE, JACK, KING, QUEEN, Card
from games.showhand.hands import Category, DecidedBy, ShowhandHand, decided_by

__all__ = ["beats", "hand_name", "tie_break"]

#: A rank's word in the catalogs: ``showdown.rank.<word>`` (one card: "Ace", "A") and
#: ``showdown.ranks.<word>`` (a group of them: "Aces", "A").
_RANK_WORDS = {ACE: "ace", KING: "king", QUEEN: "queen", JACK: "jack", 10: "ten", 9: "nine", 8: "eight"}
#: Categories whose lead card is their highest card ("Ace high beats King high").
_BY_HIGHEST = (Category.FLUSH, Category.HIGH_CARD)
#: Categories whose lead card is one of a set ("Queens beat Jacks").
_SETS = (Category.FOUR_OF_A_KIND, Category.THREE_OF_A_KIND)


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
    top = hand.lead  # the four / the three / the higher pair / the highest card
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


def tie_break(winner: ShowhandHand, runner_up: ShowhandHand, language: str) -> str | None:
    """What decided between two hands of one category (都是一对 J，J♠ 大过 J♥); None when the
    categories differ (the category decided). The engine says what decided (``decided_by``);
    ``winner`` must be the stronger hand (ValueError)."""
    why = decided_by(winner, runner_up)
    if why is DecidedBy.CATEGORY:
        return None
    category = winner.category
    same = t(language, f"showdown.same.{category}")  # 都是同花, Both flushes
    win, lose = winner.lead, runner_up.lead
    if why is DecidedBy.LOW_PAIR:
        return t(
            language,
            "showdown.tie.low_pair",
            same=same,
            high=_ranks(win, language),
            win=_ranks(winner.cards[2], language),
            lose=_ranks(runner_up.cards[2], language),
        )
    if why is DecidedBy.LEAD_SUIT:
        return t(
            language,
            "showdown.tie.suit",
            hand=hand_name(winner, language),
            win=card_text(win, language),
            lose=card_text(lose, language),
        )
    # DecidedBy.LEAD_RANK: the same category, told in its own words.
    if category in (Category.STRAIGHT_FLUSH, Category.STRAIGHT):
        return t(language, "showdown.tie.straight", same=same, win=_rank(win, language))
    if category in _BY_HIGHEST:
        return t(
            language, "showdown.tie.high", same=same, win=_rank(win, language), lose=_rank(lose, language)
        )
    win_ranks, lose_ranks = _ranks(win, language), _ranks(lose, language)
    if category is Category.FULL_HOUSE:
        return t(language, "showdown.tie.full_house", same=same, win=win_ranks, lose=lose_ranks)
    if category in _SETS:
        return t(language, "showdown.tie.set", same=same, win=win_ranks, lose=lose_ranks)
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
