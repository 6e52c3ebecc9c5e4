"""DESIGN.md's Telegram specifics: coalesced edits, DM buttons, languages, no token in the logs."""

import dataclasses
import io
import logging

from bot.ops.logs import configure_logging
from bot.send.rate_policy import Limits
from faketg.driver import process
from faketg.harness import GROUP, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.scenarios import open_and_start


async def test_edits_of_the_table_are_coalesced(world, database):
    limits = dataclasses.replace(Limits.of_settings(120), group_burst=1)  # then one edit every 0.5 s
    bot = await start_bot(world, database, limits=limits)
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    join = d.button_data(GROUP, "加入")
    for person in (2, 3, 4, 5):  # four quick joins, each handled before anything is sent
        update = world.press(person, GROUP, *join)
        await process(bot.application, update)
    assert world.open_queries == {}, "every press answered at once"
    await bot.runtime.presenter.flush()
    edits = [r for r in world.requests if r.method == "editMessageText" and r.chat_id == GROUP]
    assert len(edits) == 1, "four quick joins make one edit"
    table_message = world.messages[(GROUP, bot.runtime.tables.get(GROUP).message_id)]
    assert "5. 阿珍" in table_message.text, "the latest state wins"
    await stop_bot(bot)


async def test_players_get_their_own_buttons_by_dm(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "BJ 6H", 3: "9S KH"}, "7S")
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    forced = bot.world.bot_messages(2)[-1]
    assert [b["text"] for b in forced.buttons] == ["补牌"], "a lone joker is offered only draw"
    assert bot.world.bot_messages(3)[-1].buttons == [], "a tiangong gets no button"
    await d.press(2, 2, "补牌")
    assert "BJ" not in bot.world.bot_messages(2)[-1].text
    assert "大王🃏 6♥️ 7♠︎" in bot.world.bot_messages(2)[-1].text
    assert bot.world.bot_messages(2)[-1].buttons == [], "decided: the buttons go"
    banker_dm = bot.world.bot_messages(1)[-1]
    assert [b["text"] for b in banker_dm.buttons] == ["补牌", "不补"], "now the banker chooses"
    await d.press(1, 1, "不补")
    assert "结算" in d.table(GROUP)
    assert bot.world.open_queries == {}


async def test_the_table_speaks_the_chats_language_and_popups_the_persons(bot, world):
    d = bot.driver
    await bot.runtime.preferences.update_chat_settings(GROUP, language="en")
    world.people[2].language_code = "zh-hant"
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S")
    await d.send(1, GROUP, "/newgame muxi")
    assert "Muxi · waiting to start" in d.table(GROUP)
    await d.press(2, GROUP, "Join")
    await d.press(1, GROUP, "Start")
    await d.press(2, GROUP, "Start")
    assert "Muxi · round 1 · base 100" in d.table(GROUP)
    await d.press(1, GROUP, "Be banker")
    await d.press(2, GROUP, "My cards")
    assert "你的牌：5♠︎ 6♥️" in d.popup(2) and "1點 普通" in d.popup(2)
    assert "第 1 局" in d.texts(2)[-1]
    await d.press(2, GROUP, "Draw")
    await d.press(1, GROUP, "Stand")
    result = d.table(GROUP)
    assert "round 1 · results" in result and "Straight ×4" in result and "+400" in result


async def test_the_token_never_reaches_the_logs(world, database):
    stream = io.StringIO()
    configure_logging("123456:TEST-TOKEN-SECRET", logging.DEBUG, stream)
    try:
        bot = await start_bot(world, database, token="123456:TEST-TOKEN-SECRET")
        stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
        await open_and_start(bot, [1, 2])
        await bot.driver.press(1, GROUP, "当庄")
        logging.getLogger("test").error("a failure naming %s", "123456:TEST-TOKEN-SECRET")
        await stop_bot(bot)
    finally:
        logging.basicConfig(force=True)
        logging.getLogger().setLevel(logging.WARNING)
    written = stream.getvalue()
    assert "Set Bot API URL" in written, "python-telegram-bot logged its URL, which holds the token"
    assert "TEST-TOKEN-SECRET" not in written and "<token>" in written
