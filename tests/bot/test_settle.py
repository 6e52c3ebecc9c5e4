"""An edit that only informs settles a moment (``Limits.settle``, issue 27 items 2 and 3), so that
what follows it soon goes in the same request: quick actions at a table make one edit of the table,
and someone's next prompt right after they answered one takes its place in one edit.

People press here without waiting for the bot's sends (as people do), through the fake Telegram.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from bot.outbox import Limits
from faketg.driver import Driver
from faketg.harness import GROUP, start_bot, stop_bot
from faketg.world import World
from tests.bot.decks import stack
from tests.bot.scenarios import open_and_start
from tests.waiting import until

SETTLE = 2.0


@pytest.fixture
async def settling(world, database):
    running = await start_bot(world, database, limits=replace(Limits.unlimited(), settle=SETTLE))
    yield running
    await stop_bot(running)


def hurried(bot) -> Driver:
    """People who press on without waiting for every send (a press is handled before it returns)."""

    async def a_moment() -> None:
        await asyncio.sleep(0.05)

    return Driver.in_process(bot.world, bot.application, a_moment)


def prompted(world: World, person: int, label: str):
    """The condition: ``person``'s newest DM asks them with a button ``label``."""

    def condition():
        messages = world.bot_messages(person)
        return bool(messages) and any(label in str(button["text"]) for button in messages[-1].buttons)

    return condition


def sent(world: World, chat_id: int, since: int) -> list[str]:
    return [
        request.method
        for request in world.requests[since:]
        if request.chat_id == chat_id and request.method != "answerCallbackQuery" and request.error is None
    ]


async def test_a_prompt_right_after_the_same_persons_answer_takes_its_place_in_one_edit(settling):
    bot, world = settling, settling.world
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    question = world.bot_messages(1)[-1]
    mark = len(world.requests)
    fast = hurried(bot)
    await fast.press(1, 1, "当庄")  # in their DM
    await until(prompted(world, 2, "不补"), "2 is asked to draw")
    await fast.press(2, 2, "不补")
    await until(prompted(world, 1, "不补"), "the banker is asked to draw")

    assert sent(world, 1, mark) == ["editMessageText"], "no end, then a new message: one edit"
    now = world.bot_messages(1)[-1]
    assert now.message_id == question.message_id and "当庄" not in str(now.buttons)
    await fast.press(1, 1, "不补")
    await bot.runtime.wait_idle()
    assert "🏁" in world.bot_messages(1)[-1].text


async def test_a_prompt_after_the_answers_end_was_sent_is_a_new_message(settling):
    bot, world = settling, settling.world
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    question = world.bot_messages(1)[-1]
    fast = hurried(bot)
    await fast.press(1, 1, "当庄")
    await until(lambda: not world.messages[(1, question.message_id)].buttons, "the answer's end is shown")
    mark = len(world.requests)
    await fast.press(2, 2, "不补")
    await until(prompted(world, 1, "不补"), "the banker is asked to draw")

    assert sent(world, 1, mark) == ["sendMessage"], "they may have gone: a new message notifies them"
    assert world.bot_messages(1)[-1].message_id != question.message_id


async def test_quick_actions_at_a_table_make_one_edit_of_it(settling):
    bot, world = settling, settling.world
    stack(bot, [3, 1, 2], {1: "3H 4H", 2: "5S 6H", 3: "2S 3D"}, "7S 8H 9H")
    await open_and_start(bot, [1, 2, 3])
    fast = hurried(bot)
    await fast.press(1, 1, "当庄")
    for person in (2, 3):
        await until(prompted(world, person, "不补"), f"{person} is asked to draw")
    mark = len(world.requests)
    for person in (2, 3):
        await fast.press(person, person, "不补")
    await until(prompted(world, 1, "不补"), "the banker is asked to draw")
    await until(lambda: "不补" in world.bot_messages(GROUP)[-1].text, "the table shows the stands")

    assert sent(world, GROUP, mark) == ["editMessageText"], "two stands and the banker's turn: one edit"
    table = world.bot_messages(GROUP)[-1].text
    assert table.count("不补") >= 2, table
