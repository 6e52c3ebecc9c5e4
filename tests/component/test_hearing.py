"""A turn's clock counts only while the bot hears the presses (issue 47, point 9; bot/updates/hearing.py):
a deadline that comes while updates are not coming in is held, and once they come again the turn
gets back every second the bot was deaf while it ran, shown with its new deadline."""

from __future__ import annotations

import time
from dataclasses import replace

from bot.updates.hearing import LONG_POLL, STALLED, Hearing
from tests.component.decks import stack
from tests.component.scenarios import live_table, open_and_start


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_deaf_spells_are_counted_within_a_window():
    clock = Clock()
    hearing = Hearing(clock)
    hearing.deaf()
    clock.now += 10
    assert hearing.is_deaf() and hearing.deaf_within(995, 1005) == 5, "the spell going on counts"
    hearing.heard()
    clock.now += 30
    assert not hearing.is_deaf()
    assert hearing.deaf_within(990, 1040) == 10 and hearing.deaf_within(1005, 1040) == 5


def test_a_poll_unanswered_long_past_its_long_poll_is_deafness_from_its_start():
    clock = Clock()
    hearing = Hearing(clock)
    hearing.asking_since = clock.now
    clock.now += LONG_POLL + 1
    assert not hearing.is_deaf(), "a long poll with no news is quiet, not deaf"
    clock.now += STALLED
    assert hearing.is_deaf()
    hearing.heard()
    hearing.asking_since = None
    assert hearing.deaf_within(0, clock.now) == LONG_POLL + 1 + STALLED


async def test_a_deadline_that_comes_while_deaf_is_held_and_the_turn_gets_the_time_back(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    live = live_table(bot)
    asked = live.engine.asked_person()
    hearing = bot.runtime.hearing
    now = time.time()
    live.turn = replace(live.turn, deadline=now - 1)  # (its time ran out a second ago ...)
    hearing.deaf(since=now - 20)  # (... and for the last 20 s nothing came in)
    await bot.fire_timer()
    assert live_table(bot).engine.asked_person() == asked, "held while deaf"
    hearing.heard()
    await bot.fire_timer()
    turn = live_table(bot).turn
    assert live_table(bot).engine.asked_person() == asked, "not timed out: the time is given back"
    assert turn.deadline is not None and 17 < turn.deadline - time.time() <= 19.5, turn
    await bot.fire_timer()  # its new deadline passes (the harness fires it at once): it acts now
    assert live_table(bot).engine.asked_person() != asked
