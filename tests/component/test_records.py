"""/top, /stats, /history and /settings, in all three languages; the operator's seconds as every
chat's default in /settings; a round without results in /history <table>."""

import time

import pytest

from faketg.harness import ADMIN, GROUP, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack_showhand
from tests.component.scenarios import act, open_and_start

LABELS = {
    "zh-hans": {
        "join": "加入",
        "start": "开始",
        "check": "过牌",
        "top": "本群排行",
        "stats": "的战绩",
        "best": "最好牌型 对子",
        "history": "本群最近的牌桌",
        "settings": "本群设置",
        "admins": "只有群管理员",
    },
    "zh-hant": {
        "join": "加入",
        "start": "開始",
        "check": "過牌",
        "top": "本群排行",
        "stats": "的戰績",
        "best": "最好牌型 對子",
        "history": "本群最近的牌桌",
        "settings": "本群設定",
        "admins": "只有群管理員",
    },
    "en": {
        "join": "Join",
        "start": "Start",
        "check": "Check",
        "top": "This group's leaderboard",
        "stats": "'s stats",
        "best": "best hand One pair",
        "history": "Recent tables here",
        "settings": "Group settings",
        "admins": "Only the group's admins",
    },
}


async def play_a_showhand_game(bot, labels):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await d.send(1, GROUP, "/newgame showhand")
    await d.press(2, GROUP, labels["join"])
    await d.press(1, GROUP, labels["start"])
    await d.press(2, GROUP, labels["start"])
    for _ in range(8):
        await act(bot, labels["check"])


@pytest.mark.parametrize("language", ["zh-hans", "zh-hant", "en"])
async def test_top_stats_history_in_every_language(bot, world, language):
    labels = LABELS[language]
    await bot.runtime.preferences.update_chat_settings(GROUP, language=language)
    for person in world.people.values():
        person.language_code = language
    d = bot.driver
    await d.send(2, GROUP, "/top")
    assert "/newgame muxi" in d.last(GROUP)
    await play_a_showhand_game(bot, labels)
    await d.send(2, GROUP, "/top")
    board = d.last(GROUP)
    assert labels["top"] in board and "1. 小红  +100" in board and "2. 阿明  −100" in board
    await d.send(2, GROUP, "/top global")
    assert "10,100" in d.last(GROUP)
    await d.send(2, 2, "/stats")
    stats = d.last(2)
    assert labels["stats"] in stats and labels["best"] in stats and "+100" in stats
    await d.send(1, GROUP, "/history")
    history = d.last(GROUP)  # the chat's tables, each with its big winner
    assert labels["history"] in history and "👑 小红 +100" in history and "/verify" not in history
    await d.send(1, GROUP, "/history 1")
    rounds = d.last(GROUP)  # one table's rounds, each with its proof
    assert "/verify 1 1" in rounds and "小红 +100" in rounds and "阿明 −100" in rounds


@pytest.mark.parametrize("language", ["zh-hans", "zh-hant", "en"])
async def test_settings_by_buttons_for_admins_only(bot, language):
    labels = LABELS[language]
    await bot.runtime.preferences.update_chat_settings(GROUP, language=language)
    d = bot.driver
    await d.send(1, GROUP, "/settings")
    assert labels["admins"] in d.last(GROUP)
    await d.send(ADMIN, GROUP, "/settings")
    assert labels["settings"] in d.last(GROUP)
    await d.press(1, GROUP, data="cfg:turn:60")
    assert labels["admins"] in d.popup(1)
    await d.press(ADMIN, GROUP, data="cfg:turn:60")
    await d.press(ADMIN, GROUP, data="cfg:lobby:600")
    settings = await bot.runtime.store.chat_settings(GROUP)
    assert (settings.turn_seconds, settings.lobby_seconds) == (60, 600)
    await d.press(ADMIN, GROUP, data="cfg:game:showhand")
    assert (await bot.runtime.store.chat_settings(GROUP)).allowed_games == ("muxi",)
    await d.press(ADMIN, GROUP, data="cfg:game:muxi")
    assert (await bot.runtime.store.chat_settings(GROUP)).allowed_games == ("muxi",), "one game stays"
    await d.send(1, GROUP, "/newgame showhand")
    assert bot.runtime.tables.get(GROUP) is None, "showhand is not allowed here any more"
    await d.send(1, GROUP, "/newgame muxi")
    assert bot.runtime.tables.get(GROUP).engine.core.turn_seconds == 60
    await d.press(ADMIN, GROUP, "English")
    assert (
        "Group settings"
        in bot.world.messages[(GROUP, d.message_with(GROUP, label="English").message_id)].text
    )
    assert bot.world.open_queries == {}


# -- PAIJU_TURN_SECONDS / PAIJU_LOBBY_SECONDS: every chat's default until it chooses ----------------
async def test_the_operators_seconds_are_the_default_of_every_chat_that_chose_none(world, database):
    bot = await start_bot(world, database, turn_seconds=10, lobby_seconds=120)
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    live = bot.runtime.tables.get(GROUP)
    assert (live.engine.core.turn_seconds, live.engine.core.lobby_seconds) == (10, 120)
    assert 115 < live.deadline - time.time() <= 120, "the lobby closes after 120 s, not 300"
    await d.press(2, GROUP, "加入")
    for person in (1, 2):
        await d.press(person, GROUP, "开始")
    assert 5 < live.deadline - time.time() <= 10, "the banker question waits 10 s, not 30"
    await d.send(ADMIN, GROUP, "/settings")
    shown = d.last(GROUP)
    assert "每步限时：10 秒" in shown and "无人开局 2 分钟后解散" in shown
    assert "✅10秒" in d.labels(GROUP)
    await stop_bot(bot)

    # Nothing was chosen here: the operator's new settings apply; a choice then outlasts them.
    bot = await start_bot(world, database, turn_seconds=20, lobby_seconds=90)
    d = bot.driver
    await d.send(ADMIN, GROUP, "/settings")
    assert "每步限时：20 秒" in d.last(GROUP) and "无人开局 90 秒后解散" in d.last(GROUP)
    await d.press(ADMIN, GROUP, "45秒")
    assert (await bot.runtime.store.chat_settings(GROUP)).turn_seconds == 45
    await stop_bot(bot)
    bot = await start_bot(world, database, turn_seconds=10)
    assert (await bot.runtime.preferences.chat_settings(GROUP)).turn_seconds == 45
    await stop_bot(bot)


async def test_a_round_without_results_reads_as_not_settled_in_the_history(bot):
    d = bot.driver
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "不当庄")
    await d.press(2, GROUP, "不当庄")  # nobody banks: the round ends without a deal
    await d.send(1, GROUP, "/history")
    assert "还没有打完的牌局" in d.last(GROUP), "a table closed with no round played is not listed"
    await d.send(1, GROUP, "/history 1")
    assert "未结算" in d.last(GROUP) and "/verify 1 1" in d.last(GROUP)
