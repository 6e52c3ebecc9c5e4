"""Playing in a real group, as each person sees it through the fake Telegram (issue 16): a new DM
when it is your turn (an edit notifies nobody), the reminder, a prompt that becomes what you did, a
readable deadline, old rounds' messages with their results only, a reply to every command, an
escape confirmed by a second press, a show-down in players' words, each DM ending with its result,
someone the bot cannot DM mentioned."""

import asyncio
import logging
import re
import time

from bot.display.views.common import duration, signed
from bot.display.views.muxi import hand_label
from bot.display.views.rules import rules_text
from faketg.driver import Driver
from faketg.harness import ADMIN, GROUP, refuse_once_per_chat, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.scenarios import act, labels, newest, open_and_start, remind

DEADLINE = re.compile(r"30 秒 · \d\d:\d\d:\d\d 截止")


async def test_each_turn_is_a_new_dm_that_notifies_and_then_says_what_was_done(bot):
    d, world = bot.driver, bot.world
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    asked = newest(bot, 1)
    assert "🔔 轮到你了" in asked.text and "你要当庄吗" in asked.text and DEADLINE.search(asked.text)
    assert labels(asked) == ["当庄", "不当庄"] and 1 in asked.notified
    assert not world.bot_messages(2), "nobody else is asked anything yet"
    await d.press(1, 1, "当庄")  # from the DM
    banker = world.messages[(1, asked.message_id)]
    assert banker.buttons == [] and "👑 你当庄" in banker.text and "3♥️ 4♥️" in banker.text
    prompt = newest(bot, 2)
    assert prompt.edits == 0 and 2 in prompt.notified, "a turn is a new message: it notifies"
    assert "🔔 轮到你了" in prompt.text and "5♠︎ 6♥️" in prompt.text and "补牌还是不补？" in prompt.text
    assert DEADLINE.search(prompt.text) and labels(prompt) == ["补牌", "不补"]
    await d.press(2, 2, "不补")
    done = world.messages[(2, prompt.message_id)]
    assert done.buttons == [] and "✋ 你不补" in done.text and "轮到你了" not in done.text
    turn = newest(bot, 1)
    assert turn.message_id != asked.message_id and 1 in turn.notified and labels(turn) == ["补牌", "不补"]
    earlier = world.messages[(1, asked.message_id)]
    assert not earlier.deleted and earlier.buttons == [], "the earlier DM stays: what they did"
    await d.press(1, 1, "补牌")
    over = world.messages[(1, turn.message_id)]
    assert over.buttons == [] and "3♥️ 4♥️ 7♠︎" in over.text and "🏁 本局 +100 · 现有 10,100 金币" in over.text
    assert "🏁 本局 −100 · 现有 9,900 金币" in newest(bot, 2).text
    for person in (1, 2):
        assert all(message.buttons == [] for message in world.bot_messages(person)), "no stale prompt"


async def test_a_restarted_bot_neither_reminds_again_nor_prompts_anew(world, database):
    bot = await start_bot(world, database)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    await remind(bot)
    sent = len(world.requests)
    await stop_bot(bot)
    bot = await start_bot(world, database)
    await bot.runtime.wait_idle()
    assert [r.method for r in world.requests[sent:] if r.chat_id in (1, 2)] == [], "nothing new in the DMs"
    live = bot.runtime.tables.get(GROUP)
    assert live.reminded and bot.runtime.turns.moment(live.table_id) != "reminder"
    await stop_bot(bot)


async def test_the_reminder_is_a_new_dm_that_goes_once_they_act(bot):
    d, world = bot.driver, bot.world
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    prompt = newest(bot, 2)
    await remind(bot)
    reminder = newest(bot, 2)
    assert reminder.message_id != prompt.message_id and world.messages[(2, prompt.message_id)].deleted
    assert "⏰ 只剩 10 秒了！" in reminder.text and 2 in reminder.notified
    assert labels(reminder) == ["补牌", "不补"]
    assert len(world.bot_messages(1)) == 1, "the banker, who has nothing to do yet, is not reminded"
    await d.press(2, 2, "补牌")
    done = world.messages[(2, reminder.message_id)]
    assert done.buttons == [] and "只剩" not in done.text and "✅ 你补了一张" in done.text


async def test_a_forced_draw_asks_only_for_the_draw(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "BJ 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    prompt = newest(bot, 2)
    assert "单张王必须补牌" in prompt.text and "补牌或不补" not in prompt.text and labels(prompt) == ["补牌"]


async def test_the_last_rounds_message_keeps_its_results_only(bot):
    d, world = bot.driver, bot.world
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "不补")
    await d.press(1, GROUP, "不补")
    first = bot.runtime.tables.get(GROUP).message_id
    assert "继续下一局" in labels(world.messages[(GROUP, first)])
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    for person in (1, 2):
        await d.press(person, GROUP, "继续下一局")
    old = world.messages[(GROUP, first)]
    assert old.buttons == [], "an old round's message has no buttons"
    assert "第 1 局 · 结算" in old.text and "/verify 1 1" in old.text
    assert "未准备" not in old.text and "继续下一局" not in old.text, "no lobby lines on a results message"
    assert "第 2 局" in d.table(GROUP) and bot.runtime.tables.get(GROUP).message_id != first


async def test_every_table_command_gets_a_short_reply_to_it(world, database):
    bot = await start_bot(world, database, owners=frozenset({ADMIN}))
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"})
    await open_and_start(bot, [1, 2, 3])
    table_id = bot.runtime.tables.get(GROUP).message_id
    asked = await d.send(4, GROUP, "/newgame showhand")
    reply = newest(bot, GROUP)
    assert "本群已有一桌🀄 木虱" in reply.text and reply.reply_to == table_id, "it points at the table"
    asked = await d.send(4, GROUP, "/join")
    reply = newest(bot, GROUP)
    assert reply.text == "✅ 老王 入座，从下一局开始参加" and reply.reply_to == asked
    asked = await d.send(4, GROUP, "/leave")
    assert newest(bot, GROUP).text == "👋 老王 离桌了" and newest(bot, GROUP).reply_to == asked
    await d.press(1, GROUP, "当庄")
    await d.send(2, GROUP, "/leave")
    assert "罚 1,000" in d.last(GROUP) and "再发一次 /leave 确认" in d.last(GROUP)
    assert await bot.balance(2) == 10_000, "nothing is paid before the second /leave"
    await d.send(2, GROUP, "/leave")
    assert d.last(GROUP) == "🏃 小红 逃跑了" and await bot.balance(2) == 9_000
    asked = await d.send(ADMIN, GROUP, "/cancel")
    reply = newest(bot, GROUP)
    assert reply.text == "🔚 🀄 木虱 第 1 桌（阿明开的）已结束（打了 1 局），退还：小红 1,000"
    assert reply.reply_to == asked
    assert await bot.balance(2) == 10_000
    await stop_bot(bot)


async def test_an_admins_cancel_says_when_the_table_closes(bot):
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    await d.send(ADMIN, GROUP, "/cancel")
    assert d.last(GROUP) == "🔚 🀄 木虱 第 1 桌（阿明开的）已结束（打了 0 局，桌上没有押着的金币）"
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await d.send(ADMIN, GROUP, "/cancel")
    assert d.last(GROUP) == "🔚 好的：🀄 木虱 第 2 桌（阿明开的）第 1 局结算后关桌"


async def test_leaving_says_what_it_costs_and_an_escape_needs_a_second_press(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"})
    await open_and_start(bot, [1, 2, 3])
    assert "离桌" in d.labels(GROUP)
    await d.press(1, GROUP, "当庄")
    assert "🏃 逃跑（罚 1,000–5,000）" in d.labels(GROUP), "a player pays 10× base, the banker 50×"
    await d.press(2, GROUP, "逃跑")
    popup = bot.world.popups[2][-1]
    assert popup.show_alert and "罚 1,000" in popup.text and "5 秒内再按一次确认" in popup.text
    assert await bot.balance(2) == 10_000 and 2 in bot.runtime.tables.get(GROUP).seated()
    key = (bot.runtime.tables.get(GROUP).table_id, 2)
    bot.runtime.escapes._asked[key] = (
        bot.runtime.escapes._asked[key][0] - 10,
        bot.runtime.escapes._asked[key][1],
    )  # too long ago
    await d.press(2, GROUP, "逃跑")
    assert "再按一次确认" in d.popup(2) and await bot.balance(2) == 10_000
    await d.press(2, GROUP, "逃跑")
    assert await bot.balance(2) == 9_000 and "小红 逃跑，罚 1,000" in d.table(GROUP)
    assert "🏃 逃跑（罚 1,000–5,000）" in d.labels(GROUP)


async def test_someone_the_bot_cannot_dm_is_told_once_and_called_on_their_turn(bot):
    d, world = bot.driver, bot.world
    world.people[2].started_bot = False
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    table = d.table(GROUP)
    assert table.count("没法私聊 小红") == 1
    assert '<a href="tg://user?id=2">小红</a>' in table, "a real mention on the line of their turn"
    assert "打开与我的私聊" in table and "start=t" in table
    call = newest(bot, GROUP)
    assert call.reply_to == bot.runtime.tables.get(GROUP).message_id and 2 in call.notified
    assert "轮到你了" in call.text and DEADLINE.search(call.text), "a new message: the mention notifies"
    await d.press(2, GROUP, "不补")
    table = d.table(GROUP)
    assert "tg://user?id=2" not in table, "mentioned only while it is their turn"
    assert table.count("没法私聊 小红") == 1, "said once, not every turn"
    assert world.messages[(GROUP, call.message_id)].deleted, "the call goes once the turn is over"


async def test_showhand_in_players_words_to_a_show_down_decided_by_a_suit(bot):
    d = bot.driver
    hands = {1: "AS KH AC 9D 10C", 2: "AH KS AD 9H 10D"}  # a pair of aces each: the ♠ ace decides
    stack_showhand(bot, [1, 2], 1, hands)
    await open_and_start(bot, [1, 2], "showhand")
    assert d.labels(GROUP)[:3] == ["🂠 看我的牌", "过牌", "下注 100"]
    prompt = newest(bot, bot.runtime.tables.get(GROUP).engine.turn)
    assert "🔔 轮到你了" in prompt.text and "底池 200 · 你已下 100" in prompt.text
    assert DEADLINE.search(prompt.text)
    while bot.runtime.tables.get(GROUP).engine.phase == "betting":
        await act(bot, "过牌")
    result = d.table(GROUP)
    assert "🏆 阿明  底牌 A♠︎ · K♥️ A♣︎ 9♦️ 10♣︎  一对 A  +100" in result, result
    assert "小红  底牌 A♥️ · K♠︎ A♦️ 9♥️ 10♦️  一对 A  −100" in result
    assert "💰 底池 200 归 阿明" in result and "都是一对 A，A♠︎ 大过 A♥️" in result
    assert "🏁 本局 +100 · 现有 10,100 金币" in newest(bot, 1).text
    assert "🏁 本局 −100 · 现有 9,900 金币" in newest(bot, 2).text


async def test_a_bet_button_names_what_it_puts_in_and_a_timeout_folds_in_words(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await act(bot, "下注 100")
    assert d.labels(GROUP)[1:4] == ["跟注 100", "加注 200", "加注 300"]  # what each puts in
    await act(bot, "跟注 100")
    await bot.fire_timer()  # the next to speak runs out of time
    result = d.table(GROUP)
    assert "⌛ 超时弃牌" in result and "底牌" not in result, "a winner by folds shows no hole card"


async def test_pressing_the_setting_already_chosen_edits_nothing_and_logs_no_error(bot, caplog):
    d = bot.driver
    await d.send(ADMIN, GROUP, "/settings")
    assert "✅30秒" in d.labels(GROUP) and "✅5分" in d.labels(GROUP)
    edits = sum(request.method == "editMessageText" for request in bot.world.requests)
    with caplog.at_level(logging.ERROR):
        await d.press(ADMIN, GROUP, "✅30秒")
    assert d.popup(ADMIN) == "✅ 已保存" and not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert sum(request.method == "editMessageText" for request in bot.world.requests) == edits


async def test_settings_name_each_row_of_durations_and_no_label_wraps(bot):
    """Issue 49 point 8: the turn's and the lobby's durations were two unnamed rows, both with
    "1 分钟", and "✅ 5 分钟" wrapped on a phone."""
    d = bot.driver
    await d.send(ADMIN, GROUP, "/settings")
    markup = d.message_with(GROUP, data="cfg:turn:30").reply_markup
    assert markup is not None
    rows = [[str(button["text"]) for button in row] for row in markup["inline_keyboard"]]
    assert rows[1:7] == [
        ["⏱ 每步限时"],
        ["10秒", "20秒", "✅30秒", "45秒"],
        ["1分", "90秒", "2分"],
        ["⏳ 无人开局多久后解散"],
        ["1分", "3分", "✅5分"],
        ["10分", "30分"],
    ]
    for row in (*rows[2:4], *rows[5:7]):
        assert len(row) <= 4 and all(len(label) <= 4 for label in row), row
    edits = sum(request.method == "editMessageText" for request in bot.world.requests)
    await d.press(ADMIN, GROUP, "⏱ 每步限时")  # a row's name: nothing changes, no error popup
    assert d.popup(ADMIN) == "" and (await bot.runtime.store.chat_settings(GROUP)).turn_seconds is None
    assert sum(request.method == "editMessageText" for request in bot.world.requests) == edits
    await d.press(ADMIN, GROUP, data="cfg:lobby:60")
    assert (await bot.runtime.store.chat_settings(GROUP)).lobby_seconds == 60
    assert "✅1分" in d.labels(GROUP) and "1分" in d.labels(GROUP), "the lobby's minute, not the turn's"


def test_the_rules_name_each_multiplier_once_in_one_style():
    for language in ("zh-hans", "zh-hant", "en"):
        text = rules_text("muxi", language)
        assert not re.search(r"×(\d+)\S* ×\1", text) and "  " not in text.replace("\n   ", "\n"), text
    english = rules_text("muxi", "en")
    assert "<b>Straight flush ×8</b>\n" in english and "<b>Flush ×3</b>\n" in english
    assert "<b>Double Tiangong</b> ×2" in english and "<b>Normal</b> ×1" in english


def test_no_result_reads_plus_or_minus_zero():
    assert signed(0) == "0" and signed(400) == "+400" and signed(-400) == "−400"
    assert duration(30, "zh-hans") == "30 秒" and duration(120, "zh-hant") == "2 分鐘"
    assert duration(90, "en") == "90 s" and duration(300, "en") == "5 min"


def test_one_point_is_not_plural():
    assert hand_label("normal", 1, "en") == "1 pt Normal" and hand_label("normal", 5, "en") == "5 pts Normal"
    assert hand_label("normal", 1, "zh-hans") == "1点 普通"
    assert hand_label("normal", 1, "zh-hant") == "1點 普通"


async def test_the_first_round_goes_on_in_its_lobbys_message(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await bot.driver.send(1, GROUP, "/newgame muxi")
    lobby = bot.runtime.tables.get(GROUP).message_id
    await bot.driver.press(2, GROUP, "加入")
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "开始")
    assert bot.runtime.tables.get(GROUP).message_id == lobby
    assert "第 1 局" in bot.world.messages[(GROUP, lobby)].text


async def test_when_nobody_banks_each_asked_dm_says_how_they_answered(bot):
    d = bot.driver
    await open_and_start(bot, [1, 2])
    await d.press(1, 1, "不当庄")
    assert "你没有当庄" in newest(bot, 1).text and newest(bot, 1).buttons == []
    await bot.fire_timer()  # 2 never answers: the table closes
    for person, said in ((1, "你没有当庄"), (2, "超时，算不当庄")):
        text = newest(bot, person).text
        assert said in text and "🏁 本局已结束" in text and "轮到你了" not in text, text
        assert all(message.buttons == [] for message in bot.world.bot_messages(person))


async def test_a_last_rounds_dm_still_gets_its_end_when_the_next_round_starts_first(bot, world, monkeypatch):
    """The banker's closing DM edit is refused with a 429; the next round starts before its wait is
    over: that DM still ends with the result and no buttons (it is not dropped with the round)."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    await bot.driver.press(2, GROUP, "不补")
    prompt = newest(bot, 1)
    refused = refuse_once_per_chat(
        monkeypatch,
        world,
        lambda method, params: method.startswith("editMessage") and params.get("chat_id") == 1,
    )

    async def hurried():  # people press on without waiting for every send
        await asyncio.sleep(0.05)

    fast = Driver.in_process(world, bot.application, hurried)
    await fast.press(1, GROUP, "不补")
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    for person in (1, 2):
        await fast.press(person, GROUP, "继续下一局")
    assert bot.runtime.tables.get(GROUP).round_no == 2 and refused
    await bot.runtime.wait_idle()
    last = world.messages[(1, prompt.message_id)]
    assert last.buttons == [] and "🏁 本局 +200" in last.text, last.text


async def test_the_reminder_is_armed_for_a_third_of_the_turn_left_and_not_once_that_has_long_passed(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    runtime, live = bot.runtime, bot.runtime.tables.get(GROUP)
    (job,) = bot.application.job_queue.get_jobs_by_name(f"table {live.table_id}")
    assert runtime.turns.moment(live.table_id) == "reminder"
    due = job.job.trigger.run_date.timestamp()
    assert abs(due - (live.deadline - 10)) < 1, "a third of 30 s before the deadline"
    runtime.clock = lambda: time.time() + 25  # re-armed 5 s before the end (as by a restart then)
    runtime.turns.arm(live)
    assert runtime.turns.moment(live.table_id) == "deadline"


async def test_a_showhand_reminder_goes_to_the_one_to_bet(bot):
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    turn = bot.runtime.tables.get(GROUP).engine.turn
    other = 3 - turn
    before = len(bot.world.bot_messages(other))
    await remind(bot)
    assert "⏰ 只剩 10 秒了" in newest(bot, turn).text and turn in newest(bot, turn).notified
    assert len(bot.world.bot_messages(other)) == before and newest(bot, other).buttons == []


async def test_someone_unseated_after_the_round_still_reads_their_coins_in_the_dm(world, database):
    bot = await start_bot(world, database, start_grant=1_000)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    await bot.driver.press(2, GROUP, "不补")
    await bot.driver.press(1, GROUP, "不补")  # the banker's 7 points beat 1 point: 小红 is under 1,000
    assert 2 not in bot.runtime.tables.get(GROUP).seated()
    assert "🏁 本局 −20 · 现有 980 金币" in newest(bot, 2).text
    await stop_bot(bot)


async def test_an_escape_is_confirmed_only_at_the_price_it_was_told(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await d.press(2, GROUP, "逃跑")
    assert "输掉已下的 100" in d.popup(2)
    assert await act(bot, "下注 100") == 2  # the price changes before the second press
    await d.press(2, GROUP, "逃跑")
    assert "输掉已下的 200" in d.popup(2) and 2 in bot.runtime.tables.get(GROUP).seated(), "asked again"
    await d.press(2, GROUP, "逃跑")
    assert 2 not in bot.runtime.tables.get(GROUP).seated(), "confirmed at the price told"
