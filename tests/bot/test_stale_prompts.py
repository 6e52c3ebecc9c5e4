"""A prompt never left live beside the next one (issue 31), in process: an answered prompt becomes
what they did before the next prompt is sent; and a prompt the bot never knew (Telegram showed it,
but its answer never reached a bot killed meanwhile) loses its buttons once one is pressed."""

from __future__ import annotations

from faketg.harness import GROUP
from tests.bot.decks import stack
from tests.bot.scenarios import labels, newest, open_and_start


async def test_a_refused_press_on_a_prompt_the_bot_never_knew_takes_its_buttons_away(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    prompt = newest(bot, 2)
    assert labels(prompt) == ["补牌", "不补"]
    # The same prompt once more in 2's DM, as Telegram shows a message whose answer was lost.
    orphan = bot.world.call(
        "sendMessage", {"chat_id": 2, "text": prompt.text, "reply_markup": prompt.reply_markup}
    )
    orphan_id = int(orphan["message_id"])
    await bot.driver.press(2, 2, "不补")  # 2 chose, by the prompt the bot knows
    data = str(bot.world.messages[(2, orphan_id)].buttons[0]["callback_data"])
    await bot.driver.press_data(2, 2, orphan_id, data)  # refused: 2 has chosen
    await bot.runtime.wait_idle()
    assert bot.world.messages[(2, orphan_id)].buttons == [], "its buttons are gone"
    assert labels(bot.world.messages[(2, prompt.message_id)]) == [], "the known one is their record"
