"""A turn's prompt under load: a new DM (it notifies) while the bot's new-message budget has room; an
edit of the person's DM for the table (seen, not notified) when a token would wait longer than
``PROMPT_WAIT``, counting the new messages already waiting ahead of it, decided as it goes out.
Either way the bookkeeping stays right: no DM keeps live buttons it should not, and a restart
neither posts nor reminds again. A new round's table message the same way: new while there is
room (the last one keeps its results), else the round goes on in the last one."""

import asyncio
import time

from bot.send.messages import Cleanup, DmKey, TableKey
from bot.send.rate_policy import PROMPT_WAIT, Limits, Parcel, Priority, Share
from faketg.driver import Driver, process
from faketg.harness import GROUP, refuse_once_per_chat, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.scenarios import empty_the_table_budget, labels, newest, open_and_start, remind
from tests.unit.bot.virtual_sender import Telegram, kept, now, simulate


# -- the sender on a virtual clock --------------------------------------------------------------------
def prompt(chat_id: int, since: float) -> Parcel:
    return Parcel(chat_id, "prompt", Priority.ACT, since, Share.KEPT, new_message=True, may_edit=True)


def sent_prompt(telegram: Telegram) -> tuple[float, Parcel]:
    [(moment, job)] = [(moment, job) for moment, job in telegram.sent if job.key == "prompt"]
    return moment, job


def test_a_prompt_goes_as_a_new_message_while_the_budget_has_room():
    async def scenario():
        telegram = Telegram(Limits())
        telegram.sender.want(prompt(7, now()))
        await telegram.sender.drain()
        return telegram

    moment, job = sent_prompt(simulate(scenario))
    assert job.new_message and moment == 0.0


def test_a_prompt_behind_a_second_of_waiting_new_messages_goes_as_an_edit_at_once():
    """100 urgent new messages are wanted just before the prompt: when it was wanted nothing waited
    yet, and when it goes out the bucket lacks only one token (1/30 s), but the 70 waiting ahead of
    it would keep it 2.3 s: it goes as an edit, now (a bot capped at 30 new messages a second, as
    after 429s about it: with no cap, nothing waits)."""

    async def scenario():
        telegram = Telegram(Limits(new_per_second=30.0))
        for n in range(100):
            telegram.sender.want(kept(1_000 + n, "cards", Priority.ACT, new=True, since=n * 1e-6))
        telegram.sender.want(prompt(7, 1e-3))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    moment, job = sent_prompt(telegram)
    assert not job.new_message, "an edit: it takes no token"
    assert moment == 0.0
    others = sorted(moment for moment, job in telegram.sent if job.key == "cards")
    assert len(others) == 100 and others[-1] > 2 * PROMPT_WAIT, "they did wait"


def test_less_urgent_new_messages_waiting_do_not_hold_a_prompt_back():
    async def scenario():
        telegram = Telegram(Limits(new_per_second=30.0))
        for n in range(100):
            telegram.sender.want(kept(1_000 + n, "cosmetic", Priority.COSMETIC, new=True, since=n * 1e-6))
        telegram.sender.want(prompt(7, 1e-3))
        await telegram.sender.drain()
        return telegram

    moment, job = sent_prompt(simulate(scenario))
    assert job.new_message, "granted before the 70 cosmetic ones waiting"
    assert moment < PROMPT_WAIT


# -- through the fake Telegram -----------------------------------------------------------------------
async def handle(bot, update):
    """The bot handles ``update``; what it queued goes out in the background."""
    await process(bot.application, update)


async def until(condition, within=5.0):
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "it never happened"
        await asyncio.sleep(0.01)


def spend_new_messages(bot, seconds=30.0):
    """The bot's new-message budget is spent: the next token is ``seconds`` away."""
    budget = bot.runtime.presenter.sender.new.bucket
    budget.tokens, budget.at = 1 - seconds * budget.per_second, time.monotonic()


def refill_new_messages(bot):
    budget = bot.runtime.presenter.sender.new.bucket
    budget.tokens, budget.at = budget.burst, time.monotonic()


def sent_as_edit(bot, message):
    """How many new messages (``dm``: prompts, ``table``: new rounds' table messages) the metrics
    counted as sent as an edit."""
    return bot.application.bot_data.metrics.as_edit.labels(message)._value.get()


def dm_bookkeeping(bot, person):
    """The DM the table keeps for ``person``, and the prompt its saved state names (or None)."""
    live = bot.runtime.tables.get(GROUP)
    shown = live.shown[str(person)]
    return live.dm_ids[person], None if shown.turn is None else f"{shown.turn}.{int(shown.reminded)}"


def cleanups(bot):
    """The messages left behind still queued to be brought to their last state."""
    lanes = bot.runtime.presenter.sender.lanes.values()
    return [
        job.payload for lane in lanes for job in lane.parcels.values() if isinstance(job.payload, Cleanup)
    ]


def live_buttons(world, person):
    return [m.message_id for m in world.bot_messages(person) if m.buttons and not m.deleted]


async def banker_asked_then_player_stood(bot):
    """Two at the table: 阿明 (1) is asked to bank in a DM and accepts there; 小红 (2) is prompted
    to draw. The banker's DM now shows their cards and no buttons."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    asked = newest(bot, 1)
    await bot.driver.press(1, 1, "当庄")
    return asked


async def test_with_the_budget_spent_a_new_turn_is_an_edit_of_their_dm(world, database):
    bot = await start_bot(world, database)
    asked = await banker_asked_then_player_stood(bot)
    spend_new_messages(bot)
    before = len(world.requests)
    await bot.driver.press(2, 2, "不补")  # the banker's turn to draw
    turn = world.messages[(1, asked.message_id)]
    assert world.bot_messages(1) == [turn], "no new DM"
    assert "🔔 轮到你了" in turn.text and labels(turn) == ["补牌", "不补"]
    assert [r.method for r in world.requests[before:] if r.chat_id == 1] == ["editMessageText"]
    live = bot.runtime.tables.get(GROUP)
    timer = live.engine.core.timer
    assert dm_bookkeeping(bot, 1) == (asked.message_id, f"{timer}.0"), "it shows this turn's prompt"
    assert not cleanups(bot), "nothing left behind: it is the same message"
    assert sent_as_edit(bot, "dm") == 1 and sent_as_edit(bot, "table") == 0, "the metrics count it"

    await remind(bot)  # still busy: the reminder is an edit of it too
    reminded = world.messages[(1, asked.message_id)]
    assert world.bot_messages(1) == [reminded] and "⏰ 只剩 10 秒了！" in reminded.text
    assert labels(reminded) == ["补牌", "不补"]
    assert dm_bookkeeping(bot, 1) == (asked.message_id, f"{timer}.1")

    requests = len(world.requests)
    await stop_bot(bot)
    bot = await start_bot(world, database)  # a restart: nothing to post, nobody to remind again
    await bot.runtime.wait_idle()
    assert [r.method for r in world.requests[requests:] if r.chat_id in (1, 2)] == []
    live = bot.runtime.tables.get(GROUP)
    assert (
        live.reminded and live.turn.timer == timer and bot.runtime.turns.moment(live.table_id) != "reminder"
    )
    await bot.driver.press(1, 1, "补牌")
    done = world.messages[(1, asked.message_id)]
    assert done.buttons == [] and "3♥️ 4♥️ 7♠︎" in done.text and "🏁 本局" in done.text
    assert live_buttons(world, 1) == [] and live_buttons(world, 2) == []
    await stop_bot(bot)


async def test_with_room_a_new_turn_is_a_new_dm_and_the_one_before_stays(bot, world):
    asked = await banker_asked_then_player_stood(bot)
    await bot.driver.press(2, 2, "不补")
    turn = newest(bot, 1)
    assert turn.message_id != asked.message_id and 1 in turn.notified and labels(turn) == ["补牌", "不补"]
    earlier = world.messages[(1, asked.message_id)]
    assert not earlier.deleted and earlier.buttons == [] and "👑 你当庄" in earlier.text
    timer = bot.runtime.tables.get(GROUP).engine.core.timer
    assert dm_bookkeeping(bot, 1) == (turn.message_id, f"{timer}.0")
    assert not cleanups(bot)
    assert live_buttons(world, 1) == [turn.message_id]
    assert sent_as_edit(bot, "dm") == 0


async def test_a_prompt_wanted_with_room_but_sent_when_busy_is_an_edit(bot, world, monkeypatch):
    """The banker's prompt is tried as a new DM while the budget has room, and refused with a 429;
    by the time their chat may be sent to again the budget is spent: it goes as an edit."""
    asked = await banker_asked_then_player_stood(bot)
    refused = refuse_once_per_chat(
        monkeypatch, world, lambda method, params: method == "sendMessage" and params.get("chat_id") == 1
    )
    message_id, data = bot.driver.button_data(2, "不补")
    await handle(bot, world.press(2, 2, message_id, data))
    await until(lambda: refused)
    spend_new_messages(bot)
    await bot.runtime.wait_idle()
    turn = world.messages[(1, asked.message_id)]
    assert world.bot_messages(1) == [turn] and "🔔 轮到你了" in turn.text and labels(turn) == ["补牌", "不补"]
    timer = bot.runtime.tables.get(GROUP).engine.core.timer
    assert dm_bookkeeping(bot, 1) == (asked.message_id, f"{timer}.0")
    assert not cleanups(bot)
    refill_new_messages(bot)


async def test_a_new_dm_leaves_the_one_before_with_what_they_did_when_that_was_still_to_be_sent(
    bot, world, monkeypatch
):
    """The edit of the banker's DM to "you are the banker" is refused with a 429 and waits; their
    turn comes meanwhile, a new DM: the one before still gets what they did, without buttons."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    asked = newest(bot, 1)
    refused = refuse_once_per_chat(
        monkeypatch, world, lambda method, params: method == "editMessageText" and params.get("chat_id") == 1
    )
    await handle(bot, world.press(1, 1, *bot.driver.button_data(1, "当庄")))
    await until(lambda: refused and world.bot_messages(2) and labels(newest(bot, 2)) == ["补牌", "不补"])
    await handle(bot, world.press(2, 2, *bot.driver.button_data(2, "不补")))
    await bot.runtime.wait_idle()
    turn = newest(bot, 1)
    assert turn.message_id != asked.message_id and labels(turn) == ["补牌", "不补"] and 1 in turn.notified
    earlier = world.messages[(1, asked.message_id)]
    assert not earlier.deleted and earlier.buttons == [] and "👑 你当庄" in earlier.text
    assert "轮到你了" not in earlier.text
    timer = bot.runtime.tables.get(GROUP).engine.core.timer
    assert dm_bookkeeping(bot, 1) == (turn.message_id, f"{timer}.0")
    assert not cleanups(bot) and live_buttons(world, 1) == [turn.message_id]


# -- a new round's table message, the same way ----------------------------------------------------------
async def a_first_round_played(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await d.bank_and_stand(GROUP, 1, [2])
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    return bot.runtime.tables.get(GROUP).message_id


def table_messages(world):
    return [m for m in world.bot_messages(GROUP) if m.reply_to is None]


async def test_with_room_a_new_round_gets_a_new_table_message(bot, world):
    first = await a_first_round_played(bot)
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "继续下一局")
    live = bot.runtime.tables.get(GROUP)
    assert [m.message_id for m in table_messages(world)] == [first, live.message_id]
    old = world.messages[(GROUP, first)]
    assert old.buttons == [] and "第 1 局 · 结算" in old.text and "第 2 局" in bot.driver.table(GROUP)
    assert TableKey(live.table_id) not in bot.runtime.presenter.last_round and not cleanups(bot)
    assert sent_as_edit(bot, "table") == 0


async def test_with_the_budget_spent_a_new_round_goes_on_in_the_last_rounds_message(bot, world):
    """The banker question's new DM waits 1.5 s for its token (a DM of a new round has nothing to
    edit); the table's new message would wait behind it: the last round's message shows round 2."""
    first = await a_first_round_played(bot)
    await bot.driver.press(2, GROUP, "继续下一局")
    spend_new_messages(bot, seconds=1.5)
    before = len(world.requests)
    await bot.driver.press(1, GROUP, "继续下一局")
    live = bot.runtime.tables.get(GROUP)
    assert live.message_id == first and [m.message_id for m in table_messages(world)] == [first]
    table = world.messages[(GROUP, first)]
    assert "第 2 局" in table.text and "当庄" in labels(table), "round 2, with its buttons"
    group = [r.method for r in world.requests[before:] if r.chat_id == GROUP]
    assert "sendMessage" not in group and "editMessageText" in group
    assert sent_as_edit(bot, "table") == 1
    assert TableKey(live.table_id) not in bot.runtime.presenter.last_round and not cleanups(bot)
    banker = next(person for person in (1, 2) if "你要当庄吗" in newest(bot, person).text)
    assert banker in newest(bot, banker).notified, "a new round's DM did wait for its token"
    await bot.driver.press(banker, GROUP, "当庄")  # the round goes on in that message
    assert [m.message_id for m in table_messages(world)] == [first] and "庄家" in bot.driver.table(GROUP)


async def test_a_change_while_the_new_rounds_message_is_sent_edits_that_message(bot, world, monkeypatch):
    """The new round's table message is on its way when the table changes again: that change is an
    edit of the new message, not one more new message (with the new one edited to old results)."""
    first = await a_first_round_played(bot)
    live = bot.runtime.tables.get(GROUP)
    screen = await bot.runtime.screen(GROUP)
    real, changed = world.call, []

    def call(method, params):
        result = real(method, params)
        if method == "sendMessage" and params.get("chat_id") == GROUP and not changed:
            changed.append(result["message_id"])
            bot.runtime.presenter.want_table(live, screen)  # e.g. someone's coins changed meanwhile
        return result

    monkeypatch.setattr(world, "call", call)
    for person in (2, 1):
        await bot.driver.press(person, GROUP, "继续下一局")
    await bot.runtime.wait_idle()
    assert [m.message_id for m in table_messages(world)] == [first, *changed] == [first, live.message_id]
    assert "第 1 局 · 结算" in world.messages[(GROUP, first)].text
    assert "第 2 局" in bot.driver.table(GROUP)


async def test_table_before_the_new_rounds_message_is_sent_keeps_the_last_rounds_results(bot, world):
    """/table posts the table anew at the bottom: the last round's message, whose new-round message
    had not gone yet (the group's budget spent), keeps its results instead of being deleted."""
    first = await a_first_round_played(bot)
    for person in (2, 1):
        await bot.driver.press(person, GROUP, "继续下一局")  # (sent at once: the budget had room)
    await bot.runtime.wait_idle()
    second = bot.runtime.tables.get(GROUP).message_id
    await bot.driver.press(2, GROUP, "当庄")
    await bot.driver.press(1, GROUP, "不补")
    await bot.driver.press(2, GROUP, "不补")
    empty_the_table_budget(bot, seconds=2.0)
    for person in (2, 1):
        await handle(bot, world.press(person, GROUP, *bot.driver.button_data(GROUP, "继续下一局")))
    await bot.driver.send(1, GROUP, "/table")
    await bot.runtime.wait_idle()
    live = bot.runtime.tables.get(GROUP)
    kept = [m for m in table_messages(world) if not m.deleted]
    assert [m.message_id for m in kept] == [first, second, live.message_id]
    assert "第 2 局 · 结算" in world.messages[(GROUP, second)].text, "round 2's results stay"
    assert "第 3 局" in bot.driver.table(GROUP)


async def round_one_over_and_round_two_asked(bot, budget_spent):
    """Round 1 played; round 2 starts (its banker question goes to a DM) with the bot's new-message
    budget spent (a token 30 s away) or not. Who is asked, and their DMs before round 2."""
    await a_first_round_played(bot)
    await bot.runtime.wait_idle()
    before = {person: [m.message_id for m in bot.world.bot_messages(person)] for person in (1, 2)}
    await bot.driver.press(2, GROUP, "继续下一局")
    if budget_spent:
        spend_new_messages(bot)
    await bot.driver.press(1, GROUP, "继续下一局")
    live = bot.runtime.tables.get(GROUP)
    asked = live.engine.asked_person()
    return asked, before[asked]


async def test_with_the_budget_spent_a_new_rounds_dm_goes_on_in_the_last_rounds_dm(bot, world):
    asked, before = await round_one_over_and_round_two_asked(bot, budget_spent=True)
    after = [m.message_id for m in world.bot_messages(asked)]
    assert after == before, "no new DM: the last round's took the new round"
    dm = world.messages[(asked, before[-1])]
    assert "第 2 局" in dm.text and "当庄" in labels(dm)
    live = bot.runtime.tables.get(GROUP)
    assert (
        live.dm_ids[asked] == before[-1]
        and DmKey(live.table_id, asked) not in bot.runtime.presenter.last_round
    )
    await bot.driver.press(asked, asked, "当庄")  # the round goes on there
    assert [m.message_id for m in world.bot_messages(asked)] == before


async def test_with_room_a_new_rounds_dm_is_new_and_the_last_one_keeps_its_end(bot, world):
    asked, before = await round_one_over_and_round_two_asked(bot, budget_spent=False)
    after = [m.message_id for m in world.bot_messages(asked)]
    assert after[:-1] == before and len(after) == len(before) + 1
    assert "第 2 局" in newest(bot, asked).text and asked in newest(bot, asked).notified
    last = world.messages[(asked, before[-1])]
    assert "🏁 本局" in last.text and last.buttons == []


async def test_a_last_rounds_end_still_queued_never_overwrites_the_new_round(bot, world, monkeypatch):
    """The last round's end in each DM is refused with a 429; the new round starts at once, with the
    budget spent, and goes on in the DM of the one it asks: that DM's end, still queued, is dropped
    rather than sent over the new round; the other DM still gets its end."""
    refused = refuse_once_per_chat(
        monkeypatch,
        world,
        lambda method, params: method == "editMessageText" and "🏁" in params.get("text", ""),
    )

    async def hurried():  # people press on without waiting for every send
        await asyncio.sleep(0.05)

    bot.driver = Driver.in_process(world, bot.application, hurried)
    await a_first_round_played(bot)
    await bot.driver.press(2, GROUP, "继续下一局")
    spend_new_messages(bot)
    await bot.driver.press(1, GROUP, "继续下一局")
    live = bot.runtime.tables.get(GROUP)
    assert live.round_no == 2 and refused == {1, 2}
    await bot.runtime.wait_idle()
    asked = live.engine.asked_person()
    other = 3 - asked
    assert "第 2 局" in world.messages[(asked, live.dm_ids[asked])].text
    assert "🏁 本局" in world.messages[(other, live.dm_ids[other])].text
