"""Muxi played end to end through commands and buttons, as people see it (issue 5)."""

import re
from types import SimpleNamespace

from faketg.harness import ADMIN, GROUP, escape, start_bot, stop_bot
from storage import MINT
from tests.component.decks import stack
from tests.component.scenarios import open_and_start


def assert_all_answered(bot):
    assert bot.world.open_queries == {}, "every button press gets an answer"


async def test_two_people_play_a_round(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    table = d.table(GROUP)
    assert "第 1 局 · 底注 100" in table and "叫庄：阿明 是否当庄" in table and "洗牌承诺" in table
    await d.press(2, GROUP, "当庄")
    assert "还没轮到你" in d.popup(2)
    await d.press(1, GROUP, "当庄")
    assert "庄家 阿明" in d.table(GROUP)
    assert "5♠︎ 6♥️" in d.texts(2)[-1] and "1点 普通" in d.texts(2)[-1]
    assert "3♥️ 4♥️" in d.texts(1)[-1]
    assert "5♠︎" not in d.table(GROUP), "private cards never appear in the group"
    await d.press(2, GROUP, "看我的牌")
    assert "5♠︎ 6♥️" in d.popup(2) and bot.world.popups[2][-1].show_alert
    await d.press(2, GROUP, "补牌")
    assert "5♠︎ 6♥️ 7♠︎" in d.texts(2)[-1] and "四倍 顺子" in d.texts(2)[-1]
    toast = d.popup(2).splitlines()  # (the move confirmed, then the hand with the drawn card)
    assert toast[0] == "✅ 你补了一张" and "5♠︎ 6♥️ 7♠︎" in toast[1], toast
    assert "小红  ✅ 已补牌" in d.table(GROUP)
    await d.press(1, GROUP, "补牌")
    result = d.table(GROUP)
    assert "第 1 局 · 结算" in result
    assert "庄 阿明  3♥️ 4♥️ 8♥️  5点 三倍  −400" in result
    assert "小红  5♠︎ 6♥️ 7♠︎  四倍 顺子  +400" in result
    assert "/verify" in result and "继续下一局" in d.labels(GROUP)
    assert (await bot.balance(1), await bot.balance(2)) == (9_600, 10_400)
    await d.send(1, GROUP, "/verify")
    assert "sha256sum" in d.last(GROUP) and "7S 8H" in d.last(GROUP)
    assert_all_answered(bot)


async def test_five_people_a_forced_draw_times_out(bot):
    d = bot.driver
    people = [1, 2, 3, 4, 5]
    stack(bot, [2, 3, 4, 5, 1], {1: "5S 2H", 2: "BJ 3H", 3: "2D 3C", 4: "AC 3D", 5: "9S KS"}, "9C")
    await open_and_start(bot, people)
    await d.press(1, GROUP, "当庄")
    table = d.table(GROUP)
    assert "小红  ⏳ 考虑中" in table and "阿珍  9♠︎ K♠︎ 双倍天公9（亮牌）" in table
    assert "须补牌" not in table, "the group must not learn that 2 holds a lone joker"
    await d.press(2, GROUP, "不补")
    assert "单张王必须补牌" in d.popup(2)
    await d.press(3, GROUP, "不补")
    await d.press(5, GROUP, "补牌")
    assert "天公不能补牌" in d.popup(5)
    await bot.fire_timer()  # 2 never draws (forfeit), 4 never answers (stands)
    assert "小红🤖  ⌛ 超时认输" in d.table(GROUP) and "老王🤖  ✋ 不补" in d.table(GROUP)  # (托管 now)
    await d.press(1, GROUP, "不补")
    result = d.table(GROUP)
    assert "小红" in result and "超时认输  −100" in result
    balances = {person: await bot.balance(person) for person in people}
    # banker 7 points: beats 5 and 4 points (1×), the forfeit pays 1×, loses to double tiangong 9 (2×)
    assert balances == {1: 10_000 + 100 + 100 + 100 - 200, 2: 9_900, 3: 9_900, 4: 9_900, 5: 10_200}
    assert_all_answered(bot)


async def test_a_player_escapes_and_the_banker_escapes_by_leaving_the_group(bot):
    d = bot.driver
    stack(bot, [2, 3, 4, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D", 4: "2C 3C"})
    await open_and_start(bot, [1, 2, 3, 4])
    await d.press(1, GROUP, "当庄")
    await escape(d, 2)
    assert "小红 逃跑，罚 1,000" in d.table(GROUP)
    assert await bot.balance(2) == 9_000
    await d.leave_group(1, GROUP)
    result = d.table(GROUP)
    assert "阿明 逃跑，罚 5,000" in result and "第 1 局 · 结算" in result
    assert {p: await bot.balance(p) for p in (1, 2, 3, 4)} == {1: 5_000, 2: 9_000, 3: 11_000, 4: 11_000}
    report = await bot.runtime.store.check()
    assert report.ok, report


async def test_a_dm_that_fails_gets_a_deep_link_and_the_popup_still_works(bot, world):
    d = bot.driver
    world.people[2].started_bot = False
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    table = d.table(GROUP)
    assert "没法私聊 小红" in table and "?start=t" in table
    assert d.texts(2) == []
    await d.press(2, GROUP, "看我的牌")
    assert "5♠︎ 6♥️" in d.popup(2)
    link = re.search(r"\?start=(t\d+)", table).group(1)
    await d.send(2, 2, f"/start {link}")
    assert any("5♠︎ 6♥️" in text for text in d.texts(2))
    assert "你的牌已发到这里" in d.texts(2)[-1] or "你的牌已发到这里" in "".join(d.texts(2))


async def test_stale_foreign_and_double_presses_are_answered(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    message_id, old_data = d.button_data(GROUP, "当庄")
    await d.press(1, GROUP, "当庄")
    await d.press(6, GROUP, "补牌")
    assert "你不在这一桌" in d.popup(6)
    await d.press(2, GROUP, "补牌")
    await d.press(2, GROUP, "补牌")
    assert "你已经选过了" in d.popup(2)
    await d.press(1, GROUP, "不补")
    await d.press(1, GROUP, "继续下一局")
    await d.press(2, GROUP, "继续下一局")
    await d.press_data(1, GROUP, message_id, old_data)
    assert "上一局的按钮" in d.popup(1)
    await d.press_data(1, GROUP, message_id, "m:999:1:draw")
    assert "已经结束" in d.popup(1)
    await d.press_data(1, GROUP, message_id, "garbage")
    assert "已失效" in d.popup(1)
    assert_all_answered(bot)


async def test_a_restarted_bot_carries_on_the_round(world, database):
    first = await start_bot(world, database)
    stack(first, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"}, "7S 8H")
    await open_and_start(first, [1, 2, 3])
    await first.driver.press(1, GROUP, "当庄")
    await first.driver.press(2, GROUP, "补牌")
    await stop_bot(first)

    second = await start_bot(world, database)
    d = second.driver
    assert second.runtime.turns.moment(second.runtime.tables.get(GROUP).table_id) is not None, (
        "the deadline is armed again"
    )
    await d.press(2, GROUP, "补牌")
    assert "你已经选过了" in d.popup(2)
    await d.press(3, GROUP, "不补")
    await d.press(1, GROUP, "不补")
    assert "第 1 局 · 结算" in d.table(GROUP)
    total = sum([await second.balance(p) for p in (1, 2, 3)])
    assert total == 30_000
    report = await second.runtime.store.check()
    assert report.ok, report
    await stop_bot(second)


async def test_a_timeout_after_restart_fires_from_the_saved_deadline(world, database):
    first = await start_bot(world, database)
    stack(first, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(first, [1, 2])
    await first.driver.press(1, GROUP, "当庄")
    await stop_bot(first)
    second = await start_bot(world, database)
    await second.fire_timer()  # the player never answered: stands
    assert "小红🤖  ✋ 不补" in second.driver.table(GROUP)  # (托管 now)
    await stop_bot(second)


async def test_cancel_is_for_admins_and_ends_the_table_once_the_round_is_settled(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await escape(d, 2)
    await d.send(3, GROUP, "/cancel")
    assert "只有群管理员" in d.last(GROUP)
    await d.send(ADMIN, GROUP, "/cancel")
    live = bot.runtime.tables.get(GROUP)
    assert "群主 要求关桌：本局结算后牌桌关闭" in bot.world.messages[(GROUP, live.message_id)].text
    await d.send(ADMIN, GROUP, "/cancel")
    assert "已经要求关桌" in d.last(GROUP)
    await d.press(3, GROUP, "不补")
    await d.press(1, GROUP, "不补")
    closed = bot.world.messages[(GROUP, live.message_id)].text
    assert "第 1 局 · 结算" in closed and "管理员已结束本桌" in closed
    assert bot.world.messages[(GROUP, live.message_id)].buttons == []
    assert await bot.balance(2) == 9_000, "the escape was paid as the rules say, not voided"
    await d.send(1, GROUP, "/newgame muxi")
    assert "等待开局" in d.table(GROUP)
    report = await bot.runtime.store.check()
    assert report.ok and MINT


async def test_cancel_in_the_lobby_ends_the_table_at_once(bot):
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    await d.send(ADMIN, GROUP, "/cancel")
    assert "管理员已结束本桌" in d.table(GROUP) and bot.runtime.tables.get(GROUP) is None


async def test_the_lobby_expires(bot):
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    await bot.fire_timer()
    assert "长时间无人开局" in d.table(GROUP) and d.labels(GROUP) == []


async def test_a_turn_is_a_deadline_and_a_reminder_named_after_its_table_none_fires_after_the_stop(
    world, database
):
    bot = await start_bot(world, database)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    live = bot.runtime.tables.get(GROUP)
    (job,) = bot.application.job_queue.jobs()
    assert job.name == f"table {live.table_id}", "one job a table, named after it"
    await stop_bot(bot)
    assert bot.runtime.turns.moment(live.table_id) is None, "nothing armed"
    assert bot.application.job_queue.jobs() == ()
    deadline = SimpleNamespace(
        job=SimpleNamespace(data=(GROUP, live.table_id, live.engine.core.timer, "deadline"))
    )
    await bot.runtime.turns._fire(deadline)  # a deadline running as the bot stopped
    assert "小红  ⏳" in bot.world.messages[(GROUP, live.message_id)].text, "it carried out nothing"
