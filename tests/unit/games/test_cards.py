import random

import pytest

from games.cards import (
    BIG_JOKER_CARD,
    DECK_28,
    DECK_54,
    SMALL_JOKER_CARD,
    Card,
    Suit,
    display_cards,
    format_cards,
    parse_card,
    parse_cards,
    shuffled,
)
from games.fairness import Shuffle, commitment, verify


def test_parse_the_rules_notation():
    cards = parse_cards("AS 10h kd T♣ BJ SJ")
    assert [str(card) for card in cards] == ["AS", "10H", "KD", "10C", "BJ", "SJ"]
    assert cards[0] == Card(1, Suit.SPADES)
    assert cards[4] is BIG_JOKER_CARD and cards[5] is SMALL_JOKER_CARD


@pytest.mark.parametrize("text", ["as", "As", "A♠", "a♤", " AS "])
def test_parsing_is_case_insensitive_and_takes_symbols(text):
    assert parse_card(text) == Card(1, Suit.SPADES)


@pytest.mark.parametrize("bad", ["1S", "11H", "AX", "ZZ", "J", "10", "BJJ", "♠"])
def test_a_bad_token_is_named(bad):
    with pytest.raises(ValueError, match=repr(bad).replace("[", r"\[")):
        parse_cards(f"AS {bad} KD")


def test_display_uses_suit_symbols_and_chinese_joker_names():
    assert display_cards(parse_cards("AS 10H KC 2D BJ SJ")) == "A♠ 10♥ K♣ 2♦ 大王 小王"


def test_format_is_the_inverse_of_parse():
    assert parse_cards(format_cards(DECK_54)) == list(DECK_54)


def test_decks():
    assert len(set(DECK_54)) == 54 and sum(card.is_joker for card in DECK_54) == 2
    assert len(set(DECK_28)) == 28
    assert {card.rank for card in DECK_28} == {1, 8, 9, 10, 11, 12, 13}
    assert all(not card.is_joker for card in DECK_28)


def test_a_joker_has_no_suit_and_a_card_has_one():
    with pytest.raises(ValueError):
        Card(14, Suit.SPADES)
    with pytest.raises(ValueError):
        Card(5)
    with pytest.raises(ValueError):
        Card(0, Suit.HEARTS)


def test_red_suits_are_told_apart():
    assert [suit.is_red for suit in Suit] == [False, True, False, True]
    assert [suit.strength for suit in Suit] == [3, 2, 1, 0]


def test_shuffling_uses_the_callers_random_source():
    one, two = shuffled(DECK_54, random.Random(7)), shuffled(DECK_54, random.Random(7))
    assert one == two and sorted(map(str, one)) == sorted(map(str, DECK_54))
    assert one != list(DECK_54)


def test_commitment_is_recomputable_from_the_revealed_order():
    shuffle = Shuffle.new(DECK_54, random.Random(3))
    order = format_cards(shuffle.deck)
    assert verify(order, shuffle.salt, shuffle.commitment)
    assert not verify(order, shuffle.salt + "0", shuffle.commitment)
    swapped = shuffle.deck[1:2] + shuffle.deck[:1] + shuffle.deck[2:]
    assert not verify(format_cards(swapped), shuffle.salt, shuffle.commitment)
    assert not verify("not cards", shuffle.salt, shuffle.commitment)
    assert commitment(shuffle.deck, shuffle.salt) == shuffle.commitment
    assert len(shuffle.salt) == 32


def test_commitment_matches_a_plain_sha256():
    import hashlib

    deck = parse_cards("AS 2S BJ")
    assert commitment(deck, "salt") == hashlib.sha256(b"AS 2S BJ|salt").hexdigest()
