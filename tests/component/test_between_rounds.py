"""Between rounds (issue 28, point 4): the next round in one press, "再来一局 ✓ 自动准备", ready for
every next round until they leave or time out; and a running score for the table (本场输赢) on the
lobby, under the results and in the Mini App."""

from __future__ import annotations

from bot.model import callbacks
from bot.web.miniapp.view import table_view
from faketg.harness import GROUP
from tests.component.decks import SHOWHAND_ACES_WIN, stack_showhand
from tests.component.scenarios import act, live_table, newest, open_and_start

START = 10_000


async def play_out(bot) -> None:
    """Whoever's turn it is checks (or calls) until the game is over."""
    while live_table(bot).in_round:
        labels = bot.driver.labels(GROUP)
        await act(bot, next(label for label in labels if label.startswith(("过牌", "跟注"))))


async def test_auto_ready_starts_each_next_round_with_the_others_presses_only(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    assert "再来一局 ✓ 自动准备" in d.labels(GROUP)
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    assert "之后每局自动准备" in d.popup(1)
    assert "1. 阿明 ✅ 已准备 🔁" in d.table(GROUP)
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    assert d.popup(1) == "已是每局自动准备"
    await d.press(2, GROUP, "继续下一局")
    assert live_table(bot).in_round and live_table(bot).round_no == 2
    await play_out(bot)
    table = d.table(GROUP)
    assert "1. 阿明 ✅ 已准备 🔁" in table and "2. 小红 ⏳ 未准备" in table, table
    await d.press(2, GROUP, "继续下一局")
    assert live_table(bot).round_no == 3, "one press started it: 阿明 was ready already"


async def test_a_timeout_or_leaving_ends_auto_ready(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    await d.press(2, GROUP, "再来一局 ✓ 自动准备")
    assert live_table(bot).round_no == 2
    turn = live_table(bot).engine.turn
    await bot.fire_timer()  # the one to act does not: folded; auto-ready by choice no more (托管 now)
    live = live_table(bot)
    assert turn not in live.view.auto_ready and turn in live.view.autopilot
    assert 3 - turn in live.view.auto_ready
    assert live.round_no == 3, "both ready again: one by choice, one on autopilot"


async def test_leaving_ends_auto_ready(bot):
    d = bot.driver
    await open_and_start(bot, [1, 2, 3], "showhand")
    await play_out(bot)
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    assert live_table(bot).view.auto_ready == [1]
    await d.press(1, GROUP, "离桌")
    assert live_table(bot).view.auto_ready == [] and live_table(bot).engine.core.seat_of(1) is None


async def test_the_running_score_on_the_lobby_the_results_and_the_mini_app(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    table = d.table(GROUP)
    assert "1. 阿明 ⏳ 未准备  本场 −100" in table and "2. 小红 ⏳ 未准备  本场 +100" in table, table
    assert "本场输赢" not in table, "after one round the results say it already"
    for person in (1, 2):
        await d.press(person, GROUP, "继续下一局")
    await play_out(bot)
    live = live_table(bot)
    score = {person: await bot.balance(person) - START for person in (1, 2)}
    assert live.view.score == score
    best, worst = sorted(score, key=lambda person: -score[person])
    names = {1: "阿明", 2: "小红"}

    def signed(net: int) -> str:
        return f"+{net:,}" if net > 0 else f"−{-net:,}" if net < 0 else "0"

    line = f"📊 本场输赢：{names[best]} {signed(score[best])}、{names[worst]} {signed(score[worst])}"
    assert line in d.table(GROUP), d.table(GROUP)
    seats = {seat["person"]: seat for seat in table_view(live, 1, "zh-hans", 0.0)["seats"]}
    assert seats[1]["score"] == score[1] and seats[2]["score"] == score[2]
    actions = [action["action"] for action in table_view(live, 1, "zh-hans", 0.0)["actions"]]
    assert "autoready" in actions


async def test_auto_ready_is_not_taken_from_a_dm_nor_by_someone_not_seated(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    live = live_table(bot)
    data = callbacks.encode("showhand", live.table_id, live.round_no, callbacks.AUTO_READY)
    await d.press_data(1, 1, newest(bot, 1).message_id, data)  # forged into a DM
    assert d.popup(1) == "请在群里的牌桌上按这个按钮"
    await d.press_data(3, GROUP, live.message_id, data)  # 阿强 sits nowhere
    assert live_table(bot).view.auto_ready == [] and d.popup(3)


async def test_a_lobby_of_auto_ready_people_starts_when_the_one_not_ready_leaves(bot):
    d = bot.driver
    await open_and_start(bot, [1, 2, 3], "showhand")
    await play_out(bot)
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    await d.press(2, GROUP, "再来一局 ✓ 自动准备")
    await d.press(3, GROUP, "离桌")  # everyone left is ready: the round starts, nobody presses again
    assert live_table(bot).in_round and live_table(bot).round_no == 2


async def test_the_move_that_ends_a_game_is_not_answered_with_the_next_game_s_cards(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    for person in (1, 2):
        await d.press(person, GROUP, "再来一局 ✓ 自动准备")
    assert live_table(bot).round_no == 2
    while live_table(bot).round_no == 2:  # the last move ends it, and game 3 starts at once
        turn = live_table(bot).engine.turn
        seen = len(bot.world.popups.get(turn, []))
        await act(bot, next(b for b in d.labels(GROUP) if b.startswith(("过牌", "跟注"))))
    answers = [popup.text for popup in bot.world.popups.get(turn, [])[seen:]]
    assert live_table(bot).round_no == 3 and not any(answers), f"no toast of game 3's cards: {answers}"
