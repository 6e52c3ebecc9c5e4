"""Concurrency: 50 simultaneous presses of one button, by the person whose turn it is and by others:
exactly one takes effect, and every press is answered."""

import asyncio

from faketg.driver import process
from faketg.harness import GROUP
from tests.component.decks import SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.scenarios import open_and_start


async def press_all_at_once(bot, presses):
    """Every (person, data) press delivered concurrently, as updates arriving together."""
    d, application = bot.driver, bot.application
    message_id = bot.runtime.tables.get(GROUP).message_id
    updates = [bot.world.press(person, GROUP, message_id, data) for person, data in presses]
    await asyncio.gather(*(process(application, u) for u in updates))
    return d


async def test_fifty_presses_of_draw_take_effect_once(bot):
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"}, "7S 8H 9H")
    await open_and_start(bot, [1, 2, 3])
    await bot.driver.press(1, GROUP, "当庄")
    live = bot.runtime.tables.get(GROUP)
    data = f"m:{live.table_id}:{live.round_no}:draw"
    version = live.engine.version
    presses = [(2, data)] * 25 + [(person, data) for person in (1, 3, 4, 5, 6) for _ in range(5)]
    await press_all_at_once(bot, presses)
    hand = live.engine.hand_of(2)
    assert len(hand.cards) == 3, "one draw, not several"
    assert len(live.engine.hand_of(3).cards) == 3, "3 may draw too (once): it is their choice as well"
    assert live.engine.version == version + 2
    assert bot.world.open_queries == {}, "all 50 presses answered"
    answers = [r for r in bot.world.requests if r.method == "answerCallbackQuery"]
    assert len(answers) >= 50


async def test_fifty_presses_of_a_bet_take_effect_once(bot):
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    live = bot.runtime.tables.get(GROUP)
    data = f"s:{live.table_id}:{live.round_no}:bet:200"  # the lead (2) bets 100 more: total 200
    presses = [(2, data)] * 30 + [(1, data)] * 20
    await press_all_at_once(bot, presses)
    assert {p.person: p.total for p in live.engine.players} == {1: 100, 2: 200}
    assert live.engine.pot == 300
    assert bot.world.open_queries == {}
    report = await bot.runtime.store.check()
    assert report.ok
