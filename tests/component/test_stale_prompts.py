"""A prompt never left live beside the next one (issue 31), in process: an answered prompt becomes
what they did before the next prompt is sent; and a prompt the bot never knew (Telegram showed it,
but its answer never reached the bot: a timeout, or a bot killed meanwhile) loses its buttons when
the bot sends it again, or once one of its buttons is pressed."""

from __future__ import annotations

import asyncio

import pytest
from telegram.error import TimedOut

import bot.send.aiohttp_request as bot_request
import bot.send.courier as delivery
import bot.send.messages as outgoing
from faketg.harness import GROUP
from faketg.world import ApiError
from tests.component.decks import stack, stack_showhand
from tests.component.scenarios import handle, labels, live_table, newest, open_and_start, remind


@pytest.fixture(autouse=True)
def quick_retry(monkeypatch):
    """A send that failed for a passing reason is tried again after 50 ms, not 3 s (the tests
    drain the sender: what is tried again, and when in order, is the same)."""
    monkeypatch.setattr(delivery, "RETRY", 0.05)


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
    orphan = bot.world.messages[(2, lost[0])]
    assert orphan.buttons == [] and orphan.deleted, "the copy it never knew is gone (issue 47, point 6)"
    assert bot.runtime.presenter.orphans.unsure == {}, "looked for once"
    await bot.driver.press(2, 2, "不补")
    assert "小红  ✋ 不补" in bot.world.messages[(GROUP, live_table(bot).message_id)].text


async def test_a_language_picker_in_the_dm_is_not_taken_for_a_prompt_the_bot_never_knew(bot, monkeypatch):
    """The look goes down from the prompt sent again: what was cut off went just before it."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    await bot.driver.send(2, 2, "/language")  # their DM: a picker with buttons, after the prompt
    picker = newest(bot, 2)
    assert labels(picker), "the picker has buttons"
    real, lost = bot.world.call, []

    def call(method, params):
        reminder = method == "sendMessage" and params.get("chat_id") == 2 and "补牌" in str(params)
        if not reminder or lost:
            return real(method, params)
        lost.append(int(real(method, params)["message_id"]))
        raise TimedOut("shown, and the answer lost")

    monkeypatch.setattr(bot.world, "call", call)
    await remind(bot)  # the reminder: a new DM, its answer lost
    await bot.runtime.presenter.sender.drain()
    assert labels(bot.world.messages[(2, picker.message_id)]), "the picker keeps its buttons"
    assert bot.world.messages[(2, lost[0])].buttons == [], "the reminder the bot never knew lost its buttons"


async def test_a_taken_press_on_a_prompt_whose_id_is_still_to_come_leaves_it_theirs(bot, monkeypatch):
    """Pressed before Telegram's answer to its send came back, the prompt was not their DM yet;
    once it is, nothing takes its buttons away: their next turn's prompt replaces it in one edit."""
    world = bot.world
    stack_showhand(bot, [1, 2], 1, {1: "8S 9H 9D QC KS", 2: "AD AH 8D 9C JH"})
    await open_and_start(bot, [1, 2], "showhand")
    real, answer, reached, held = outgoing.send_new, asyncio.Event(), asyncio.Event(), []

    async def send_new(b, chat_id, text, markup, reply_to=None):
        sent = await real(b, chat_id, text, markup, reply_to)
        if chat_id == 1 and markup and not held:
            held.append(sent)
            reached.set()
            await answer.wait()  # Telegram showed it; its answer is slow to come back
        return sent

    monkeypatch.setattr(outgoing, "send_new", send_new)
    assert live_table(bot).engine.turn == 2
    await handle(bot, world.press(2, GROUP, *bot.driver.button_data(GROUP, "过牌")))
    await asyncio.wait_for(reached.wait(), 5)
    _, data = bot.driver.button_data(1, "过牌")
    await handle(bot, world.press(1, 1, held[0], data))  # 1 presses it at once: taken
    answer.set()
    await bot.runtime.wait_idle()
    await bot.runtime.presenter.sender.drain()
    assert live_table(bot).engine.turn == 1
    assert any("过牌" in label for label in labels(newest(bot, 1))), "1's turn again: their DM offers it"


async def test_a_prompt_telegram_refused_with_a_5xx_is_not_looked_for(bot, monkeypatch):
    """A definite failure (Telegram answered 502 every time) showed nothing: the prompt is sent
    again, and no message is looked for in the DM (issue 47, point 10: only a timeout or a dropped
    connection may have shown it)."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    real, refused = bot.world.call, []

    def call(method, params):
        new_prompt = method == "sendMessage" and params.get("chat_id") == 2 and params.get("reply_markup")
        if new_prompt and not refused:
            refused.append(method)
            bot.world.post(2, 2, "在吗")  # (a message of theirs after it: an id a look would try)
            raise ApiError(502, "Bad Gateway")
        return real(method, params)

    monkeypatch.setattr(bot.world, "call", call)
    monkeypatch.setattr(bot_request, "PAUSES", (0.0, 0.0, 0.0))
    await bot.driver.press(1, GROUP, "当庄")
    await bot.runtime.presenter.sender.drain()
    assert refused and labels(newest(bot, 2)) == ["补牌", "不补"], "sent again"
    looked = [r for r in bot.world.requests if r.chat_id == 2 and r.method == "editMessageReplyMarkup"]
    assert looked == [] and bot.runtime.presenter.orphans.unsure == {}, "nothing was looked for"
