"""A press after its turn ran out is told so (issue 47, point 9): the deadline acted for them in
that round, so the answer is "your turn is over", not "not your turn" or "you have decided"."""

from __future__ import annotations

from faketg.harness import GROUP
from tests.component.decks import SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.scenarios import live_table, open_and_start

TURN_OVER = "⌛ 你这一步已超时，由系统代为处理"


def button_data(message, label: str) -> str:
    """What pressing ``label`` on ``message`` sends (kept: the message loses its buttons later)."""
    return next(str(b["callback_data"]) for b in message.buttons if str(b["text"]).startswith(label))


async def test_a_muxi_draw_pressed_after_its_deadline_is_told_the_turn_is_over(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    prompt = d.message_with(2, label="补牌")
    data = button_data(prompt, "补牌")
    await bot.fire_timer()  # 2 and 3 never answered: they stand
    await d.press_data(2, 2, prompt.message_id, data)
    assert bot.world.popups[2][-1].text == TURN_OVER


async def test_a_showhand_press_after_the_deadline_folded_them_is_told_the_turn_is_over(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    idle = live_table(bot).engine.turn
    prompt = d.message_with(idle, label="过牌")
    data = button_data(prompt, "过牌")
    await bot.fire_timer()
    await d.press_data(idle, idle, prompt.message_id, data)
    assert bot.world.popups[idle][-1].text == TURN_OVER


async def test_a_press_out_of_turn_is_still_not_your_turn(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    other = next(p for p in (1, 2) if p != live_table(bot).engine.turn)
    await d.press(other, GROUP, "过牌")
    assert bot.world.popups[other][-1].text == "还没轮到你"
