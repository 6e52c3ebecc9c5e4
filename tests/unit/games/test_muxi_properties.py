"""Whole muxi tables under random legal and illegal actions (hypothesis)."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.engine_fuzz import MUXI_PEOPLE as PEOPLE
from bench.engine_fuzz import Ledger, candidate_actions, wallet
from bench.engine_fuzz import muxi_action as action_for
from games.cards import DECK_54
from games.errors import RuleError
from games.events import ESCROW, Joined, TimerStarted
from games.fairness import Shuffle
from games.muxi import (
    BeBanker,
    Cancel,
    Join,
    Move,
    MuxiTable,
    Phase,
    Ready,
    Timeout,
)


def next_action(table, ledger, rng):
    """Mostly what someone may press, sometimes a deadline passing, sometimes anything at all."""
    shuffle = Shuffle.new(DECK_54, rng)
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(candidate_actions(table, ledger, rng, shuffle))
    if roll < (0.152 if table.phase is Phase.LOBBY else 0.2):  # a lobby that expires ends the table
        return Timeout(table.core.timer)
    person = rng.choice([p for p in PEOPLE if table.legal_actions(p)] or list(PEOPLE))
    legal = table.legal_actions(person)
    if not legal:
        return Join(person, wallet(ledger, person, rng))
    staying = [move for move in legal if move is not Move.LEAVE]
    move = rng.choice(staying) if staying and rng.random() > 0.05 else rng.choice(legal)
    return action_for(move, person, ledger, rng, shuffle)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), steps=st.integers(20, 400), cancel=st.booleans())
def test_random_tables_keep_every_rule(seed, steps, cancel):
    rng = random.Random(seed)
    table, ledger, total = MuxiTable.new(), Ledger(), 0
    for _ in range(steps):
        if table.closed:
            break
        action = next_action(table, ledger, rng)
        before, version = table.to_dict(), table.version
        try:
            events = table.apply(action)
        except RuleError:
            assert table.to_dict() == before, f"{action} was refused but changed the table"
            continue
        assert table.version == version + 1
        for event in events:
            if isinstance(event, Joined) and event.person not in ledger.accounts:
                ledger.joined(event.person, event.balance)
                total += event.balance
        ledger.book(events)
        ledger.check(table, total)
        assert sum(isinstance(e, TimerStarted) for e in events) <= 1
    if cancel and not table.closed:
        ledger.book(table.apply(Cancel()))
        assert table.core.escrow_total == 0 and ledger.accounts[ESCROW] == 0
    ledger.check(table, total)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), people=st.integers(2, 5))
def test_every_round_ends_when_nobody_answers(seed, people):
    rng = random.Random(seed)
    table = MuxiTable.new()
    for person in range(1, people + 1):
        table.apply(Join(person, rng.choice([1_000, 4_000, 40_000])))
    for person in range(1, people + 1):
        table.apply(Ready(person, Shuffle.new(DECK_54, rng)))
    banker = rng.randint(1, people + 1)  # people + 1: nobody accepts
    while table.phase is Phase.BANKER and table.asked_person() != banker:
        table.apply(Timeout(table.core.timer))
    if table.phase is Phase.BANKER:
        table.apply(BeBanker(banker))
    for _ in range(3):  # players, banker, then the lobby's expiry
        if table.closed:
            break
        table.apply(Timeout(table.core.timer))
    assert table.closed
