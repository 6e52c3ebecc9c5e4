"""Whole showhand tables under random legal and illegal actions (hypothesis).

A state machine plays tables with people joining, pressing Start, betting (offered buttons and
arbitrary actions alike), leaving, timing out (live and stale deadlines) and cancelling, and checks
after every step: the coins are conserved (an outside ledger of the ``Paid`` events only), no total
passes its round's cap or M, only offered actions (or their equivalent) are accepted, a refused
action changes nothing, all-in comes only after cards 4 and 5, and timeouts alone end any game.
"""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from bench.engine_fuzz import showhand_action as action_for
from games.cards import DECK_28
from games.errors import RuleError
from games.events import ESCROW, HOUSE, Joined, Paid, TimerStarted
from games.fairness import Shuffle
from games.showhand.betting import AllIn, Bet, Call, Check, Fold, Move, Raise, Spot, round_cap
from games.showhand.events import GameOver, WentAllIn
from games.showhand.table import Phase, ShowhandTable
from games.table import Cancel, Join, Leave, Ready, Timeout

settings.register_profile(
    "showhand-table",
    max_examples=300,
    stateful_step_count=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
FAST = settings.get_profile("showhand-table")

PEOPLE = st.integers(1, 5)
WALLETS = st.sampled_from([500, 1_000, 1_005, 1_500, 4_000, 5_000, 45_000, 500_000])
MOVE_OF = {Join: Move.JOIN, Leave: Move.LEAVE, Ready: Move.READY, Check: Move.CHECK, Bet: Move.BET}
MOVE_OF |= {Call: Move.CALL, Raise: Move.RAISE, AllIn: Move.ALL_IN, Fold: Move.FOLD}
BETTING = (Check, Bet, Call, Raise, AllIn, Fold)


def assert_offered(action, offered, stake, base):
    """An accepted action is a button ``legal_actions`` offered, or a bet/raise between them."""
    move, moves = MOVE_OF[type(action)], {option.move for option in offered}
    if move in (Move.BET, Move.RAISE):
        amounts = [option.amount for option in offered if option.move is move]
        if Move.ALL_IN in moves:
            amounts.append(stake)  # a bet or raise to M is offered as the all-in button
        assert amounts and min(amounts) <= action.amount <= max(amounts), (action, offered)
        assert action.amount % base == 0
    else:
        assert move in moves, (action, offered)


class ShowhandTables(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.table = ShowhandTable.new()
        self.accounts = {HOUSE: 0, ESCROW: 0}
        self.granted = 0

    # -- carrying out an action, and what every accepted one must satisfy -------------------------
    def attempt(self, action):
        table = self.table
        before, version = table.to_dict(), table.version
        person = getattr(action, "person", None)
        offered = table.legal_actions(person) if person is not None else ()
        card_no, stake, base = table.card_no, table.max_stake, table.base
        try:
            events = table.apply(action)
        except RuleError:
            assert table.to_dict() == before, f"{action} was refused but changed the table"
            return None
        assert table.version == version + 1
        if type(action) in MOVE_OF:
            assert_offered(action, offered, stake, base)
        if isinstance(action, AllIn) or any(isinstance(event, WentAllIn) for event in events):
            assert card_no >= 4, "all-in only after cards 4 and 5"
        assert sum(isinstance(event, TimerStarted) for event in events) <= 1
        self.book(events)
        return events

    def book(self, events):
        for event in events:
            if isinstance(event, Joined) and event.person not in self.accounts:
                self.accounts[event.person] = event.balance
                self.granted += event.balance
            if isinstance(event, Paid):
                assert event.amount > 0 and ESCROW in (event.payer, event.payee), event
                self.accounts[event.payer] -= event.amount
                self.accounts[event.payee] += event.amount

    def pick(self, data, people, odds=4):
        """One of ``people`` ``odds`` times in ``odds + 1``, else anyone at all."""
        if people and data.draw(st.integers(0, odds)):
            return data.draw(st.sampled_from(sorted(people)))
        return data.draw(PEOPLE)

    # -- rules ------------------------------------------------------------------------------------
    @initialize(wallets=st.lists(WALLETS, min_size=2, max_size=4))
    def sit_down(self, wallets):
        for person, wallet in enumerate(wallets, start=1):
            self.attempt(Join(person, wallet))

    @rule(person=PEOPLE, wallet=WALLETS)
    def join(self, person, wallet):
        self.attempt(Join(person, self.accounts.get(person, wallet)))  # a returning person brings theirs

    @rule(data=st.data(), seed=st.integers(0, 2**32 - 1))
    def press_start(self, data, seed):
        waiting = {seat.person for seat in self.table.core.seats if not seat.ready}
        person = self.pick(data, waiting)
        self.attempt(Ready(person, Shuffle.new(DECK_28, random.Random(seed))))

    @precondition(lambda self: self.table.phase is Phase.LOBBY and len(self.table.core.seats) >= 2)
    @rule(seed=st.integers(0, 2**32 - 1))
    def everyone_presses_start(self, seed):
        shuffle = Shuffle.new(DECK_28, random.Random(seed))
        for seat in list(self.table.core.seats):
            if self.table.phase is Phase.LOBBY and not seat.ready:
                assert self.attempt(Ready(seat.person, shuffle)) is not None

    @precondition(lambda self: self.table.phase is Phase.BETTING)
    @rule(data=st.data(), presses=st.integers(1, 8))
    def press_buttons(self, data, presses):
        """Whoever's turn it is presses an offered button (folding now and then), a few times."""
        for _ in range(presses):
            if self.table.phase is not Phase.BETTING:
                return
            person = self.table.turn
            buttons = [option for option in self.table.legal_actions(person) if option.move is not Move.LEAVE]
            staying = [option for option in buttons if option.move is not Move.FOLD]
            option = data.draw(st.sampled_from(staying if data.draw(st.integers(0, 9)) else buttons))
            assert self.attempt(action_for(option, person)) is not None, f"{option} was offered but refused"

    @rule(data=st.data(), kind=st.sampled_from(BETTING), units=st.integers(-2, 110), odd=st.integers(0, 3))
    def bet_anything(self, data, kind, units, odd):
        table = self.table
        person = self.pick(data, {table.turn} if table.turn else set())
        if kind in (Bet, Raise):
            base = table.base or 10
            self.attempt(kind(person, units * base + (odd if odd == 3 else 0)))
        else:
            self.attempt(kind(person))

    @rule(data=st.data())
    def leave(self, data):
        seated = {seat.person for seat in self.table.core.seats}
        self.attempt(Leave(self.pick(data, seated if data.draw(st.integers(0, 3)) == 0 else set())))

    @rule(kind=st.sampled_from(["turn", "stale", "stale", "lobby"]), roll=st.integers(0, 4))
    def deadline(self, kind, roll):
        timer, phase = self.table.timer, self.table.phase
        live = {"turn": Phase.BETTING, "lobby": Phase.LOBBY}.get(kind) is phase and (
            kind == "turn" or not roll
        )
        if timer and live:
            assert self.attempt(Timeout(timer)) is not None
        else:
            self.attempt(Timeout(timer - 1))
            self.attempt(Timeout(timer + 1))

    @rule(roll=st.integers(0, 9))
    def cancel(self, roll):
        if roll == 0:
            events = self.attempt(Cancel())
            assert events is None or self.table.pot == 0

    # -- invariants -------------------------------------------------------------------------------
    @invariant()
    def coins_are_conserved(self):
        table, accounts = self.table, self.accounts
        assert sum(accounts.values()) == self.granted
        assert accounts[HOUSE] == 0  # showhand pays the house nothing
        assert accounts[ESCROW] == table.core.escrow_total == table.pot
        assert all(amount >= 0 for amount in accounts.values())
        for seat in table.core.seats:
            assert seat.balance == accounts[seat.person] >= 0

    @invariant()
    def totals_stay_within_the_caps(self):
        table = self.table
        if table.phase is not Phase.BETTING:
            assert table.pot == 0 and table.turn is None
            return
        assert table.cap == round_cap(table.card_no, table.max_stake, table.base) <= table.max_stake
        for player in table.players:
            assert player.total <= table.cap and player.total % table.base == 0
            assert len(player.face_up) == table.card_no - 1 or not player.in_game
        assert table.pot == sum(player.total for player in table.players)
        assert table.player(table.turn).in_game and table.timer != 0

    @invariant()
    def timeouts_alone_end_the_game(self):
        if self.table.phase is not Phase.BETTING:
            return
        copy = ShowhandTable.from_dict(self.table.to_dict())
        assert copy.to_dict() == self.table.to_dict()
        events = []
        for _ in range(len(copy.players)):
            if copy.phase is not Phase.BETTING:
                break
            events += copy.apply(Timeout(copy.timer))
        assert copy.phase is not Phase.BETTING and any(isinstance(e, GameOver) for e in events)


ShowhandTables.TestCase.settings = FAST
TestShowhandTables = ShowhandTables.TestCase


@st.composite
def spots(draw):
    """Any spot the table can put someone in (RULES.md 2.3, 2.4)."""
    base = draw(st.sampled_from([10, 100, 1_000]))
    stake = base * draw(st.integers(10, 100))
    card_no = draw(st.integers(2, 5))
    cap = round_cap(card_no, stake, base)
    opening = base * draw(st.integers(1, cap // base - 1))
    largest = base * draw(st.integers(opening // base, cap // base))
    own = base * draw(st.integers(opening // base, largest // base))
    if largest > opening and own == largest:
        own = opening  # whoever is level with a bet has had their turn: the round would be over
    return Spot(base, stake, card_no, opening, largest, own)


@FAST
@given(spot=spots(), kind=st.sampled_from(BETTING), amount=st.integers(-50, 200_000))
def test_a_spot_offers_only_what_it_accepts(spot, kind, amount):
    options = spot.options()
    assert len(set(options)) == len(options) and options[-1].move is Move.FOLD
    for option in options:
        assert spot.new_total(action_for(option, 1)) == option.amount == spot.own + option.pay
        assert spot.own <= option.amount <= spot.cap <= spot.stake
    action = kind(1, amount) if kind in (Bet, Raise) else kind(1)
    if spot.accepts(action):
        assert_offered(action, options, spot.stake, spot.base)


@FAST
@given(
    seed=st.integers(0, 2**32 - 1),
    wallets=st.lists(WALLETS.filter(lambda w: w >= 1_000), min_size=2, max_size=4),
)
def test_every_game_ends_when_nobody_answers(seed, wallets):
    rng, table = random.Random(seed), ShowhandTable.new()
    for person, wallet in enumerate(wallets, start=1):
        table.apply(Join(person, wallet))
    for person in range(1, len(wallets) + 1):
        table.apply(Ready(person, Shuffle.new(DECK_28, rng)))
    for _ in range(rng.randint(0, 12)):  # some play first
        if table.phase is not Phase.BETTING:
            break
        buttons = [o for o in table.legal_actions(table.turn) if o.move not in (Move.LEAVE, Move.FOLD)]
        table.apply(action_for(rng.choice(buttons), table.turn))
    for _ in range(len(wallets) - 1):
        if table.phase is Phase.BETTING:
            table.apply(Timeout(table.timer))
    assert table.phase is Phase.LOBBY and table.pot == 0
    table.apply(Timeout(table.timer))
    assert table.closed


@FAST
@given(spot=spots())
def test_a_spots_amounts_are_every_bet_or_raise_it_accepts_below_the_all_in(spot):
    """``Spot.amounts`` (the Mini App's slider) spans exactly the bets or raises the spot accepts,
    in steps of B, a total of M left to the all-in button; its ends are buttons the spot offers."""
    amounts = spot.amounts()
    move = Move.BET if spot.nobody_bet else Move.RAISE
    kind = Bet if move is Move.BET else Raise
    accepted = [
        total
        for total in range(spot.own, spot.stake + 1, spot.base)
        if spot.accepts(kind(1, total)) and not (spot.all_in_open and total == spot.stake)
    ]
    if amounts is None:
        assert accepted == []
        return
    assert amounts[0] is move and accepted == list(range(amounts[1], amounts[2] + 1, spot.base))
    offered = [option.amount for option in spot.options() if option.move is move]
    assert amounts[1] == min(offered)
