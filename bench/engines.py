"""Benchmarks 1 and 2: hand evaluation (showhand against treys, muxi alone) and whole engine games.

1. The same random five-card hands of the 28-card deck, each evaluator given its own ready-made
   form: ours ``games.cards.Card`` objects from ``DECK_28`` to ``games.showhand.evaluate``, treys
   ``treys.Card.new`` ints to ``Evaluator.evaluate(hand, board)`` (its public call: 2 + 3 cards) and
   to ``Evaluator._five`` (its inner five-card function, no list concatenation). Runs alternate, so
   each ratio compares runs made side by side.
2. Complete muxi rounds (5 seats) and showhand games (4 seats) through ``apply``, random legal
   actions; once more with ``to_dict()`` after every action, as the bot saves it.

    python -m bench.engines [--quick]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from treys import Card as TreysCard
from treys import Evaluator

from bench.engine_fuzz import muxi_action, showhand_action
from bench.report import Result, markdown_table, median, rate, timed
from games.cards import DECK_28, DECK_54, JACK, KING, QUEEN, Card
from games.fairness import Shuffle
from games.muxi import Move as MuxiMove
from games.muxi import MuxiTable, Phase, RoundOver
from games.muxi import evaluate as muxi_evaluate
from games.showhand import Category, GameOver, ShowhandTable
from games.showhand import Move as ShowhandMove
from games.showhand import Phase as ShowhandPhase
from games.showhand import evaluate as showhand_evaluate
from games.table import Join, Ready

TARGET_RATIO = 1.5
_TREYS_RANKS = {1: "A", 10: "T", JACK: "J", QUEEN: "Q", KING: "K"}
# treys' rank classes (1 = straight flush ... 9 = high card), for checking that both agree.
_TREYS_CLASS = {category: index for index, category in enumerate(Category, start=1)}


def treys_card(card: Card) -> int:
    assert card.suit is not None
    return TreysCard.new(_TREYS_RANKS.get(card.rank, str(card.rank)) + card.suit.value.lower())


def showhand_hands(count: int, rng: random.Random) -> list[tuple[Card, ...]]:
    return [tuple(rng.sample(DECK_28, 5)) for _ in range(count)]


def muxi_hands(count: int, size: int, rng: random.Random) -> list[tuple[Card, ...]]:
    """Random muxi hands of ``size`` cards; two cards with one joker are no hand (they must draw)."""
    hands: list[tuple[Card, ...]] = []
    while len(hands) < count:
        hand = tuple(rng.sample(DECK_54, size))
        if size == 2 and sum(card.is_joker for card in hand) == 1:
            continue
        hands.append(hand)
    return hands


def _loop(evaluate: Callable[..., object], hands: Sequence[object]) -> Callable[[], None]:
    def run() -> None:
        for hand in hands:
            evaluate(hand)

    return run


def _loop2(evaluate: Callable[[list[int], list[int]], int], hands: Sequence[tuple[list[int], list[int]]]):
    def run() -> None:
        for hand, board in hands:
            evaluate(hand, board)

    return run


def check_agreement(ours: Sequence[tuple[Card, ...]], evaluator: Evaluator) -> None:
    """Both evaluators put every sampled hand in the same category (a check that they do one job)."""
    for hand in ours[:2000]:
        theirs = evaluator.get_rank_class(evaluator._five([treys_card(card) for card in hand]))
        assert theirs == _TREYS_CLASS[showhand_evaluate(hand).category], hand


def hand_evaluation(quick: bool) -> list[Result]:
    rng = random.Random(1)
    count, repeats = (30_000, 3) if quick else (200_000, 9)
    ours = showhand_hands(count, rng)
    evaluator = Evaluator()
    check_agreement(ours, evaluator)
    theirs = [[treys_card(card) for card in hand] for hand in ours]
    split = [(hand[:2], hand[2:]) for hand in theirs]
    runs = {
        "ours": _loop(showhand_evaluate, ours),
        "treys.evaluate": _loop2(evaluator.evaluate, split),
        "treys._five": _loop(evaluator._five, theirs),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):  # side by side: one run of each per repeat
        for name, run in runs.items():
            seconds[name].append(timed(run))
    public = median([t / o for o, t in zip(seconds["ours"], seconds["treys.evaluate"], strict=True)])
    inner = median([t / o for o, t in zip(seconds["ours"], seconds["treys._five"], strict=True)])
    results = [
        Result(
            "1 hand evaluation",
            f"showhand `evaluate`, {count:,} random 28-card-deck hands (Card objects)",
            rate(count, median(seconds["ours"]), "hands"),
        ),
        Result(
            "1 hand evaluation",
            "treys `Evaluator.evaluate(hand, board)`, same hands as ints",
            rate(count, median(seconds["treys.evaluate"]), "hands"),
        ),
        Result(
            "1 hand evaluation",
            "treys `Evaluator._five(cards)`, same hands as ints",
            rate(count, median(seconds["treys._five"]), "hands"),
        ),
        Result(
            "1 hand evaluation",
            "ratio ours / treys `evaluate` (side by side)",
            f"{public:.2f}×",
            f"≥ {TARGET_RATIO}×",
            public >= TARGET_RATIO,
        ),
        Result(
            "1 hand evaluation",
            "ratio ours / treys `_five` (side by side)",
            f"{inner:.2f}×",
            f"≥ {TARGET_RATIO}×",
            inner >= TARGET_RATIO,
        ),
    ]
    for size in (2, 3):
        hands = muxi_hands(count, size, rng)
        run = _loop(muxi_evaluate, hands)
        run()  # muxi caches each sorted hand: the figure is the steady state a bot reaches
        results.append(
            Result(
                "1 hand evaluation",
                f"muxi `evaluate`, {count:,} random {size}-card hands",
                rate(count, median([timed(run) for _ in range(repeats)]), "hands"),
            )
        )
    return results


# -- benchmark 2: whole games ------------------------------------------------------------------------
MUXI_PEOPLE = (1, 2, 3, 4, 5)
SHOWHAND_PEOPLE = (1, 2, 3, 4)
WALLET = 1_000_000_000  # nobody runs out of coins during a benchmark


def play_muxi(rounds: int, rng: random.Random, save: bool) -> int:
    """Play ``rounds`` muxi rounds at one 5-seat table; returns the actions applied."""
    table, actions = MuxiTable.new(), 0
    for person in MUXI_PEOPLE:
        table.apply(Join(person, WALLET))
    for _ in range(rounds):
        shuffle, over = Shuffle.new(DECK_54, rng), False
        while not over:
            movers = [(p, m) for p in MUXI_PEOPLE for m in table.legal_actions(p) if m is not MuxiMove.LEAVE]
            if table.phase is Phase.BANKER:  # the asked person accepts: nobody passing closes the table
                movers = [(p, m) for p, m in movers if m is not MuxiMove.PASS]
            person, move = rng.choice(movers)
            events = table.apply(muxi_action(move, person, None, rng, shuffle))
            actions += 1
            if save:
                table.to_dict()
            over = any(isinstance(event, RoundOver) for event in events)
    return actions


def play_showhand(games: int, rng: random.Random, save: bool) -> int:
    """Play ``games`` showhand games at one 4-seat table; returns the actions applied."""
    table, actions = ShowhandTable.new(), 0
    for person in SHOWHAND_PEOPLE:
        table.apply(Join(person, WALLET))
    for _ in range(games):
        shuffle = Shuffle.new(DECK_28, rng)
        for person in SHOWHAND_PEOPLE:
            if table.core.seat_of(person) is None:  # lost everything in an all-in: back with new coins
                table.apply(Join(person, WALLET))
            table.apply(Ready(person, shuffle))
            actions += 1
        over = False
        while not over:
            assert table.phase is ShowhandPhase.BETTING and table.turn is not None
            options = [o for o in table.legal_actions(table.turn) if o.move is not ShowhandMove.LEAVE]
            staying = [o for o in options if o.move is not ShowhandMove.FOLD]
            option = rng.choice(staying if rng.random() > 0.05 else options)
            events = table.apply(showhand_action(option, table.turn))
            actions += 1
            if save:
                table.to_dict()
            over = any(isinstance(event, GameOver) for event in events)
    return actions


def engine_games(quick: bool) -> list[Result]:
    count, repeats = (100, 3) if quick else (1_000, 7)
    results = []
    for name, play, unit in (
        ("muxi rounds, 5 seats", play_muxi, "rounds"),
        ("showhand games, 4 seats", play_showhand, "games"),
    ):
        for save in (False, True):
            actions: list[int] = []
            seconds = []
            for seed in range(repeats):
                started = time.perf_counter()
                actions.append(play(count, random.Random(seed), save))
                seconds.append(time.perf_counter() - started)
            per_action = median(actions) / count
            how = "apply + `to_dict()` after every action" if save else "`apply` only"
            results.append(
                Result(
                    "2 engines",
                    f"{name}, random legal actions, {how} ({per_action:.1f} actions each)",
                    rate(count, median(seconds), unit),
                )
            )
    return results


def run(quick: bool) -> list[Result]:
    return hand_evaluation(quick) + engine_games(quick)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.engines", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    print(markdown_table(run(parser.parse_args().quick)))


if __name__ == "__main__":
    main()
