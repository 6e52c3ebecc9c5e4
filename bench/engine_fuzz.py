"""The engines played at random: the action a button sends, any action at all (legal or not), and
the coins as an outsider sees them.

Shared by the engine benchmark (``bench/engines.py``) and the property and fuzz tests
(``tests/unit/games/test_*_properties.py``, ``tests/process/reliability/test_fuzz_engines.py``). It lives in
``bench`` because the benchmarks import nothing from ``tests``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from games.events import ESCROW, HOUSE, Paid
from games.fairness import Shuffle
from games.muxi import BeBanker, Draw, Join, Leave, Move, MuxiTable, PassBanker, Ready, Stand, Timeout
from games.showhand import AllIn, Bet, Call, Check, Fold, Option, Raise, ShowhandTable
from games.showhand import Move as ShowhandMove

MUXI_PEOPLE = range(1, 8)  # who may press at a muxi table played at random: more than its seats
NEWCOMER_WALLETS = (500, 1_000, 1_500, 5_000, 50_000)
_MUXI_PRESSES: dict[Move, Callable[[int], object]] = {
    Move.LEAVE: Leave,
    Move.BE_BANKER: BeBanker,
    Move.PASS: PassBanker,
    Move.DRAW: Draw,
    Move.STAND: Stand,
}
_SHOWHAND_PRESSES: dict[ShowhandMove, Callable[[int], object]] = {
    ShowhandMove.CHECK: Check,
    ShowhandMove.CALL: Call,
    ShowhandMove.ALL_IN: AllIn,
    ShowhandMove.FOLD: Fold,
    ShowhandMove.LEAVE: Leave,
}


class Ledger:
    """The coins as an outsider sees them, from nothing but the Paid events: a second book to check
    a table's own against."""

    def __init__(self) -> None:
        self.accounts: dict[int, int] = {HOUSE: 0, ESCROW: 0}

    def joined(self, person: int, balance: int) -> None:
        self.accounts.setdefault(person, balance)

    def book(self, events: Iterable[object]) -> None:
        for event in events:
            if isinstance(event, Paid):
                assert event.amount > 0 and event.payer != event.payee
                self.accounts[event.payer] -= event.amount
                self.accounts[event.payee] += event.amount

    def check(self, table: MuxiTable | ShowhandTable, total: int) -> None:
        """Coins conserved, nobody below zero, the escrow and every seat as the table says."""
        assert sum(self.accounts.values()) == total
        assert all(amount >= 0 for key, amount in self.accounts.items() if key != HOUSE)
        assert self.accounts[ESCROW] == table.core.escrow_total
        for seat in table.core.seats:
            assert seat.balance == self.accounts[seat.person] >= 0


def wallet(ledger: Ledger, person: int, rng: random.Random) -> int:
    """What the bot would pass on a Join: the person's coins, or a newcomer's."""
    if person in ledger.accounts:
        return ledger.accounts[person]
    return rng.choice(NEWCOMER_WALLETS)


def candidate_actions(table: MuxiTable, ledger: Ledger, rng: random.Random, shuffle: Shuffle) -> list[object]:
    """Every kind of muxi action, legal or not, for anyone (seated or not), plus stale timeouts."""
    person = rng.choice(MUXI_PEOPLE)
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


def muxi_action(
    move: Move, person: int, ledger: Ledger | None, rng: random.Random, shuffle: Shuffle | None
) -> object:
    """The muxi action ``person`` sends by pressing ``move`` (a Join needs the ``ledger`` for their
    coins, a Ready the ``shuffle`` they agree to)."""
    if move is Move.JOIN:
        assert ledger is not None, "a Join brings the person's coins: pass the ledger"
        return Join(person, wallet(ledger, person, rng))
    if move is Move.READY:
        return Ready(person, shuffle)
    return _MUXI_PRESSES[move](person)


def showhand_action(option: Option, person: int) -> object:
    """The showhand action ``person`` sends by pressing the button ``option`` (a bet or raise to
    its amount); not Join or Ready, which need coins or a shuffle."""
    if option.move is ShowhandMove.BET:
        return Bet(person, option.amount)
    if option.move is ShowhandMove.RAISE:
        return Raise(person, option.amount)
    return _SHOWHAND_PRESSES[option.move](person)
