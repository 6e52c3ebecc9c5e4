"""A random source that deals the cards a test chose (the bot takes its shuffles from ``rng``)."""

import random

from tests.games.muxi_helpers import rigged


class Stacked(random.Random):
    """Shuffles every deck into one chosen order; everything else is a seeded Random."""

    def __init__(self, order):
        super().__init__(7)
        self.order = list(order)

    def shuffle(self, x):
        assert sorted(map(str, x)) == sorted(map(str, self.order))
        x[:] = self.order


def stack(bot, order, hands, draws=""):
    """Deal ``hands`` (person -> "C1 C2") round robin in ``order``, then ``draws``."""
    bot.paiju.rng = Stacked(rigged(order, hands, draws).deck)
