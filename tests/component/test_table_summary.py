"""A table that ends gets its 总结算 (issue 49 point 5): one message in the group, each person's line
in their DM, whichever way it ends (nobody takes the bank, everyone leaves, /cancel, the lobby
expires); none for a table closed with no round played. Played through the fake Telegram."""

import re

from bot.display.views.common import signed
from faketg.harness import ADMIN, GROUP
from tests.component.decks import stack
from tests.component.scenarios import live_table, open_and_start

# Dealt to 2 then 1 each round: 1 (阿明) banks with 3♥ 4♥ and draws 8♥ (5 points, a flush); 2 (小红)
# holds 5♠ 6♥ and draws 7♠ (a straight, paid four times): 1 −400, 2 +400 (as in test_muxi_rounds).
DEAL = ([2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
TITLE = "总结算"


def summaries(bot) -> list[str]:
    """The group's 总结算 messages, as read (without their bold)."""
    return [re.sub("</?b>", "", text) for text in bot.driver.texts(GROUP) if TITLE in text]


async def play_round(bot) -> None:
    """One muxi round at the group's table: 1 banks (2 declines when asked first), 2 draws a
    straight, 1 draws: 1 −400, 2 +400."""
    d = bot.driver
    if asked(bot) == 2:
        await d.press(2, GROUP, "不当庄")
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "补牌")
    await d.press(1, GROUP, "补牌")
    assert "第 " in d.table(GROUP) and "· 结算" in d.table(GROUP)


def asked(bot) -> int:
    """Whom the bank is offered to now."""
    person = live_table(bot).engine.asked_person()
    assert person is not None
    return person


async def nobody_banks(bot) -> None:
    """Everyone asked declines the bank: the table closes (RULES: nobody banks, it ends)."""
    while bot.runtime.tables.get(GROUP) is not None:
        await bot.driver.press(asked(bot), GROUP, "不当庄")


async def next_round(bot) -> None:
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "继续下一局")


def assert_one_summary(bot, nets: list[str], rounds: int, reason: str) -> str:
    found = summaries(bot)
    assert len(found) == 1, found
    text = found[0]
    assert f"共 {rounds} 局" in text and f"牌局结束：{reason}" in text
    lines = text.splitlines()
    ranked = [line for line in lines if line.startswith(("🥇", "🥈", "🥉"))]
    assert ranked == nets, lines
    assert "🔐 洗牌承诺：#1\u00a0" in text and "/verify 1 局号" in text
    return text


def dm_line(bot, person: int) -> str:
    """The 总结算's line in ``person``'s DM for the table."""
    lines = [line for text in bot.driver.texts(person) for line in text.splitlines() if TITLE in line]
    assert len(lines) == 1, bot.driver.texts(person)
    return lines[0]


async def test_nobody_takes_the_bank_the_table_ends_with_its_summary(bot):
    d = bot.driver
    stack(bot, *DEAL)
    await open_and_start(bot, [1, 2])
    await play_round(bot)
    await next_round(bot)
    await play_round(bot)
    await next_round(bot)
    await nobody_banks(bot)  # the table closes (the seed's rule)
    text = assert_one_summary(bot, ["🥇 小红  +800", "🥈 阿明  −800"], 2, "无人当庄")
    assert "👑 大赢家：小红 +800" in text
    assert "🃏 最大牌型：小红 四倍 顺子（第 1 局）" in text and "5♠︎ 6♥️ 7♠︎" in text
    assert "💰 最大一局：第 1 局，易手 400" in text
    assert "#2\u00a0" in text and "#3\u00a0" not in text, "the played rounds' commitments"
    assert dm_line(bot, 2) == "🏁 第 1 桌总结算（共 2 局）：本场 +800，第 1 名（共 2 人）👑 大赢家"
    assert dm_line(bot, 1) == "🏁 第 1 桌总结算（共 2 局）：本场 −800，第 2 名（共 2 人）"
    assert (await bot.balance(1), await bot.balance(2)) == (9_200, 10_800), "the nets are the coins moved"
    await d.send(1, GROUP, "/history")
    assert "🀄 木虱 第 1 桌 · " in d.last(GROUP) and "2 局 · 👑 小红 +800" in d.last(GROUP)


async def test_everyone_leaves_the_table_ends_with_its_summary(bot):
    d = bot.driver
    stack(bot, *DEAL)
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "补牌")
    await d.press(3, GROUP, "不补")
    await d.press(1, GROUP, "补牌")
    for person in (3, 2, 1):
        await d.press(person, GROUP, "离桌")
    assert bot.runtime.tables.get(GROUP) is None
    nets = {person: await bot.balance(person) - 10_000 for person in (1, 2, 3)}
    assert sum(nets.values()) == 0 and any(nets.values())
    assert_one_summary(bot, _medals(nets), 1, "所有人都已离开")
    for person in (1, 2, 3):
        assert "🏁 第 1 桌总结算（共 1 局）：本场 " in dm_line(bot, person)


def _medals(nets: dict[int, int]) -> list[str]:
    """The summary's lines for these nets (person -> net), best first."""
    names = {1: "阿明", 2: "小红", 3: "阿强"}
    best_first = sorted(nets, key=lambda person: -nets[person])
    return [
        f"{mark} {names[p]}  {signed(nets[p])}"
        for mark, p in zip(("🥇", "🥈", "🥉"), best_first, strict=True)
    ]


async def test_cancel_ends_the_table_with_its_summary_and_one_message_only(bot):
    d = bot.driver
    stack(bot, *DEAL)
    await open_and_start(bot, [1, 2])
    await play_round(bot)
    await d.send(ADMIN, GROUP, "/cancel")  # between rounds: it closes at once
    assert bot.runtime.tables.get(GROUP) is None
    text = assert_one_summary(bot, ["🥇 小红  +400", "🥈 阿明  −400"], 1, "管理员已结束本桌")
    assert "💰 最大一局：第 1 局，易手 400" in text
    summary = next(m for m in bot.world.bot_messages(GROUP) if TITLE in m.text)
    assert summary.reply_to is None, "its own message, answering nobody's command"
    assert dm_line(bot, 1).endswith("本场 −400，第 2 名（共 2 人）")


async def test_the_lobby_expires_after_a_round_the_table_ends_with_its_summary(bot):
    stack(bot, *DEAL)
    await open_and_start(bot, [1, 2])
    await play_round(bot)
    await bot.driver.press(2, GROUP, "继续下一局")  # 1 never presses: the lobby's time runs out
    await bot.fire_timer()
    assert bot.runtime.tables.get(GROUP) is None
    assert_one_summary(bot, ["🥇 小红  +400", "🥈 阿明  −400"], 1, "长时间无人开局")
    assert dm_line(bot, 2).endswith("本场 +400，第 1 名（共 2 人）👑 大赢家")


async def test_a_group_upgraded_where_a_new_table_was_opened_first_gets_the_old_tables_summary(bot):
    """The supergroup opened a table of its own before the upgrade's notices came: the old table
    ends (its coins go back) and its 总结算 goes to the supergroup, where the group now is."""
    d, world = bot.driver, bot.world
    stack(bot, *DEAL)
    await open_and_start(bot, [1, 2])
    await play_round(bot)
    supergroup = GROUP - 1_000
    told = world.upgrade_group(GROUP, supergroup)
    await d.send(3, supergroup, "/newgame muxi")
    for update in told:
        await d.deliver(update)
    await bot.runtime.wait_idle()
    found = [text for text in d.texts(supergroup) if TITLE in text]
    assert len(found) == 1 and "🥇 小红  <b>+400</b>" in found[0] and "本群已升级为超级群" in found[0]
    assert dm_line(bot, 1).endswith("本场 −400，第 2 名（共 2 人）")


async def test_a_table_closed_with_no_round_played_has_no_summary(bot):
    d = bot.driver
    await open_and_start(bot, [1, 2])
    await nobody_banks(bot)  # the first round is not played
    await d.send(1, GROUP, "/newgame muxi")
    await d.send(ADMIN, GROUP, "/cancel")  # a lobby nobody played in
    assert summaries(bot) == []
    assert not any(TITLE in text for person in (1, 2) for text in d.texts(person))


async def test_history_answers_wrong_input_clearly(bot):
    d = bot.driver
    stack(bot, *DEAL)
    await open_and_start(bot, [1, 2])
    await play_round(bot)
    await d.send(1, GROUP, "/history abc")
    assert "用法：/history" in d.last(GROUP)
    await d.send(1, GROUP, "/history 1 2")
    assert "用法：/history" in d.last(GROUP)
    await d.send(1, GROUP, "/history 99")
    assert "本群没有第 99 桌" in d.last(GROUP)
    await d.send(2, GROUP, "/history 99999999999999999999999")  # (another asker: the same reply)
    assert "用法：/history" in d.last(GROUP)
    await d.send(1, GROUP, "/history #1")
    assert "第 1 桌第 1 局：" in d.last(GROUP) and "/verify 1 1" in d.last(GROUP)
    await d.send(1, GROUP, "/history")
    assert "（进行中）" in d.last(GROUP), "the open table is listed, marked as still playing"
