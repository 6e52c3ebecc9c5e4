"""托管 (issue 28, point 3): someone a deadline acted for is on autopilot. Their later turns are
played at once with what the deadline would do (RULES: a showhand timeout folds; muxi: stands, or
passes on the bank), except that in showhand autopilot checks when checking is free (issue 49,
point 3: nobody bet this betting round), told as 托管过牌, and folds otherwise, told as 托管弃牌;
they are ready for each next round, and the table and the Mini App mark them 🤖. "我回来了" in
their DM, or any press of theirs, ends it; two whole rounds on autopilot and they get up at the
round's end."""

from __future__ import annotations

import time

from bot.model.live_table import AUTOPILOT_MARK
from bot.tables.turn_clock import AUTOPILOT_SECONDS
from bot.web.miniapp.view import table_view
from faketg.harness import ADMIN, GROUP, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.scenarios import act, labels, live_table, newest, open_and_start

BACK = "🙋 我回来了"
THREE = {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH", 3: "KD QH JC 10S 9D"}


def armed_in(bot) -> float:
    """Seconds until the table's clock fires (the harness's clock runs only when a test fires it)."""
    live = live_table(bot)
    job = bot.runtime.turns.jobs.scheduler.get_job(f"table {live.table_id}")
    assert job is not None, "the table's clock is armed"
    return job.trigger.run_date.timestamp() - time.time()


async def played_at_once(bot, person: int) -> None:
    """``person``'s turn is armed to be played within ``AUTOPILOT_SECONDS``, with nothing asked of
    them; then it is (the test fires the clock)."""
    assert armed_in(bot) <= AUTOPILOT_SECONDS + 0.1, "their turn is not waited for"
    assert labels(newest(bot, person)) == [BACK], "and they are asked nothing"
    await bot.fire_timer()


async def start_showhand_with_a_timeout(bot) -> int:
    """A two-person showhand game in which the first to act lets the deadline fold them."""
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    idle = live_table(bot).engine.turn
    await bot.fire_timer()
    assert not live_table(bot).in_round, "the fold ended the game"
    return idle


async def test_after_a_timeout_their_turns_are_played_at_once_and_they_get_up_after_two_rounds(bot):
    d = bot.driver
    idle = await start_showhand_with_a_timeout(bot)
    other = 3 - idle
    live = live_table(bot)
    assert idle in live.view.autopilot and live.engine.core.seat_of(idle).ready, "ready for the next"
    name = {1: "阿明", 2: "小红"}[idle]
    assert f"{name}{AUTOPILOT_MARK}" in d.table(GROUP)
    dm = newest(bot, idle)
    assert "🤖 托管中" in dm.text and labels(dm) == [BACK]
    seat = next(seat for seat in table_view(live, idle, "zh-hans", 0.0)["seats"] if seat["person"] == idle)
    assert seat["autopilot"] is True
    for game in (2, 3):
        await d.press(other, GROUP, "继续下一局")
        assert live_table(bot).round_no == game and live_table(bot).in_round
        while live_table(bot).in_round:
            if live_table(bot).engine.turn == idle:
                await played_at_once(bot, idle)
            else:
                await act(bot, next(b for b in d.labels(GROUP) if b.startswith(("过牌", "跟注"))))
        # Nobody bet: they checked through to the show-down (before issue 49 autopilot folded).
        table = d.table(GROUP)
        assert "托管弃牌" not in table and "超时弃牌" not in table and "A♦️ · A♥️" in table, table
    table = d.table(GROUP)
    assert f"🤖 {name} 托管了两局，已离桌" in table, table
    assert live_table(bot).engine.core.seat_of(idle) is None and idle not in live_table(bot).view.autopilot
    for message in bot.world.bot_messages(idle):  # (issue 49 point 8: no DM says so once they are up)
        assert "托管中" not in message.text and BACK not in labels(message), message.text


async def next_game_at_their_turn(bot, idle: int) -> None:
    """The next game, up to the turn of ``idle`` (on autopilot), the other checking."""
    d = bot.driver
    await d.press(3 - idle, GROUP, "继续下一局")
    assert live_table(bot).in_round and idle in live_table(bot).view.autopilot
    while live_table(bot).engine.turn != idle:
        await act(bot, "过牌")


async def test_in_showhand_autopilot_checks_when_nobody_bet(bot):
    d = bot.driver
    idle = await start_showhand_with_a_timeout(bot)
    assert "超时弃牌" in d.table(GROUP), "the timeout itself still folds (RULES.md 2.4)"
    await next_game_at_their_turn(bot, idle)
    assert "过牌" in d.labels(GROUP), "checking is free"
    await played_at_once(bot, idle)
    live = live_table(bot)
    assert live.in_round and not live.engine.player(idle).folded, "they are still in the game"
    assert live.engine.turn == 3 - idle, "and the betting goes on"
    table = d.table(GROUP)
    assert "托管过牌" in table and "托管弃牌" not in table, table
    assert [move.move for move in live.view.moves if move.person == idle][-1:] == ["check"]
    feed = table_view(live, 3 - idle, "zh-hans", 0.0)["feed"]
    assert any("托管过牌" in line for line in feed), feed
    hant = table_view(live, 3 - idle, "zh-hant", 0.0)["feed"]
    en = table_view(live, 3 - idle, "en", 0.0)["feed"]
    assert any("託管過牌" in line for line in hant) and any("autopilot checks" in line for line in en)


async def test_in_showhand_autopilot_folds_when_someone_bet(bot):
    d = bot.driver
    idle = await start_showhand_with_a_timeout(bot)
    await next_game_at_their_turn(bot, idle)
    await played_at_once(bot, idle)  # nobody bet: a check
    other = 3 - idle
    await act(bot, next(b for b in d.labels(GROUP) if b.startswith("下注")))
    assert live_table(bot).engine.turn == idle
    await played_at_once(bot, idle)  # a bet to call: a fold, which ends the game
    live = live_table(bot)
    assert not live.in_round
    assert next(r for r in live.view.results if r.person == idle).status == "autopilot_folded"
    assert next(r for r in live.view.results if r.person == other).won
    table = d.table(GROUP)
    assert "托管弃牌" in table and "超时弃牌" not in table, table
    dm = newest(bot, idle).text
    assert "🤖 托管弃牌" in dm, dm


async def test_i_m_back_ends_it_and_their_turn_waits_for_them_again(bot):
    d = bot.driver
    idle = await start_showhand_with_a_timeout(bot)
    dm = newest(bot, idle)
    data = next(str(button["callback_data"]) for button in dm.buttons if button["text"] == BACK)
    await d.press(idle, idle, BACK)
    assert "欢迎回来" in d.popup(idle)
    live = live_table(bot)
    assert idle not in live.view.autopilot and AUTOPILOT_MARK not in d.table(GROUP)
    assert BACK not in labels(newest(bot, idle))
    saved = await bot.runtime.store.load_table(live.table_id)
    assert saved is not None and str(idle) not in saved.state["view"]["autopilot"], "saved at once"
    await d.press_data(idle, idle, dm.message_id, data)  # the same button again
    assert d.popup(idle) == "你没有在托管"
    await d.press(3 - idle, GROUP, "继续下一局")
    if not live_table(bot).in_round:  # (their own Start, now that nobody presses it for them)
        await d.press(idle, GROUP, "继续下一局")
    while live_table(bot).engine.turn != idle:
        await act(bot, next(b for b in d.labels(GROUP) if b.startswith(("过牌", "跟注"))))
    assert armed_in(bot) > AUTOPILOT_SECONDS + 1, "the whole turn"
    assert "🔔 轮到你了" in newest(bot, idle).text, "they are asked in their DM"


async def test_any_press_of_theirs_ends_it(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2, 3], 1, THREE)
    await open_and_start(bot, [1, 2, 3], "showhand")
    idle = live_table(bot).engine.turn
    await bot.fire_timer()  # folded; the game goes on between the other two
    assert live_table(bot).in_round and idle in live_table(bot).view.autopilot
    await d.press(idle, GROUP, "看我的牌")  # their cards only: still on autopilot
    assert idle in live_table(bot).view.autopilot
    await d.press(idle, GROUP, "弃牌")  # not their turn (and folded): refused, but they are back
    assert idle not in live_table(bot).view.autopilot
    assert AUTOPILOT_MARK not in d.table(GROUP)


async def test_a_muxi_player_on_autopilot_stands_and_is_passed_over_for_the_bank_at_once(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await bot.fire_timer()  # 2 does not choose: stands, and goes on autopilot
    assert 2 in live_table(bot).view.autopilot
    await d.press(1, GROUP, "不补")
    assert not live_table(bot).in_round
    await d.press(1, GROUP, "继续下一局")  # 2 is ready already: the round starts
    live = live_table(bot)
    assert live.in_round
    if live.engine.asked_person() == 1:  # the banker question goes round the table
        await d.press(1, GROUP, "不当庄")
    assert live_table(bot).engine.asked_person() == 2
    await played_at_once(bot, 2)  # a timeout passes on the bank
    assert live_table(bot).engine.asked_person() != 2


async def test_someone_unseated_for_want_of_coins_is_off_autopilot_and_rejoins_afresh(world, tmp_path):
    bot = await start_bot(world, str(tmp_path / "p.sqlite3"), start_grant=1_000)
    try:
        d = bot.driver
        stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
        await open_and_start(bot, [1, 2])
        await d.press(1, GROUP, "当庄")
        await bot.fire_timer()  # 2 stands on a timeout: 托管
        assert 2 in live_table(bot).view.autopilot
        await d.press(1, GROUP, "不补")  # 2 loses and falls under 1,000 coins: unseated
        live = live_table(bot)
        assert 2 not in live.seated() and 2 not in live.view.autopilot
        assert BACK not in labels(newest(bot, 2)), "their DM offers no 我回来了 for a seat they lost"
        await bot.runtime.store.claim_daily(2)
        await d.send(2, GROUP, "/join")
        live = live_table(bot)
        assert 2 in live.seated() and 2 not in live.view.autopilot and not live.engine.core.seat_of(2).ready
    finally:
        await stop_bot(bot)


async def test_two_on_autopilot_since_different_rounds_each_get_up_after_their_own_two(bot):
    """Issue 47, point 2: 老王 times out in game 1, 阿强 in game 2, everyone is ready for each next
    game. At the end of game 3 老王 gets up (two whole games on autopilot), and the next game
    starts at once: 阿强 was judged against that new game, charged as an escaper after one game
    on autopilot, and the game aborted. Who gets up is decided at the end of the round, before any
    new one starts, each by their own count: 阿强 plays game 4 on autopilot and gets up after it,
    for free."""
    d = bot.driver
    laowang, aqiang = 4, 3
    await open_and_start(bot, [1, 2, 3, 4], "showhand")

    async def play_game(idle: int | None) -> None:
        """Everyone checks or calls; ``idle`` lets the deadline act at their first turn; those on
        autopilot are played at once."""
        idled, game = False, live_table(bot).round_no
        while live_table(bot).in_round and live_table(bot).round_no == game:
            live = live_table(bot)
            turn = live.engine.turn
            if not live.asks(turn) or (turn == idle and not idled):
                idled = idled or turn == idle
                await bot.fire_timer()
            else:
                await act(bot, next(b for b in d.labels(GROUP) if b.startswith(("过牌", "跟注"))))

    await play_game(laowang)
    for person in (1, 2, aqiang):
        await d.press(person, GROUP, "再来一局 ✓ 自动准备")
    assert live_table(bot).round_no == 2 and live_table(bot).in_round
    await play_game(aqiang)
    assert live_table(bot).view.autopilot == {laowang: 1, aqiang: 2}
    assert live_table(bot).round_no == 3 and live_table(bot).in_round, "everyone was ready"
    before = await bot.balance(aqiang)
    await play_game(None)

    live = live_table(bot)
    table = d.table(GROUP)
    assert live.round_no == 4 and live.in_round, "the next game started at once"
    assert live.engine.core.seat_of(laowang) is None and live.engine.core.seat_of(aqiang) is not None
    assert "逃跑" not in table and "有人逃跑" not in table, table
    assert live.view.autopilot == {aqiang: 2}
    await play_game(None)
    live = live_table(bot)
    assert live.engine.core.seat_of(aqiang) is None, "up after game 4, their second whole one"
    assert any("🤖 阿强 托管了两局" in text for text in d.texts(GROUP)), "(told on game 4's message)"
    results = [line for line in bot.world.bot_messages(GROUP) if "逃跑" in line.text]
    assert results == [], "nobody escaped"
    assert await bot.balance(aqiang) <= before, "(they folded their antes, nothing more)"
    assert await bot.balance(aqiang) >= before - 1_000, "no escape penalty"


async def test_their_dm_no_longer_says_on_autopilot_once_they_left_or_the_table_ended(bot):
    """Issue 49 point 8: an old DM still said "🤖 托管中" (with 我回来了) after they had left."""
    d = bot.driver
    idle = await start_showhand_with_a_timeout(bot)
    assert "🤖 托管中" in newest(bot, idle).text
    await d.send(idle, GROUP, "/leave")
    assert live_table(bot).engine.core.seat_of(idle) is None
    await bot.runtime.wait_idle()
    for message in bot.world.bot_messages(idle):
        assert "托管中" not in message.text and BACK not in labels(message), message.text


async def test_their_dm_no_longer_says_on_autopilot_once_the_table_is_cancelled(bot):
    d = bot.driver
    idle = await start_showhand_with_a_timeout(bot)
    assert "🤖 托管中" in newest(bot, idle).text
    await d.send(ADMIN, GROUP, "/cancel")
    await bot.runtime.wait_idle()
    for message in bot.world.bot_messages(idle):
        assert "托管中" not in message.text and BACK not in labels(message), message.text
