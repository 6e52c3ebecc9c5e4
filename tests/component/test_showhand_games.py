"""Showhand played end to end through commands and buttons, as people see it (issue 6)."""

from bot.display.views.common import MINI_APP
from faketg.harness import GROUP, escape, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack_showhand
from tests.component.scenarios import act, live_table, open_and_start


async def test_two_people_check_to_the_showdown(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    table = d.table(GROUP)
    assert "梭哈 · 第 1 局 · 底注 100 · 每人最多 10,000" in table
    assert "底池 200" in table and "上限 2,500" in table
    assert "1. 阿明  🂠 9♥️  已下 100" in table and "2. 小红  🂠 A♥️  已下 100 👈" in table
    assert "小红 先说话（明牌最大）" in table
    assert d.labels(GROUP) == [
        "🂠 看我的牌",
        "过牌",
        "下注 100",
        "下注 200",
        "下注 2,400",
        "弃牌",
        "🏃 逃跑（输掉已下的 100）",
    ]
    assert "底牌：8♠︎" in d.texts(1)[-1] and "AD" not in table
    await d.press(1, GROUP, "看我的牌")
    assert "底牌：8♠︎" in d.popup(1)
    for _ in range(8):
        await act(bot, "过牌")
    result = d.table(GROUP)
    assert "第 1 局 · 结算" in result and "一对 A" in result and "对子 大过 散牌" in result
    assert "底池 200 归 小红" in result and "底牌 8♠︎ · 9♥️" in result
    assert "🏆 小红  底牌 A♦️ · A♥️ 8♦️ 9♣︎ J♥️  一对 A  +100" in result
    assert "阿明  底牌 8♠︎ · 9♥️ 10♦️ Q♣︎ K♠︎  散牌 K 大  −100" in result
    assert (await bot.balance(1), await bot.balance(2)) == (9_900, 10_100)
    assert bot.world.open_queries == {}


async def test_all_in_after_card_4_deals_the_rest_without_betting(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    assert "梭哈" not in " ".join(d.labels(GROUP))
    await d.press_data(2, GROUP, *_forged(bot, "allin"))
    assert "第四张牌发出后才能梭哈" in d.popup(2)
    for _ in range(4):  # cards 2 and 3: both check
        await act(bot, "过牌")
    assert "梭哈 9,900" in d.labels(GROUP)
    await act(bot, "梭哈")
    await act(bot, "跟注 9,900")
    result = d.table(GROUP)
    assert "结算" in result and "+10,000" in result and "−10,000" in result
    assert (await bot.balance(1), await bot.balance(2)) == (0, 20_000)
    assert "阿明 金币不足 1,000" in result, "unseated under 1,000"


def _forged(bot, action, arg=None):
    table = live_table(bot)
    data = f"s:{table.table_id}:{table.round_no}:{action}" + (f":{arg}" if arg is not None else "")
    return table.message_id, data


async def test_a_raise_past_the_cap_is_refused(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await act(bot, "下注 100")
    await d.press_data(1, GROUP, *_forged(bot, "raise", 99_900))
    assert "超过本轮最高投注额" in d.popup(1)
    await d.press_data(1, GROUP, *_forged(bot, "raise", 250))
    assert "底注的整数倍" in d.popup(1)
    await act(bot, "加注 2,400")  # a raise to the cap: 2,400 more on their 100
    assert "加注" not in " ".join(d.labels(GROUP)), "the cap is reached: no more raises"
    await act(bot, "跟注 2,300")
    assert "底池 5,000" in d.table(GROUP)


async def test_four_people_a_fold_out_and_a_timeout(bot):
    d = bot.driver
    hands = {1: "8S 9H", 2: "AD AH", 3: "8D 10C", 4: "9D QH"}
    stack_showhand(bot, [1, 2, 3, 4], 1, hands)
    await open_and_start(bot, [1, 2, 3, 4], "showhand")
    assert live_table(bot).engine.turn == 2
    await act(bot, "下注 200")
    await bot.fire_timer()  # 3 does not answer: folds
    table = d.table(GROUP)
    assert "3. 阿强🤖  🂠 10♣︎ · ⌛ 超时弃牌  已下 100" in table, "a folded seat keeps its face-up card"
    assert "🗣 刚才：阿强🤖 超时弃牌" in table, "(and 阿强 is on autopilot, 托管, from now on)"
    await act(bot, "弃牌")  # 4
    await act(bot, "弃牌")  # 1
    result = d.table(GROUP)
    assert "其他人都弃牌了" in result and "🏆 小红  A♥️" in result and "A♦️" not in result
    assert [await bot.balance(p) for p in (1, 2, 3, 4)] == [9_900, 10_300, 9_900, 9_900]


async def test_an_escape_gives_the_pot_to_the_lead_or_the_best_face_up(bot):
    d = bot.driver
    hands = {1: "8S 9H", 2: "AD AH", 3: "8D 10C"}
    stack_showhand(bot, [1, 2, 3], 1, hands)
    await open_and_start(bot, [1, 2, 3], "showhand")
    await escape(d, 3)  # not the lead: the lead (2) takes the pot
    assert "阿强 逃跑" in d.table(GROUP) and "有人逃跑" in d.table(GROUP)
    assert [await bot.balance(p) for p in (1, 2, 3)] == [9_900, 10_200, 9_900]
    stack_showhand(bot, [1, 2], 2, {1: "8S AS", 2: "AD 9H"})
    await d.press(1, GROUP, "继续下一局")
    await d.press(2, GROUP, "继续下一局")
    assert live_table(bot).engine.lead == 1
    await escape(d, 1)  # the lead escapes: the best face-up cards left (2) take the pot
    assert [await bot.balance(p) for p in (1, 2)] == [9_800, 10_300]


async def test_a_restart_in_the_middle_of_a_betting_round_carries_on(world, database):
    first = await start_bot(world, database)
    stack_showhand(first, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(first, [1, 2], "showhand")
    await act(first, "过牌")
    await act(first, "过牌")
    await act(first, "下注 100")
    await stop_bot(first)

    second = await start_bot(world, database)
    d = second.driver
    assert "跟注 100" in d.labels(GROUP)
    await d.press(2, GROUP, "跟注 100")
    assert "还没轮到你" in d.popup(2)
    turn = live_table(second).engine.turn
    await d.press(turn, GROUP, "跟注 100")
    for _ in range(4):
        await act(second, "过牌")
    assert "结算" in d.table(GROUP)
    assert (await second.balance(1), await second.balance(2)) == (9_800, 10_200)
    report = await second.runtime.store.check()
    assert report.ok, report
    await stop_bot(second)


async def test_stale_and_foreign_presses(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2, 3], 1, {**SHOWHAND_ACES_WIN, 3: "QD KC"})
    await open_and_start(bot, [1, 2, 3], "showhand")
    message_id, stale = d.button_data(GROUP, "过牌")
    await d.press(5, GROUP, "过牌")
    assert "你不在这一桌" in d.popup(5)
    await d.press(1, GROUP, "过牌")
    assert "还没轮到你" in d.popup(1)
    await escape(d, 3)
    stack_showhand(bot, [1, 2], 2, SHOWHAND_ACES_WIN)
    await d.press(1, GROUP, "继续下一局")
    await d.press(2, GROUP, "继续下一局")
    await d.press_data(1, GROUP, message_id, stale)
    assert "上一局的按钮" in d.popup(1)
    assert bot.world.open_queries == {}


async def test_a_stale_call_button_does_not_call_a_later_raise(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2, 3], 1, {**SHOWHAND_ACES_WIN, 3: "QD KC 10H 9S 8H"})
    await open_and_start(bot, [1, 2, 3], "showhand")
    for _ in range(3):  # card 2: everyone checks
        await act(bot, "过牌")
    await act(bot, "下注 100")
    message_id, stale_call = d.button_data(GROUP, "跟注 100")  # what the next one sees now
    second = await act(bot, "加注")
    await act(bot, "跟注")
    await act(bot, "加注")  # the first raises again: the second faces more than before
    assert live_table(bot).engine.turn == second
    before = await bot.balance(second)
    await d.press_data(second, GROUP, message_id, stale_call)
    assert "下注已变" in d.popup(second)
    assert await bot.balance(second) == before, "the stale call moved no coin"


def _rows(d):
    """The group table's buttons as shown: labels, row by row."""
    rows = d.table_message(GROUP).reply_markup["inline_keyboard"]
    return [[button["text"] for button in row] for row in rows]


async def test_pot_buttons_offer_a_half_and_a_whole_pot_and_put_exactly_that_in(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await act(bot, "下注 200")  # card 2: totals 300 each, pot 600
    await act(bot, "跟注 200")
    assert "底池 600" in d.table(GROUP) and "上限 5,000" in d.table(GROUP)
    rows = _rows(d)
    assert rows[1:4] == [
        ["过牌", "下注 100", "下注 200"],
        ["½池 300", "1池 600", "下注 4,700"],
        ["弃牌"],
    ], "½ pot and 1 pot by amount, between 2B and the cap; rows of at most three"
    assert all(len(row) <= 3 for row in rows)
    first = await act(bot, "½池 300")
    table = d.table(GROUP)
    assert "底池 900" in table and "已下 600" in table
    assert live_table(bot).engine.player(first).total == 600
    # The other (300 in) now faces 600 in a pot of 900: ½ pot (450, rounded to 500) and 1 pot raise
    # above it, to 1,100 and 1,500; each raise names what it puts in.
    assert d.labels(GROUP)[1:8] == [
        "跟注 300",
        "加注 400",
        "加注 500",
        "½池 加注 800",
        "1池 加注 1,200",
        "加注 4,700",
        "弃牌",
    ]
    second = await act(bot, "1池 加注 1,200")
    assert live_table(bot).engine.player(second).total == 1_500
    assert "底池 2,100" in d.table(GROUP)


async def test_a_pot_button_above_the_cap_is_never_offered(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    assert "池" not in " ".join(d.labels(GROUP)[1:-1]).replace("底池", ""), (
        "pot 200: ½ and 1 pot are B and 2B"
    )
    await act(bot, "下注 2,400")  # card 2: to the cap, 2,500 each, pot 5,000
    await act(bot, "跟注 2,400")
    # Card 3, cap 5,000: ½ pot is the cap button's own 2,500; 1 pot (7,500) is past the cap.
    assert d.labels(GROUP)[1:6] == ["过牌", "下注 100", "下注 200", "下注 2,500", "弃牌"]
    await act(bot, "过牌")
    await act(bot, "过牌")
    # Card 4, cap M = 10,000 (left to all-in): ½ pot 2,500 and 1 pot 5,000, both under it.
    labels = d.labels(GROUP)
    assert labels[1:8] == ["过牌", "下注 100", "下注 200", "½池 2,500", "1池 5,000", "梭哈 7,500", "弃牌"]
    await act(bot, "1池 5,000")
    # Facing 7,500 of a 10,000 stake in a pot of 10,000: ½ pot would raise to 12,500, past M.
    labels = d.labels(GROUP)
    assert labels[1:6] == ["跟注 5,000", "加注 5,100", "加注 5,200", "梭哈 7,500", "弃牌"]


async def test_other_amount_in_the_dm_opens_the_mini_app_when_it_is_served(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    MINI_APP.set("paiju_test_bot", "table")
    try:
        await open_and_start(bot, [1, 2], "showhand")
        await act(bot, "下注 200")  # a new turn, so 1's DM asks again with the buttons
        table = live_table(bot).table_id
        prompt = d.message_with(1, label="其他金额…")
        urls = [b.get("url") for row in prompt.reply_markup["inline_keyboard"] for b in row]
        assert f"https://t.me/paiju_test_bot/table?startapp=t{table}" in urls
        assert "其他金额…" not in d.labels(GROUP), "the group's table has its own 打开牌桌 row"
    finally:
        MINI_APP.set(None, None)  # no other test's table gets the button


async def test_the_answer_to_a_move_says_what_it_was_then_the_cards(bot):
    """Issue 49, point 8: the toast after a press confirms the move (as the DM records it), then
    shows the hand as it is now; it no longer only repeats the cards."""
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await d.press(2, GROUP, "下注 100")
    said = d.popup(2).splitlines()
    assert said[0] == "你下注 100", said
    assert said[1].startswith("底牌：A♦") and said[2].startswith("明牌：A♥"), said
    await d.press(1, GROUP, "跟注 100")
    assert d.popup(1).splitlines()[0] == "你跟注 100", d.popup(1)
