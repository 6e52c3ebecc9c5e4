"""Building showhand tables with chosen cards, for the scenario and property tests."""

import pytest

from games.cards import DECK_28, parse_cards
from games.fairness import Shuffle
from games.showhand.hands import visible_strength
from games.showhand.table import ShowhandTable
from games.table import Join, Ready
from tests.unit.games.helpers import balances, flows, of_type


def rigged(seats, lead, hands):
    """A deck giving ``hands`` (person -> "hole up2 up3 up4 up5") as the table deals (RULES.md 2.2).

    Cards 1 and 2 go round ``seats`` from ``lead``; card k (3 to 5) goes from the best face-up
    cards after card k-1, to the people still holding k-1 cards. Give someone who folds fewer cards.
    """
    cards = {person: parse_cards(text) for person, text in hands.items()}

    def order_from(first):
        index = seats.index(first)
        return seats[index:] + seats[:index]

    top = [cards[p][0] for p in order_from(lead)] + [cards[p][1] for p in order_from(lead)]
    for card_no in range(3, 6):
        holders = [p for p in seats if len(cards[p]) >= card_no - 1]
        if not holders:
            break
        lead = max(holders, key=lambda p: visible_strength(cards[p][1 : card_no - 1]))
        top += [cards[p][card_no - 1] for p in order_from(lead) if len(cards[p]) >= card_no]
    assert len(set(top)) == len(top)
    return Shuffle(tuple(top + [card for card in DECK_28 if card not in top]), "x")


def seat(people, balance=2_000, shuffle=None, **options):
    """A table where ``people`` joined (in order) and pressed Start; returns (table, events)."""
    table = ShowhandTable.new(**options)
    balances = balance if isinstance(balance, dict) else dict.fromkeys(people, balance)
    for person in people:
        table.apply(Join(person, balances[person]))
    shuffle = shuffle or Shuffle(DECK_28, "x")
    events = []
    for person in people:
        events = table.apply(Ready(person, shuffle))
    return table, events


def play(table, *actions):
    events = []
    for action in actions:
        events += table.apply(action)
    return events


def totals(table):
    return {player.person: player.total for player in table.players}


def refused(table, action, error):
    """``action`` is refused with ``error`` and changes nothing."""
    before = table.to_dict()
    with pytest.raises(error) as caught:
        table.apply(action)
    assert table.to_dict() == before
    return caught.value


__all__ = ["balances", "flows", "of_type", "play", "refused", "rigged", "seat", "totals"]
