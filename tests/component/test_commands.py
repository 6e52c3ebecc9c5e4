"""Every command, as people see the answers (and a forged pick of /newgame's picker)."""

import os
import subprocess
import sys
from pathlib import Path

from faketg.harness import ADMIN, GROUP, start_bot, stop_bot

ROOT = Path(__file__).resolve().parents[2]


async def test_start_in_a_dm_welcomes_and_grants_once(bot):
    d = bot.driver
    await d.send(1, 1, "/start")
    first = d.last(1)
    assert "欢迎来到牌局" in first and "送你 10,000 金币" in first and "你现在有 10,000 金币" in first
    await d.send(1, 1, "/start")
    assert "送你" not in d.last(1)
    await d.send(1, GROUP, "/start")
    assert "/newgame muxi" in d.last(GROUP)


async def test_help_rules_balance(bot):
    d = bot.driver
    await d.send(1, 1, "/help")
    assert "/newgame muxi" in d.last(1) and "/daily" in d.last(1)
    await d.send(1, 1, "/rules")
    rules = d.last(1)
    assert "无敌" in rules and "×10" in rules and "双倍天公" in rules and "木虱" in rules
    await d.send(1, 1, "/rules suoha")
    assert "铁支" in d.last(1) and "葫芦" in d.last(1)
    await d.send(1, 1, "/rules poker")
    assert "没有「poker」这个游戏" in d.last(1)
    await d.send(2, GROUP, "/balance")  # about them only: to their DM (the group is told so)
    assert "小红 有 10,000 金币" in d.last(2)


async def test_daily_once_a_day_and_the_table_learns_of_it(bot):
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    await d.send(1, 1, "/daily")
    assert "领取每日奖励 2,000 金币，现在有 12,000" in d.last(1)
    await d.send(1, 1, "/daily")
    assert "今天已经领过了" in d.last(1)
    assert bot.runtime.tables.get(GROUP).engine.core.seat_of(1).balance == 12_000


async def test_language_for_a_person_and_for_a_group(bot):
    d = bot.driver
    await d.send(1, 1, "/language")
    await d.press(1, 1, "English")
    assert "Language set to English" in d.popup(1)
    await d.send(1, 1, "/balance")
    assert "has 10,000 coins" in d.last(1)
    await d.send(2, GROUP, "/language")
    assert "只有群管理员可以更改本群的语言" in d.last(GROUP)
    await d.send(ADMIN, GROUP, "/language")
    await d.press(ADMIN, GROUP, "繁體中文")
    await d.send(1, GROUP, "/newgame muxi")
    assert "木蝨 · 等待開局" in d.last(GROUP)


async def test_game_commands_in_a_dm_get_a_clear_reply(bot):
    d = bot.driver
    for command in ("/newgame muxi", "/join", "/leave", "/table", "/cancel"):
        await d.send(1, 1, command)
        assert "请在群里使用这个命令" in d.last(1), command


async def test_newgame_picker_unknown_and_one_table_per_chat(bot):
    d = bot.driver
    await d.send(1, GROUP, "/newgame")
    assert "玩什么" in d.last(GROUP)
    await d.press(1, GROUP, "木虱")
    assert "木虱 · 等待开局" in d.last(GROUP) and "阿明" in d.last(GROUP)
    await d.send(2, GROUP, "/newgame poker")
    assert "没有这个游戏" in d.last(GROUP)
    await d.send(2, GROUP, "/newgame muxi")
    assert "本群已有一桌" in d.last(GROUP)


async def test_join_leave_and_table_commands(bot, world):
    d = bot.driver
    await d.send(2, GROUP, "/join")
    assert "本群现在没有牌桌" in d.last(GROUP)
    await d.send(1, GROUP, "/newgame muxi")
    await d.send(2, GROUP, "/join")
    table_message = bot.runtime.tables.get(GROUP).message_id
    assert "2. 小红" in world.messages[(GROUP, table_message)].text
    await d.send(2, GROUP, "/join")
    assert "你已经入座了" in d.last(GROUP)
    await d.send(2, GROUP, "/leave")
    assert "小红" not in world.messages[(GROUP, table_message)].text
    await d.send(3, GROUP, "/table")
    assert world.messages[(GROUP, table_message)].deleted
    assert "木虱 · 等待开局" in d.last(GROUP)


async def test_one_table_at_a_time_across_chats(bot, world):
    d = bot.driver
    world.add_group(-200, "另一个群", [1, 2])
    await d.send(1, GROUP, "/newgame muxi")
    await d.send(2, -200, "/newgame muxi")
    await d.press(1, -200, "加入")
    assert "你已在另一桌" in d.popup(1)


async def test_sitting_needs_1000_coins_and_says_how_to_get_them(world, database):
    poor = await start_bot(world, database, start_grant=500)
    d = poor.driver
    await d.send(1, GROUP, "/newgame muxi")
    assert "入座至少需要 1,000 金币，你有 500" in d.last(GROUP) and "/daily" in d.last(GROUP)
    await stop_bot(poor)


async def test_verify_usage_and_unknown_round(bot):
    d = bot.driver
    await d.send(1, GROUP, "/verify x")
    assert "用法" in d.last(GROUP)
    await d.send(1, GROUP, "/verify 9 9")
    assert "找不到这一局" in d.last(GROUP)


async def test_the_command_menu_is_registered_in_chinese_and_english(bot, world):
    assert set(world.commands) == {"", "zh", "en"}
    menu = {command["command"]: command["description"] for command in world.commands["zh"]}
    assert menu["newgame"] == "开一桌：木虱或梭哈"
    english = {command["command"]: command["description"] for command in world.commands["en"]}
    assert english["daily"] == "Daily bonus"


def test_without_a_token_it_exits_2_and_says_how_to_get_one(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "TELEGRAM_BOT_TOKEN"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "BotFather" in result.stderr and "TELEGRAM_BOT_TOKEN" in result.stderr and ".env" in result.stderr


async def test_where_someone_sits_is_known_after_they_move_and_after_a_restart(world, database):
    """A person sits at one table at a time: after leaving one they may sit at another, and a
    restarted bot still knows where they sit."""
    first = await start_bot(world, database)
    d = first.driver
    world.add_group(-200, "另一个群", [1, 2])
    await d.send(1, GROUP, "/newgame muxi")
    await d.send(2, -200, "/newgame muxi")
    await d.press(1, GROUP, "离桌")  # free in the lobby: the table closes with nobody left
    await d.press(1, -200, "加入")
    assert first.runtime.tables.table_of(1) is first.runtime.tables.get(-200)
    await stop_bot(first)
    second = await start_bot(world, database)
    await second.driver.send(3, GROUP, "/newgame muxi")
    await second.driver.press(1, GROUP, "加入")
    assert "你已在另一桌" in second.driver.popup(1)
    assert second.runtime.tables.table_of(1) is second.runtime.tables.get(-200)
    await stop_bot(second)


# -- a forged game pick is refused with a reason ---------------------------------------------------
async def test_a_forged_game_pick_is_answered_with_a_popup(bot, world):
    d = bot.driver
    await d.send(1, GROUP, "/newgame")
    picker = d.message_with(GROUP, label="木虱")
    await d.press_data(1, GROUP, picker.message_id, "pick:poker")
    assert world.popups[1][-1].text == "这个按钮已失效" and world.popups[1][-1].show_alert
    assert world.open_queries == {} and bot.runtime.tables.get(GROUP) is None


async def test_language_marks_the_language_in_use(bot):
    """Issue 49 point 8: /language shows which language is the current one."""
    d = bot.driver
    await d.send(1, 1, "/language")
    assert d.buttons(1) == ["✅ 简体中文", "繁體中文", "English"]
    await d.press(1, 1, "English")
    await d.send(1, 1, "/language")
    assert d.buttons(1) == ["简体中文", "繁體中文", "✅ English"]
    await d.send(ADMIN, GROUP, "/language")
    assert d.buttons(GROUP) == ["✅ 简体中文", "繁體中文", "English"]


async def test_balance_daily_stats_in_a_group_answer_by_dm_and_say_so_in_the_group(bot, world):
    """Issue 49 point 8: answered by DM, they left nothing visible in the group."""
    d = bot.driver
    for command, theirs in (("/balance", "有 10,000 金币"), ("/daily", "领取每日奖励"), ("/stats", "小红")):
        asked = await d.send(2, GROUP, command)
        assert theirs in d.last(2), command
        said = [m for m in world.bot_messages(GROUP) if m.reply_to == asked]
        assert [m.text for m in said] == ["📬 小红：已私信回复你"], command
