"""Building muxi tables with chosen cards, for the scenario tests."""

from games.cards import DECK_54, parse_cards
from games.events import HOUSE
from games.fairness import Shuffle
from games.muxi import BeBanker, Join, MuxiTable, PassBanker, Phase, Ready
from tests.unit.games.helpers import balances, flows, of_type


def rigged(order, hands, draws=""):
    """A deck dealing ``hands`` (person -> "C1 C2") round robin in ``order``, then ``draws``."""
    cards = {person: parse_cards(text) for person, text in hands.items()}
    top = [cards[p][0] for p in order] + [cards[p][1] for p in order] + parse_cards(draws)
    rest = [card for card in DECK_54 if card not in top]
    assert len(set(top)) == len(top)
    return Shuffle(tuple(top + rest), "salt")


def seat(people, balance=5_000, shuffle=None, **options):
    """A table where ``people`` joined (in order) and pressed Start; returns (table, events)."""
    table = MuxiTable.new(**options)
    balances = balance if isinstance(balance, dict) else dict.fromkeys(people, balance)
    for person in people:
        table.apply(Join(person, balances[person]))
    shuffle = shuffle or Shuffle(DECK_54, "salt")
    events = []
    for person in people:
        events = table.apply(Ready(person, shuffle))
    return table, events


def choose_banker(table, banker):
    events = []
    while table.asked_person() != banker:
        events += table.apply(PassBanker(table.asked_person()))
    assert table.phase is Phase.BANKER
    return events + table.apply(BeBanker(banker))


__all__ = ["HOUSE", "balances", "choose_banker", "flows", "of_type", "rigged", "seat"]
