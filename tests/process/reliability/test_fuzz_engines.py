"""Both engines fuzzed: whole random games (legal moves mostly, anything at all sometimes), each
checked step by step — coins conserved, nobody below zero, refused actions change nothing — and
each must end. The long profile plays 10,000 games of each."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.engine_fuzz import Ledger, candidate_actions, muxi_action, showhand_action
from games.cards import DECK_28, DECK_54
from games.errors import RuleError
from games.events import Joined
from games.fairness import Shuffle
from games.muxi import MuxiTable, RoundOver
from games.showhand import AllIn, Bet, Check, GameOver, Move, Raise, ShowhandTable
from games.table import Join, Leave, Ready, Timeout
from tests.process.reliability.profile import PROFILE

FUZZ = settings(
    max_examples=PROFILE["fuzz_games"],
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def sit_down(table, ledger, rng, people, deck):
    for person in people:
        balance = rng.choice([1_000, 2_500, 4_000, 40_000, 400_000])
        ledger.joined(person, balance)
        table.apply(Join(person, balance))
    shuffle, total = Shuffle.new(deck, rng), sum(ledger.accounts.values())
    for person in people:
        _, total = step(table, ledger, total, Ready(person, shuffle))  # the last one starts: antes
    return total


def step(table, ledger, total, action):
    """Apply; a refusal must change nothing; an acceptance must keep the books. Returns the events
    and the coins in the game (a newcomer brings theirs)."""
    before = table.to_dict()
    try:
        events = table.apply(action)
    except RuleError:
        assert table.to_dict() == before, action
        return [], total
    for event in events:
        if isinstance(event, Joined) and event.person not in ledger.accounts:
            ledger.joined(event.person, event.balance)
            total += event.balance
    ledger.book(events)
    ledger.check(table, total)
    return events, total


def showhand_press(table, person, rng):
    """A button ``person`` may press now (not Join or Ready), at random."""
    options = [o for o in table.legal_actions(person) if o.move not in (Move.JOIN, Move.READY)]
    return showhand_action(rng.choice(options), person)


@FUZZ
@given(seed=st.integers(0, 2**64), seats=st.integers(2, 5))
def test_muxi_rounds_fuzzed(seed, seats):
    rng, table, ledger = random.Random(seed), MuxiTable.new(), Ledger()
    total = sit_down(table, ledger, rng, list(range(1, seats + 1)), DECK_54)
    for _ in range(300):
        if rng.random() < 0.2:
            action = rng.choice(candidate_actions(table, ledger, rng, Shuffle.new(DECK_54, rng)))
        elif rng.random() < 0.1:
            action = Timeout(table.core.timer)
        else:
            person = rng.randint(1, seats)
            moves = [m for m in table.legal_actions(person) if m.value not in ("join", "ready")]
            if not moves or (moves == [moves[-1]] and rng.random() < 0.9):
                continue  # only Leave: mostly people stay
            action = muxi_action(rng.choice(moves), person, ledger, rng, None)
        events, total = step(table, ledger, total, action)
        if table.closed or any(isinstance(e, RoundOver) for e in events):
            return
    raise AssertionError("the round never ended")


@FUZZ
@given(seed=st.integers(0, 2**64), seats=st.integers(2, 4))
def test_showhand_games_fuzzed(seed, seats):
    rng, table, ledger = random.Random(seed), ShowhandTable.new(), Ledger()
    total = sit_down(table, ledger, rng, list(range(1, seats + 1)), DECK_28)
    for _ in range(300):
        person = table.turn
        if person is None or rng.random() < 0.15:
            action = rng.choice(
                [
                    Timeout(table.timer),
                    Timeout(table.timer - 1),
                    Check(rng.randint(1, 6)),
                    Raise(rng.randint(1, seats), rng.randint(-5, 10**6)),
                    AllIn(rng.randint(1, 6)),
                    Leave(rng.randint(1, 6)),
                    Bet(rng.randint(1, 6), rng.randint(0, 10**6)),
                ]
            )
        else:
            action = showhand_press(table, person, rng)
        events, total = step(table, ledger, total, action)
        if table.closed or any(isinstance(e, GameOver) for e in events):
            return
    raise AssertionError("the game never ended")
