"""Playing cards: ranks, suits, the two jokers, the decks, parsing and display.

Notation (RULES.md): rank ``A 2 3 4 5 6 7 8 9 10 J Q K`` (``T`` accepted for 10) followed by suit
``S H C D`` or ``♠ ♥ ♣ ♦``; the jokers are ``BJ`` (big, 大王) and ``SJ`` (small, 小王). Parsing is
case-insensitive. ``str(card)`` gives the canonical token, ``card.display()`` the symbol form.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum


class Suit(Enum):
    """The four suits, with their showhand strength (spade > heart > club > diamond)."""

    SPADES = "S"
    HEARTS = "H"
    CLUBS = "C"
    DIAMONDS = "D"

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOLS[self]

    @property
    def strength(self) -> int:
        """3 for spades down to 0 for diamonds (RULES.md 2.1)."""
        return _SUIT_STRENGTH[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)


_SUIT_SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.CLUBS: "♣", Suit.DIAMONDS: "♦"}
_SUIT_STRENGTH = {Suit.SPADES: 3, Suit.HEARTS: 2, Suit.CLUBS: 1, Suit.DIAMONDS: 0}

_SUIT_INDEX = {suit: index for index, suit in enumerate(Suit)}
_SHOWHAND_RANKS = (1, 8, 9, 10, 11, 12, 13)
ACE, JACK, QUEEN, KING = 1, 11, 12, 13
SMALL_JOKER, BIG_JOKER = 14, 15
_RANK_TOKENS = {ACE: "A", JACK: "J", QUEEN: "Q", KING: "K"}


@dataclass(frozen=True, slots=True)
class Card:
    """A card. ``rank`` is 1 (A) to 13 (K), or 14/15 for the small/big joker, whose ``suit`` is None.

    ``bit`` is the card's own bit among the 54 (``1 << index``): a hand's cards OR into one int, the
    key of precomputed hand tables, with no per-call work but attribute reads.
    """

    rank: int
    suit: Suit | None = None
    bit: int = field(init=False, repr=False, compare=False)
    token: str = field(init=False, repr=False, compare=False)  # ``str(card)``, made once

    def __post_init__(self) -> None:
        if self.is_joker:
            if self.suit is not None:
                raise ValueError(f"a joker has no suit: {self.rank}, {self.suit}")
            index = 52 + self.rank - SMALL_JOKER
            token = "SJ" if self.rank == SMALL_JOKER else "BJ"
        elif not (ACE <= self.rank <= KING) or self.suit is None:
            raise ValueError(f"not a card: rank {self.rank}, suit {self.suit}")
        elif self.rank in _SHOWHAND_RANKS:  # bits 0-27: a showhand mask stays a one-digit int
            index = _SUIT_INDEX[self.suit] * 7 + _SHOWHAND_RANKS.index(self.rank)
        else:
            index = 28 + _SUIT_INDEX[self.suit] * 6 + self.rank - 2
        if self.suit is not None:
            token = self.rank_token + self.suit.value
        object.__setattr__(self, "bit", 1 << index)
        object.__setattr__(self, "token", token)

    @property
    def is_joker(self) -> bool:
        return self.rank in (SMALL_JOKER, BIG_JOKER)

    @property
    def rank_token(self) -> str:
        return _RANK_TOKENS.get(self.rank, str(self.rank))

    def __str__(self) -> str:
        return self.token

    def __repr__(self) -> str:
        return f"Card({self})"

    def display(self) -> str:
        """The form shown to people: ``A♠``, ``10♥``, ``大王``, ``小王``."""
        if self.rank == BIG_JOKER:
            return "大王"
        if self.rank == SMALL_JOKER:
            return "小王"
        assert self.suit is not None
        return self.rank_token + self.suit.symbol


BIG_JOKER_CARD = Card(BIG_JOKER)
SMALL_JOKER_CARD = Card(SMALL_JOKER)
SUITS: tuple[Suit, ...] = tuple(Suit)

#: The 54-card deck of muxi: 52 cards and both jokers.
DECK_54: tuple[Card, ...] = (
    *(Card(rank, suit) for suit in SUITS for rank in range(ACE, KING + 1)),
    SMALL_JOKER_CARD,
    BIG_JOKER_CARD,
)
#: The 28-card deck of showhand: 8 9 10 J Q K A in four suits.
DECK_28: tuple[Card, ...] = tuple(
    Card(rank, suit) for suit in SUITS for rank in (ACE, 8, 9, 10, JACK, QUEEN, KING)
)

_SUIT_BY_TOKEN = {"S": Suit.SPADES, "H": Suit.HEARTS, "C": Suit.CLUBS, "D": Suit.DIAMONDS}
_SUIT_BY_TOKEN.update({s.symbol: s for s in Suit})
_SUIT_BY_TOKEN.update({"♤": Suit.SPADES, "♡": Suit.HEARTS, "♧": Suit.CLUBS, "♢": Suit.DIAMONDS})
_RANK_BY_TOKEN = {"A": ACE, "T": 10, "J": JACK, "Q": QUEEN, "K": KING} | {str(n): n for n in range(2, 11)}
_TOKEN_SPLIT = re.compile(r"[\s,]+")


def parse_card(token: str) -> Card:
    """One card from its token (``AS``, ``10h``, ``T♣``, ``BJ``); ValueError naming a bad token."""
    text = token.strip().upper()
    if text == "BJ":
        return BIG_JOKER_CARD
    if text == "SJ":
        return SMALL_JOKER_CARD
    rank, suit = _RANK_BY_TOKEN.get(text[:-1]), _SUIT_BY_TOKEN.get(text[-1:])
    if rank is None or suit is None:
        raise ValueError(f"not a card: {token!r} (write e.g. AS, 10H, TD, K♣, BJ, SJ)")
    return Card(rank, suit)


def parse_cards(text: str) -> list[Card]:
    """Cards from space- or comma-separated tokens: ``parse_cards("AS 10h kd T♣ BJ SJ")``."""
    return [parse_card(token) for token in _TOKEN_SPLIT.split(text.strip()) if token]


def format_cards(cards: Iterable[Card]) -> str:
    """Canonical tokens separated by spaces (``AS 10H BJ``): the inverse of :func:`parse_cards`."""
    return " ".join(str(card) for card in cards)


def display_cards(cards: Iterable[Card]) -> str:
    """The symbol form separated by spaces (``A♠ 10♥ 大王``)."""
    return " ".join(card.display() for card in cards)


def shuffled(deck: Sequence[Card], rng: random.Random) -> list[Card]:
    """A shuffled copy of ``deck``, using the random source the caller passes in.

    Production passes ``secrets.SystemRandom()``; tests a seeded ``random.Random``.
    """
    cards = list(deck)
    rng.shuffle(cards)
    return cards
