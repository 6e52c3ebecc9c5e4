"""A prompt never left live beside the next one (issue 31), in process: an answered prompt becomes
what they did before the next prompt is sent; and a prompt the bot never knew (Telegram showed it,
but its answer never reached the bot: a timeout, or a bot killed meanwhile) loses its buttons when
the bot sends it again, or once one of its buttons is pressed."""

from __future__ import annotations

import pytest
from telegram.error import TimedOut

from faketg.harness import GROUP
from tests.bot.decks import stack
from tests.bot.scenarios import labels, live_table, newest, open_and_start


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
    stand = str(prompt.buttons[1]["callback_data"])
    await bot.driver.press_data(2, 2, prompt.message_id, stand)  # 2 chose, by the prompt the bot knows
    data = str(bot.world.messages[(2, orphan_id)].buttons[0]["callback_data"])
    await bot.driver.press_data(2, 2, orphan_id, data)  # refused: 2 has chosen
    await bot.runtime.wait_idle()
    assert bot.world.messages[(2, orphan_id)].buttons == [], "its buttons are gone"
    assert labels(bot.world.messages[(2, prompt.message_id)]) == [], "the known one is their record"


async def test_a_taken_press_on_a_prompt_the_bot_never_knew_takes_its_buttons_away(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    prompt = newest(bot, 2)
    orphan = bot.world.call(
        "sendMessage", {"chat_id": 2, "text": prompt.text, "reply_markup": prompt.reply_markup}
    )
    orphan_id = int(orphan["message_id"])
    data = str(bot.world.messages[(2, orphan_id)].buttons[1]["callback_data"])
    await bot.driver.press_data(2, 2, orphan_id, data)  # 不补, by the copy the bot never knew: taken
    await bot.runtime.wait_idle()
    assert "小红  ✋ 不补" in bot.world.messages[(GROUP, live_table(bot).message_id)].text
    assert bot.world.messages[(2, orphan_id)].buttons == [], "its buttons are gone"
    assert labels(bot.world.messages[(2, prompt.message_id)]) == [], "the known one is their record"


def lose_the_answer_to_a_prompt(bot, monkeypatch, person, before=None):
    """The first new prompt to ``person``'s DM is shown, but the bot's request times out (``before``
    it, ``person`` writes ``before`` in their DM): the ids of the prompts so shown."""
    real, lost = bot.world.call, []

    def call(method, params):
        new_prompt = (
            method == "sendMessage" and params.get("chat_id") == person and params.get("reply_markup")
        )
        if not new_prompt or lost:
            return real(method, params)
        if before is not None:
            bot.world.post(person, person, before)
        lost.append(int(real(method, params)["message_id"]))
        raise TimedOut("shown, and the answer lost")

    monkeypatch.setattr(bot.world, "call", call)
    return lost


@pytest.mark.parametrize("before", [None, "我先去倒杯茶"], ids=["alone", "after-their-own-message"])
async def test_a_prompt_shown_whose_answer_timed_out_is_not_left_live_beside_its_copy(
    bot, monkeypatch, before
):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    lost = lose_the_answer_to_a_prompt(bot, monkeypatch, 2, before)
    await bot.driver.press(1, GROUP, "当庄")
    await bot.runtime.presenter.sender.drain()  # (the prompt is sent again after a pause)
    prompt = newest(bot, 2)
    assert labels(prompt) == ["补牌", "不补"] and prompt.message_id != lost[0], "sent again"
    assert bot.world.messages[(2, lost[0])].buttons == [], "the copy it never knew lost its buttons"
    assert live_table(bot).unsure == {}, "looked for once"
    await bot.driver.press(2, 2, "不补")
    assert "小红  ✋ 不补" in bot.world.messages[(GROUP, live_table(bot).message_id)].text
