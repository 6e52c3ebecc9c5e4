"""A breath and a reveal (issue 49, point 4): a pause after a round's results before auto-ready
(再来一局 ✓ 自动准备, 托管) starts the next round, a per-chat setting in /settings; an all-in
everyone answered dealt on the table one card at a time, and in the Mini App; the last round's
results kept in the Mini App until the next round's first move.

The harness's JobQueue does not run: a test reads when a moment is armed and fires it by hand (as
the turn clock's tests do), with the runtime's clock moved on where the moment reads it.
"""

from __future__ import annotations

import re
import time

import pytest

from bot.send.messages import TableKey
from bot.tables.reveals import REVEAL_PATIENCE
from bot.web.miniapp.view import table_view, viewer_of
from faketg.harness import ADMIN, GROUP, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack_showhand
from tests.component.scenarios import act, empty_the_table_budget, live_table, open_and_start

PAUSE = 5
PAUSE_LINE = re.compile(r"☕ 休息片刻，(\d\d:\d\d:\d\d) 起自动准备")


@pytest.fixture
async def pausing(world, database):
    """The bot with the operator's default pause (5 s) and reveal (1 s)."""
    running = await start_bot(world, database, pause_seconds=PAUSE, reveal_seconds=1.0)
    yield running
    await stop_bot(running)


async def play_out(bot) -> None:
    """Whoever's turn it is checks (or calls) until the game is over (with no pause, auto-ready may
    deal the next one within the last move: that one is not played)."""
    round_no = live_table(bot).round_no
    while live_table(bot).in_round and live_table(bot).round_no == round_no:
        labels = bot.driver.labels(GROUP)
        await act(bot, next(label for label in labels if label.startswith(("过牌", "跟注"))))


async def both_on_auto_ready_in_round_two(bot) -> None:
    """A showhand game played out; both choose 再来一局 ✓ 自动准备, which readies them at once (their
    own presses: no pause), and round 2 is dealt."""
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    await d.press(2, GROUP, "再来一局 ✓ 自动准备")
    assert live_table(bot).in_round and live_table(bot).round_no == 2, "their own presses wait for nothing"


async def end_the_pause(bot) -> None:
    """The pause's moment comes (the runtime's clock past its end)."""
    live = live_table(bot)
    assert bot.runtime.breath.moments.due_in(live.table_id) is not None, "its end is armed"
    bot.runtime.clock = lambda: time.time() + PAUSE + 0.1
    await bot.runtime.breath.moments.fire(GROUP, live.table_id)
    await bot.runtime.wait_idle()


async def test_auto_ready_waits_for_the_pause_and_then_starts_the_next_round(pausing):
    bot, d = pausing, pausing.driver
    await both_on_auto_ready_in_round_two(bot)
    await play_out(bot)
    live = live_table(bot)
    assert not live.in_round and live.round_no == 2, "the results stay: no round 3 yet"
    assert not any(seat.ready for seat in live.engine.core.seats), "nobody readied during the pause"
    due = bot.runtime.breath.moments.due_in(live.table_id)
    assert due is not None and PAUSE - 1 < due <= PAUSE, due
    shown = PAUSE_LINE.search(d.table(GROUP))
    assert shown is not None, d.table(GROUP)
    assert shown.group(1) == bot.runtime.time_text(live.view.ended_at + PAUSE)
    assert "第 2 局 · 结算" in d.table(GROUP) and "👈" not in d.table(GROUP), "no turn runs"
    view = table_view(live, 1, "zh-hans", 0.0)
    assert view["pause_until"] == live.view.ended_at + PAUSE and view["results"]["round"] == 2, "the app too"
    assert view["strings"]["pause"] == "☕ 休息片刻，{n} 秒后自动准备"
    assert bot.runtime.turns.moment(live.table_id) == "deadline", "only the lobby's own expiry"

    await bot.runtime.breath.moments.fire(GROUP, live.table_id)  # too early (a clock ahead): nothing
    await bot.runtime.wait_idle()
    assert not live_table(bot).in_round and bot.runtime.breath.moments.due_in(live.table_id) is not None

    await end_the_pause(bot)
    live = live_table(bot)
    assert live.in_round and live.round_no == 3, "both readied by the bot: round 3 is dealt"
    assert live.deadline is not None and live.deadline > bot.runtime.clock(), "its clock starts now"
    assert not PAUSE_LINE.search(d.table(GROUP))
    assert table_view(live, 1, "zh-hans", 0.0)["pause_until"] is None
    assert table_view(live, 1, "zh-hans", 0.0)["results"]["round"] == 2, "kept through the deal"


async def test_someone_who_presses_themselves_waits_only_for_those_the_bot_readies(pausing):
    bot, d = pausing, pausing.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    assert bot.runtime.breath.moments.due_in(live_table(bot).table_id) is None, "nobody the bot readies"
    assert not PAUSE_LINE.search(d.table(GROUP))
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    await d.press(2, GROUP, "继续下一局")
    assert live_table(bot).in_round and live_table(bot).round_no == 2, "two presses: dealt at once"
    await play_out(bot)
    await d.press(2, GROUP, "继续下一局")  # during the pause
    live = live_table(bot)
    assert live.engine.core.seat_of(2).ready and not live.engine.core.seat_of(1).ready
    assert not live.in_round, "阿明 is readied by the bot, at the pause's end"
    await end_the_pause(bot)
    assert live_table(bot).in_round and live_table(bot).round_no == 3


async def test_a_pause_of_none_chosen_in_settings_starts_the_next_round_at_once(pausing):
    bot, d = pausing, pausing.driver
    await d.send(ADMIN, GROUP, "/settings")
    settings = d.message_with(GROUP, data="cfg:pause:0")
    assert "☕ 局间休息：5 秒" in settings.text, settings.text
    rows = [[str(button["text"]) for button in row] for row in settings.reply_markup["inline_keyboard"]]
    assert ["☕ 局间休息（结算后多久自动开局）"] in rows and ["无", "3秒", "✅5秒", "10秒"] in rows, rows
    await d.press(ADMIN, GROUP, data="cfg:pause:0")
    assert d.popup(ADMIN) == "✅ 已保存"
    assert (await bot.runtime.store.chat_settings(GROUP)).pause_seconds == 0
    assert "☕ 局间休息：无" in d.message_with(GROUP, data="cfg:pause:0").text
    assert "✅无" in d.labels(GROUP)
    await d.press(2, GROUP, data="cfg:pause:10")
    assert d.popup(2) == "只有群管理员可以更改设置", "only admins choose it"

    await both_on_auto_ready_in_round_two(bot)
    await play_out(bot)
    live = live_table(bot)
    assert live.in_round and live.round_no == 3, "no pause: readied and dealt at once"
    assert bot.runtime.breath.moments.due_in(live.table_id) is None


async def test_a_pause_under_way_when_the_bot_restarts_still_ends_in_the_next_round(world, database):
    bot = await start_bot(world, database, pause_seconds=PAUSE)
    await both_on_auto_ready_in_round_two(bot)
    await play_out(bot)
    ended_at = live_table(bot).view.ended_at
    assert ended_at and not live_table(bot).in_round
    await stop_bot(bot)

    bot = await start_bot(world, database, pause_seconds=PAUSE)
    try:
        await bot.runtime.wait_idle()
        live = live_table(bot)
        assert live.view.ended_at == ended_at, "saved with the round's end"
        due = bot.runtime.breath.moments.due_in(live.table_id)
        assert due is not None and 0 < due <= PAUSE, "its end armed again from what was saved"
        assert not live.in_round
        await end_the_pause(bot)
        assert live_table(bot).in_round and live_table(bot).round_no == 3
    finally:
        await stop_bot(bot)


async def test_a_bot_restarted_after_the_pause_readies_them_at_once(world, database):
    bot = await start_bot(world, database, pause_seconds=PAUSE)
    await both_on_auto_ready_in_round_two(bot)
    await play_out(bot)
    await stop_bot(bot)

    bot = await start_bot(world, database, pause_seconds=PAUSE)
    try:
        bot.runtime.clock = lambda: time.time() + PAUSE + 1  # (it was down longer than the pause)
        await bot.runtime.restore()
        await bot.runtime.wait_idle()
        assert live_table(bot).in_round and live_table(bot).round_no == 3, "not left hanging"
    finally:
        await stop_bot(bot)


# -- the reveal -------------------------------------------------------------------------------------
async def all_in_answered(bot) -> int:
    """Cards 2 and 3 checked, 小红 goes all-in after card 4 and 阿明 calls: the engine deals card 5
    and shows the hands down at once. The table message's id."""
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    for _ in range(4):
        await act(bot, "过牌")
    await act(bot, "梭哈")
    message_id = live_table(bot).message_id
    await act(bot, "跟注 9,900")
    return message_id


def edits_of(bot, message_id: int, since: int) -> list[str]:
    return [
        str(request.params.get("text"))
        for request in bot.world.requests[since:]
        if request.method == "editMessageText" and request.params.get("message_id") == message_id
    ]


async def next_card(bot) -> None:
    live = live_table(bot)
    due = bot.runtime.reveals.moments.due_in(live.table_id)
    assert due is not None and due <= 1.0, "the next card is armed within a second"
    await bot.runtime.reveals.step(GROUP, live.table_id)
    await bot.runtime.wait_idle()


async def test_an_all_in_everyone_answered_is_dealt_on_the_table_card_by_card(pausing):
    bot, d = pausing, pausing.driver
    sent = len(bot.world.requests)
    message_id = await all_in_answered(bot)
    table = d.table(GROUP)
    assert "🔥 全员梭哈，开牌中…" in table and "结算" not in table, table
    assert "1. 阿明  🂠 9♥️ 10♦️ Q♣︎  已下 10,000" in table, "four cards each, the face-down one down"
    assert "2. 小红  🂠 A♥️ 8♦️ 9♣︎  已下 10,000" in table
    assert d.labels(GROUP) == [], "nothing to press while the cards come"
    dm = d.texts(2)[-1]
    assert "+10,000" not in dm and "开牌中" in dm, "nobody's DM tells the result before the table shows it"
    assert "明牌：A♥️ 8♦️ 9♣︎" in dm and d.labels(1) == d.labels(2) == [], "nor offers a move"
    assert (await bot.balance(1), await bot.balance(2)) == (0, 20_000), "the engine settled it already"

    await next_card(bot)
    table = d.table(GROUP)
    assert "1. 阿明  🂠 9♥️ 10♦️ Q♣︎ K♠︎  已下 10,000" in table and "A♦️" not in table, table
    assert "2. 小红  🂠 A♥️ 8♦️ 9♣︎ J♥️  已下 10,000" in table
    assert "明牌：A♥️ 8♦️ 9♣︎ J♥️" in d.texts(2)[-1], "her DM follows the table"

    await next_card(bot)
    table = d.table(GROUP)
    assert "第 1 局 · 结算" in table and "🏆 小红  底牌 A♦️ · A♥️ 8♦️ 9♣︎ J♥️  一对 A  +10,000" in table
    assert bot.runtime.reveals.moments.due_in(live_table(bot).table_id) is None, "the reveal is over"
    assert "+10,000" in d.texts(2)[-1] and "−10,000" in d.texts(1)[-1], "the DMs tell it now"
    steps = edits_of(bot, message_id, sent)
    stages = [text for text in steps if "开牌中" in text]
    assert len(stages) >= 2 and "K♠︎" not in stages[0] and "K♠︎" in stages[-1], steps
    assert "结算" in steps[-1], "the last edit is the results"


async def test_the_mini_app_reveals_the_cards_one_after_another_and_then_the_results(pausing):
    bot = pausing
    await all_in_answered(bot)
    live = live_table(bot)
    view = table_view(live, 1, "zh-hans", bot.runtime.clock())
    assert view["phase"] == "reveal" and view["results"] is None and view["actions"] == []
    seats = {seat["person"]: seat for seat in view["seats"]}
    assert seats[1]["cards"] == ["8S", "9H", "10D", "QC"] and seats[1]["hole"], "their own face-down card"
    assert seats[2]["cards"] == ["?", "AH", "8D", "9C"], "another's still down"
    assert live.engine.core.seat_of(1) is None and viewer_of(live, 1) == 1, "unseated: still his own"
    assert seats[1]["me"] and viewer_of(live, 3) == 0, "阿强 watches as anyone does"
    assert not any("score" in seat or seat["balance"] for seat in view["seats"]), "nothing tells who won"
    assert view["strings"]["revealing"] == "🔥 全员梭哈，开牌中…"
    await next_card(bot)
    seats = {seat["person"]: seat for seat in table_view(live, 2, "zh-hans", 0.0)["seats"]}
    assert seats[1]["cards"] == ["?", "9H", "10D", "QC", "KS"] and seats[2]["cards"][0] == "AD"
    await next_card(bot)
    view = table_view(live, 1, "zh-hans", 0.0)
    assert view["phase"] == "lobby" and view["results"]["round"] == 1
    assert [line["cards"] for line in view["results"]["lines"]][1] == ["AD", "AH", "8D", "9C", "JH"]


async def test_a_reveal_cut_by_a_restart_shows_the_results_at_once(world, database):
    bot = await start_bot(world, database, reveal_seconds=1.0)
    await all_in_answered(bot)
    assert "开牌中" in bot.driver.table(GROUP)
    await stop_bot(bot)
    bot = await start_bot(world, database, reveal_seconds=1.0)
    try:
        await bot.runtime.wait_idle()
        table = bot.driver.table(GROUP)
        assert "第 1 局 · 结算" in table and "开牌中" not in table, table
        assert "+10,000" in bot.driver.texts(2)[-1]
    finally:
        await stop_bot(bot)


async def test_the_pause_counts_from_the_reveal_s_end(pausing):
    """Three play, all on auto-ready; 阿强 folds, 小红 goes all-in and the other calls it: the bot
    readies those left once the cards are shown and the pause after them is over."""
    bot, d = pausing, pausing.driver
    stack_showhand(bot, [1, 2, 3], 1, {**SHOWHAND_ACES_WIN, 3: "8H 9D QS KD 10C"})
    await open_and_start(bot, [1, 2, 3], "showhand")
    await play_out(bot)
    await d.press(2, GROUP, "再来一局 ✓ 自动准备")
    await d.press(3, GROUP, "再来一局 ✓ 自动准备")
    await d.press(1, GROUP, "再来一局 ✓ 自动准备")
    live = live_table(bot)
    assert live.in_round and live.round_no == 2
    while live.in_round:
        labels = d.labels(GROUP)
        if live.engine.turn == 3:
            await act(bot, "弃牌")
        elif live.engine.turn == 2 and any(label.startswith("梭哈") for label in labels):
            await act(bot, "梭哈")
        else:
            await act(bot, next(label for label in labels if label.startswith(("过牌", "跟注"))))
    assert "开牌中" in d.table(GROUP)
    assert bot.runtime.breath.moments.due_in(live.table_id) is None, "no pause while the cards come"
    assert not any(seat.ready for seat in live.engine.core.seats)
    answered = live.view.ended_at
    await next_card(bot)
    bot.runtime.clock = lambda: time.time() + 2  # (the results come two seconds after the answer)
    await next_card(bot)
    assert "第 2 局 · 结算" in d.table(GROUP) and live.view.ended_at >= answered + 2
    due = bot.runtime.breath.moments.due_in(live.table_id)
    assert due is not None and due > PAUSE - 1, "a whole pause from the results"
    assert PAUSE_LINE.search(d.table(GROUP))
    bot.runtime.clock = lambda: time.time() + 2 + PAUSE + 0.1
    await bot.runtime.breath.moments.fire(GROUP, live.table_id)
    await bot.runtime.wait_idle()
    live = live_table(bot)
    assert live.in_round and live.round_no == 3 and len(live.seated()) == 2, "the all-in's loser is gone"


# -- 上局结果 in the Mini App -------------------------------------------------------------------------
async def test_the_last_results_stay_in_the_mini_app_until_the_next_round_s_first_move(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    live = live_table(bot)
    assert table_view(live, 1, "zh-hans", 0.0)["results"] is None, "no round ended yet"
    await play_out(bot)
    assert table_view(live, 1, "zh-hans", 0.0)["results"]["round"] == 1
    for person in (1, 2):
        await d.press(person, GROUP, "继续下一局")
    assert live.in_round and live.round_no == 2
    for viewer in (1, 2, 0):
        results = table_view(live, viewer, "zh-hans", 0.0)["results"]
        assert results is not None and results["round"] == 1, "kept through the deal"
    await act(bot, "过牌")
    assert table_view(live, 1, "zh-hans", 0.0)["results"] is None, "the first move: gone"


async def test_each_card_waits_for_the_group_s_budget_and_the_end_comes_whatever_it_is(world, database):
    """A card whose edit is still queued (the group's table share is spent) is not followed by the
    next one, which would coalesce it away; by ``REVEAL_PATIENCE`` the results are wanted anyway."""
    bot = await start_bot(world, database, reveal_seconds=1.0)
    try:
        await all_in_answered(bot)
        live = live_table(bot)
        assert live.reveal is not None and live.reveal.shown == 4
        empty_the_table_budget(bot, seconds=3)
        await bot.runtime.reveals.step(GROUP, live.table_id)  # card 5: its edit waits for the budget
        assert live.reveal.shown == 5 and bot.runtime.presenter.sender.pending(GROUP)
        await bot.runtime.reveals.step(GROUP, live.table_id)
        assert live.reveal.shown == 5, "card 5 is not shown yet: the show-down waits for it"
        due = bot.runtime.reveals.moments.due_in(live.table_id)
        assert due is not None and due <= 0.5, "looked at again soon"
        bot.runtime.clock = lambda: time.time() + REVEAL_PATIENCE
        await bot.runtime.reveals.step(GROUP, live.table_id)
        assert live.reveal is None and bot.runtime.reveals.moments.due_in(live.table_id) is None
        assert "结算" in bot.runtime.presenter.sender.waiting(GROUP, TableKey(live.table_id)).payload.text
    finally:
        await bot.runtime.presenter.sender.stop()
        await stop_bot(bot)
