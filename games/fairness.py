"""The fairness commitment: a round's deck order is committed to before the deal, revealed after.

commitment = SHA-256 over the UTF-8 text ``"<tokens joined by spaces>|<salt>"``, in hex. Anyone can
recompute it from the revealed order and salt, e.g. in a shell:
``printf '%s' 'AS 10H ... BJ|<salt>' | sha256sum``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from games.cards import Card, format_cards, parse_cards, shuffled


def commitment(deck: Sequence[Card], salt: str) -> str:
    """The SHA-256 (hex) of the deck order and the salt."""
    return hashlib.sha256(f"{format_cards(deck)}|{salt}".encode()).hexdigest()


def verify(deck_order: str, salt: str, expected: str) -> bool:
    """True when the revealed order (card tokens) and salt hash to the commitment shown earlier."""
    try:
        deck = parse_cards(deck_order)
    except ValueError:
        return False
    return commitment(deck, salt) == expected.strip().lower()


@dataclass(frozen=True, slots=True)
class Shuffle:
    """A round's deck order and the salt of its commitment; made by the caller, never by the engine."""

    deck: tuple[Card, ...]
    salt: str

    @property
    def commitment(self) -> str:
        return commitment(self.deck, self.salt)

    @classmethod
    def new(cls, deck: Sequence[Card], rng: random.Random) -> Shuffle:
        """Shuffle ``deck`` with ``rng`` and draw a 128-bit salt from it (production: SystemRandom)."""
        return cls(tuple(shuffled(deck, rng)), f"{rng.getrandbits(128):032x}")
