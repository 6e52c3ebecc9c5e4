"""One DM refusal learnt once (issue 51, point 2): what Telegram says of someone's DM (a 403: they
never opened it, or blocked the bot) is one fact, shared by the replies and the tables, saved with
the person (a restart, another worker read it back), and undone when they open their DM."""

from __future__ import annotations

from faketg.harness import GROUP, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.scenarios import open_and_start


def refused_dms(world, person: int) -> list[str]:
    """The requests to ``person``'s DM that Telegram refused (403)."""
    return [r.method for r in world.requests if r.chat_id == person and r.error == 403]


async def test_a_reply_that_met_a_closed_dm_spares_the_table_its_try(bot, world):
    world.people[2].started_bot = False
    await bot.driver.send(2, GROUP, "/balance")
    assert "小红 有 10,000 金币" in bot.driver.last(GROUP), "the reply came to the group instead"
    assert refused_dms(world, 2) == ["sendMessage"]
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")  # (小红's cards are dealt to her now)
    assert refused_dms(world, 2) == ["sendMessage"], "the deal did not try their DM again"
    assert "没法私聊 小红" in bot.driver.table(GROUP), "the table names them from the start"


async def test_a_table_that_met_a_closed_dm_spares_the_reply_its_try(bot, world):
    world.people[2].started_bot = False
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")  # (小红's cards are dealt to her now)
    assert refused_dms(world, 2) == ["sendMessage"]
    await bot.driver.send(2, GROUP, "/balance")
    assert "小红 有" in bot.driver.last(GROUP)
    assert refused_dms(world, 2) == ["sendMessage"], "the reply went to the group at once"


async def test_a_closed_dm_is_remembered_over_a_restart_until_they_open_it(world, database):
    world.people[2].started_bot = False
    bot = await start_bot(world, database)
    await bot.driver.send(2, GROUP, "/balance")
    assert refused_dms(world, 2) == ["sendMessage"]
    await stop_bot(bot)

    bot = await start_bot(world, database)  # a restart (or another worker): read with the person
    await bot.driver.send(2, GROUP, "/stats")
    assert "小红" in bot.driver.last(GROUP)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")  # (小红's cards are dealt to her now)
    assert refused_dms(world, 2) == ["sendMessage"], "never tried again"

    world.people[2].started_bot = True
    await bot.driver.send(2, 2, "/start")  # they open their DM: their cards go there now
    assert any("5♠" in m.text for m in world.bot_messages(2)), "their cards, in their DM"
    assert "没法私聊 小红" not in bot.driver.table(GROUP), "the table no longer says so"
    assert 2 not in bot.runtime.tables.get(GROUP).view.dm_failed
    await stop_bot(bot)

    bot = await start_bot(world, database)
    await bot.driver.send(2, GROUP, "/balance")
    assert "小红 有 10,000 金币" in bot.driver.last(2), "saved open: the reply goes to their DM"
    assert refused_dms(world, 2) == ["sendMessage"]
    await stop_bot(bot)
