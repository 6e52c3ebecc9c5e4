"""What is sent is what is wanted when its request starts: a payload wanted while its parcel waits
for the bot's new-message token replaces it, and one called off meanwhile is not sent (a prompt
posted after its person had acted, found by the review of issue 26)."""

from __future__ import annotations

import asyncio
import time

from bot.send.rate_policy import Limits, Parcel, Priority, Share
from faketg.harness import GROUP, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.scenarios import handle, open_and_start
from tests.unit.bot.virtual_sender import Telegram, now, simulate
from tests.waiting import until


def test_a_payload_wanted_while_its_parcel_waits_for_a_token_is_the_one_sent():
    async def scenario() -> list[object]:
        telegram = Telegram(Limits(new_per_second=30.0))  # (a bot capped, as after 429s about it)
        telegram.sender.new.bucket.tokens, telegram.sender.new.bucket.at = 0.0, now()  # budget spent
        telegram.sender.want(Parcel(7, "dm", Priority.ACT, now(), Share.KEPT, True, payload="A"))
        await until(lambda: telegram.sender.lanes[7].in_flight is not None, "picked: it waits for a token")
        telegram.sender.want(Parcel(7, "dm", Priority.INFO, now(), Share.KEPT, False, payload="B"))
        await telegram.sender.drain()
        return [job.payload for _, job in telegram.sent]

    assert simulate(scenario) == ["B"]


def test_a_parcel_taken_while_it_waits_for_a_token_is_not_sent():
    async def scenario() -> list[object]:
        telegram = Telegram(Limits(new_per_second=30.0))  # (a bot capped, as after 429s about it)
        telegram.sender.new.bucket.tokens, telegram.sender.new.bucket.at = 0.0, now()
        telegram.sender.want(Parcel(7, "dm", Priority.ACT, now(), Share.KEPT, True, payload="A"))
        await until(lambda: telegram.sender.lanes[7].in_flight is not None, "picked: it waits for a token")
        assert telegram.sender.waiting(7, "dm") is not None, "still waiting: it may change"
        taken = telegram.sender.withdraw(7, "dm")
        assert taken is not None and taken.payload == "A"
        await telegram.sender.drain()
        return [job.payload for _, job in telegram.sent]

    assert simulate(scenario) == []


async def test_acting_while_the_reminder_waits_for_its_token_posts_no_stale_prompt(world, database):
    bot = await start_bot(world, database)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    runtime = bot.runtime
    live = runtime.tables.get(GROUP)
    runtime.turns.disarm(live.table_id)
    sender = runtime.presenter.sender
    sender.new.bucket.per_second = 2.0  # the bot's new-message budget: the next token in half a second
    sender.new.bucket.tokens, sender.new.bucket.at = 0.0, time.monotonic()
    await runtime.turns.remind(GROUP, live.table_id, live.engine.core.timer)
    await until(lambda: sender.lanes[2].in_flight is not None, "the reminder waits for its token")
    old_prompt = world.bot_messages(2)[-1]
    before = len(world.requests)
    data = next(b["callback_data"] for b in old_prompt.buttons if str(b["text"]).startswith("不补"))
    await handle(bot, world.press(2, 2, old_prompt.message_id, data))
    await asyncio.wait_for(runtime.wait_idle(), 10)
    sent = [r.method for r in world.requests[before:] if r.chat_id == 2]
    assert "sendMessage" not in sent, f"no reminder posted after they acted: {sent}"
    assert world.messages[(2, old_prompt.message_id)].buttons == [], "their prompt is now what they did"
    await stop_bot(bot)
