"""Whole muxi tables under random legal and illegal actions (hypothesis)."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.cards import DECK_54
from games.errors import RuleError
from games.events import ESCROW, HOUSE, Joined, Paid, TimerStarted
from games.fairness import Shuffle
from games.muxi import (
    BeBanker,
    Cancel,
    Draw,
    Join,
    Leave,
    Move,
    MuxiTable,
    PassBanker,
    Phase,
    Ready,
    Stand,
    Timeout,
)

PEOPLE = range(1, 8)
MOVE_ACTIONS = {
    Move.JOIN: None,
    Move.LEAVE: Leave,
    Move.READY: None,
    Move.BE_BANKER: BeBanker,
    Move.PASS: PassBanker,
    Move.DRAW: Draw,
    Move.STAND: Stand,
}


class Ledger:
    """The coins as an outsider sees them, from nothing but the Paid events."""

    def __init__(self):
        self.accounts = {HOUSE: 0, ESCROW: 0}

    def joined(self, person, balance):
        self.accounts.setdefault(person, balance)

    def book(self, events):
        for event in events:
            if isinstance(event, Paid):
                assert event.amount > 0 and event.payer != event.payee
                self.accounts[event.payer] -= event.amount
                self.accounts[event.payee] += event.amount

    def check(self, table, total):
        assert sum(self.accounts.values()) == total
        assert all(amount >= 0 for key, amount in self.accounts.items() if key != HOUSE)
        assert self.accounts[ESCROW] == table.core.escrow_total
        for seat in table.core.seats:
            assert seat.balance == self.accounts[seat.person] >= 0


def wallet(ledger, person, rng):
    """What the bot would pass on a Join: the person's coins, or a newcomer's."""
    if person in ledger.accounts:
        return ledger.accounts[person]
    return rng.choice([500, 1_000, 1_500, 5_000, 50_000])


def candidate_actions(table, ledger, rng, shuffle):
    """Every kind of action, legal or not, for anyone (seated or not), plus stale timeouts."""
    person = rng.choice(PEOPLE)
    timer = table.core.timer
    return [
        Join(person, wallet(ledger, person, rng)),
        Leave(person),
        Ready(person, shuffle),
        BeBanker(person),
        PassBanker(person),
        Draw(person),
        Stand(person),
        Timeout(timer),
        Timeout(timer - 1),
    ]


def action_for(move, person, ledger, rng, shuffle):
    if move is Move.JOIN:
        return Join(person, wallet(ledger, person, rng))
    if move is Move.READY:
        return Ready(person, shuffle)
    return MOVE_ACTIONS[move](person)


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
