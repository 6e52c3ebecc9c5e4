"""A random source that deals the cards a test chose (the bot takes its shuffles from ``rng``)."""

import random

from tests.unit.games.muxi_helpers import rigged
from tests.unit.games.showhand_helpers import rigged as showhand_rigged

# Showhand, seats 1 and 2 (``stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)``): 2 leads after
# card 2 (an ace) and wins with a pair of aces.
SHOWHAND_ACES_WIN = {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH"}
# Muxi, dealt to 2, 3 and 1 (``stack(bot, [2, 3, 1], ESCAPE_DEAL)``): the hands of the escape tests,
# with 1 as banker and 2 and 3 in their draw.
ESCAPE_DEAL = {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"}


class Stacked(random.Random):
    """Shuffles every deck into one chosen order; everything else is a seeded Random."""

    def __init__(self, order):
        super().__init__(7)
        self.order = list(order)

    def shuffle(self, x):
        assert sorted(map(str, x)) == sorted(map(str, self.order))
        x[:] = self.order


def stack(bot, order, hands, draws=""):
    """Muxi: deal ``hands`` (person -> "C1 C2") round robin in ``order``, then ``draws``."""
    bot.runtime.rng = Stacked(rigged(order, hands, draws).deck)


def stack_showhand(bot, seats, lead, hands):
    """Showhand: deal ``hands`` (person -> "hole up2 up3 up4 up5") as the table deals them."""
    bot.runtime.rng = Stacked(showhand_rigged(seats, lead, hands).deck)
