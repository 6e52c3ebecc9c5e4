"""How the bot talks to Telegram (issue 15), through the fake Telegram in process: a press is
answered before anything is sent, a late prompt gives its turn the time back, the presser's own
result rides on the answer, and a restarted bot sends nothing that has not changed."""

import asyncio
from dataclasses import replace

import pytest

from bot.send.messages import DmKey, PersonalMessage, TableKey
from bot.send.rate_policy import Limits, Priority
from faketg.driver import process
from faketg.harness import ADMIN, GROUP, start_bot, stop_bot, too_many
from tests.component.decks import stack, stack_showhand
from tests.component.scenarios import (
    act,
    empty_the_table_budget,
    handle,
    labels,
    live_table,
    newest,
    open_and_start,
)
from tests.waiting import until


async def test_a_press_is_answered_before_anything_is_sent(world, database):
    bot = await start_bot(world, database, limits=Limits.of_settings(60))
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    empty_the_table_budget(bot, seconds=30)
    requests = len(world.requests)
    await handle(bot, world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄")))
    assert world.open_queries == {}, "answered"
    sent = [r.method for r in world.requests[requests:]]
    assert sent[0] == "answerCallbackQuery", sent
    assert "editMessageText" not in [r.method for r in world.requests[requests:] if r.chat_id == GROUP]
    assert bot.runtime.presenter.sender.pending(GROUP), "the table's edit waits for the group's budget"
    await bot.runtime.presenter.sender.stop()
    await stop_bot(bot)


async def test_a_turn_shown_late_gets_that_time_back(world, database):
    """小红 never opened a DM with the bot: the table message is her prompt, and it is late."""
    world.people[2].started_bot = False
    bot = await start_bot(world, database, limits=Limits.of_settings(60))
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    empty_the_table_budget(bot)
    await handle(bot, world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄")))
    live = bot.runtime.tables.get(GROUP)
    deadline = live.deadline
    await bot.runtime.presenter.sender.drain()  # the table shows the draw about 1.6 s late
    assert live.deadline - deadline > 1.0, "the turn got the delay back"
    assert live.deadline - deadline < 5.0
    await stop_bot(bot)


async def test_the_pressers_own_hand_rides_on_the_answer(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "补牌")
    popup = bot.world.popups[2][-1]
    assert "5♠︎ 6♥️ 7♠︎" in popup.text and not popup.show_alert


async def test_a_restart_sends_nothing_that_did_not_change(world, database):
    first = await start_bot(world, database)
    stack(first, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"})
    await open_and_start(first, [1, 2, 3])
    await first.driver.press(1, GROUP, "当庄")
    await stop_bot(first)
    requests = len(world.requests)
    second = await start_bot(world, database)
    await second.runtime.wait_background()
    await second.runtime.presenter.sender.drain()
    sent = [r.method for r in world.requests[requests:] if r.chat_id is not None]
    assert sent == [], "every message shows what it should already"
    assert second.runtime.presenter.orphans.unsure == {}, (
        "so no DM is looked at for a message a crash cut off"
    )
    await second.driver.press(2, GROUP, "不补")
    assert "小红  ✋ 不补" in world.messages[(GROUP, second.runtime.tables.get(GROUP).message_id)].text
    await stop_bot(second)


async def test_a_flood_of_commands_costs_the_group_one_reply(bot, world):
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    requests = len(world.requests)
    for _ in range(20):
        await d.send(6, GROUP, "/newgame muxi")
    replies = [r for r in world.requests[requests:] if r.method == "sendMessage" and r.chat_id == GROUP]
    assert len(replies) == 1, "the same refusal to the same person is sent once"


async def test_a_handlers_own_call_refused_with_a_429_is_waited_out(bot, world, monkeypatch):
    """Not a send (the presenter queues those): the admin lookup of /cancel, answered 429 once."""
    real, refused = world.call, []

    def call(method, params):
        if method == "getChatMember" and not refused:
            refused.append(method)
            raise too_many()
        return real(method, params)

    monkeypatch.setattr(world, "call", call)
    await bot.driver.send(1, GROUP, "/newgame muxi")
    await bot.driver.send(ADMIN, GROUP, "/cancel")
    assert refused and bot.runtime.tables.get(GROUP) is None, "the lookup was tried again and the table ended"


@pytest.fixture
def refusing(monkeypatch, world):
    """The chats Telegram answers every request to with a 429 (retry after 2 s)."""
    real, chats = world.call, set()

    def call(method, params):
        if params.get("chat_id") in chats:
            raise too_many(2)
        return real(method, params)

    monkeypatch.setattr(world, "call", call)
    return chats


@pytest.fixture
async def paced_bot(world, database, refusing):
    """A bot with Telegram's limits (a table's share of 60 a minute), stopped after the test
    whatever happened (no chat refused any more by then)."""
    running = await start_bot(world, database, limits=Limits.of_settings(60))
    yield running
    refusing.clear()
    await stop_bot(running)


async def a_draw_whose_prompt_to_2_waits(bot, world, refusing):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    refusing.add(2)
    await handle(bot, world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄")))
    live = bot.runtime.tables.get(GROUP)
    assert bot.runtime.presenter.prompt_waits(live)
    return live


async def test_a_deadline_waits_for_its_prompt_and_the_turn_starts_when_sent(paced_bot, world, refusing):
    """The turn's prompt to 2 is still queued when its deadline comes (and when its reminder went,
    so the prompt gives no time back itself): the deadline waits; once the prompt is sent, 2 has a
    whole turn from then, and their DM says so."""
    bot = paced_bot
    live = await a_draw_whose_prompt_to_2_waits(bot, world, refusing)
    timer, turn = live.engine.core.timer, live.engine.core.turn_seconds
    assert bot.runtime.turns.moment(live.table_id) == "reminder"
    bot.runtime.turns.disarm(live.table_id)
    await bot.runtime.turns.remind(GROUP, live.table_id, live.engine.core.timer)
    assert live.reminded

    await bot.runtime.turns.timeout(GROUP, live.table_id, timer)
    assert live.engine.core.timer == timer, "nobody timed out: 2 has not been asked yet"
    assert bot.runtime.turns.moment(live.table_id) is not None, "looked at again soon"
    bot.runtime.turns.disarm(live.table_id)  # (the test looks again itself)

    refusing.clear()
    await bot.runtime.presenter.sender.drain()  # the prompt reaches 2
    prompt = newest(bot, 2)
    assert labels(prompt) == ["补牌", "不补"] and not bot.runtime.presenter.prompt_waits(live)
    shown = prompt.text
    await bot.runtime.turns.timeout(GROUP, live.table_id, timer)
    assert live.engine.core.timer == timer, "still 2's turn"
    assert live.deadline == pytest.approx(bot.runtime.clock() + turn, abs=1.0), "a whole turn from now"
    await bot.runtime.wait_idle()
    assert world.messages[(2, prompt.message_id)].text != shown, "the DM shows the new deadline"
    await bot.driver.press(2, 2, "不补")
    assert "小红  ✋ 不补" in bot.driver.table(GROUP)


async def test_a_table_let_go_leaves_what_it_could_not_send_in_time_to_the_next_owner(
    paced_bot, world, refusing
):
    """A worker lets a table go (another takes it over) while its prompt to 2 waits out Telegram's
    429s: once the wait is over, it is not sent from here any more (the next owner, reading the
    saved shown state, sends it; sent by both, it would show twice)."""
    bot = paced_bot
    live = await a_draw_whose_prompt_to_2_waits(bot, world, refusing)
    sender, before = bot.runtime.presenter.sender, len(world.bot_messages(2))
    await bot.runtime.let_go(lambda chat: chat == GROUP, timeout=0.2)
    assert bot.runtime.tables.get(GROUP) is None
    assert not [job for job in sender.waiting_in(2) if getattr(job.key, "table_id", None) == live.table_id]
    refusing.clear()
    await sender.drain()
    assert len(world.bot_messages(2)) == before, "nothing sent to 2 for the table let go"


async def test_a_deadline_waits_for_its_prompt_one_turn_at_most(paced_bot, world, refusing):
    bot = paced_bot
    live = await a_draw_whose_prompt_to_2_waits(bot, world, refusing)
    timer = live.engine.core.timer
    live.turn = replace(
        live.turn, deadline=bot.runtime.clock() - live.engine.core.turn_seconds - 0.1
    )  # a turn past it
    await bot.runtime.turns.timeout(GROUP, live.table_id, timer)
    assert live.engine.core.timer != timer, "the table does not hang: the turn timed out"


async def test_a_reminder_still_queued_does_not_hold_the_deadline(paced_bot, world, refusing):
    """2 has this turn's prompt; only its reminder waits (a new message, under load): 2 could act, so
    the deadline is not held."""
    bot = paced_bot
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    live = bot.runtime.tables.get(GROUP)
    timer = live.engine.core.timer
    assert labels(newest(bot, 2)) == ["补牌", "不补"]
    refusing.add(2)
    assert bot.runtime.turns.moment(live.table_id) == "reminder"
    bot.runtime.turns.disarm(live.table_id)
    await bot.runtime.turns.remind(GROUP, live.table_id, live.engine.core.timer)
    assert bot.runtime.presenter.sender.waiting(2, DmKey(live.table_id, 2)) is not None, "the reminder waits"
    assert not bot.runtime.presenter.prompt_waits(live)
    await bot.runtime.turns.timeout(GROUP, live.table_id, timer)
    assert live.engine.core.timer != timer, "2 timed out (stood)"


async def test_a_held_turn_whose_prompt_comes_late_gets_a_whole_turn_not_only_its_delay(
    paced_bot, world, refusing
):
    """After a restart the prompt is queued anew (its delay counts from then) and the deadline has
    passed: the time back alone would leave it in the past; a held turn starts over instead."""
    bot = paced_bot
    live = await a_draw_whose_prompt_to_2_waits(bot, world, refusing)
    timer, turn = live.engine.core.timer, live.engine.core.turn_seconds
    live.turn = replace(live.turn, deadline=bot.runtime.clock() - turn / 2)
    await bot.runtime.turns.timeout(GROUP, live.table_id, timer)
    assert live.engine.core.timer == timer
    bot.runtime.turns.disarm(live.table_id)
    refusing.clear()
    await bot.runtime.presenter.sender.drain()  # 2 s late
    await bot.runtime.turns.timeout(GROUP, live.table_id, timer)
    assert live.engine.core.timer == timer, "2 has their turn"
    assert live.deadline == pytest.approx(bot.runtime.clock() + turn, abs=1.0)


async def test_a_first_prompt_sent_after_the_reminder_gives_its_delay_back(paced_bot, world, refusing):
    """The prompt waited so long that the reminder came first (merged into it): when it reaches 2
    the turn gets its delay back, as any late prompt's."""
    bot = paced_bot
    live = await a_draw_whose_prompt_to_2_waits(bot, world, refusing)
    deadline = live.deadline
    assert bot.runtime.turns.moment(live.table_id) == "reminder"
    bot.runtime.turns.disarm(live.table_id)
    await bot.runtime.turns.remind(GROUP, live.table_id, live.engine.core.timer)
    refusing.clear()
    await bot.runtime.presenter.sender.drain()  # 2 s late
    assert "只剩" in newest(bot, 2).text and labels(newest(bot, 2)) == ["补牌", "不补"]
    assert live.deadline - deadline > 1.5, "the turn got its delay back"


async def test_a_prompt_being_sent_still_holds_the_deadline(paced_bot, world, monkeypatch):
    bot = paced_bot
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    presenter, release = bot.runtime.presenter, asyncio.Event()
    real = PersonalMessage.deliver

    async def slow(wanted, telegram, message_id):
        if wanted.person == 2:
            await release.wait()
        return await real(wanted, telegram, message_id)

    monkeypatch.setattr(PersonalMessage, "deliver", slow)
    await handle(bot, world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄")))
    live = bot.runtime.tables.get(GROUP)
    for _ in range(500):  # until its request is on its way
        if presenter.sender.waiting(2, DmKey(live.table_id, 2)) is None:
            break
        await asyncio.sleep(0.01)
    assert presenter.prompt_waits(live), "in flight: 2 has not got it yet"
    release.set()
    await presenter.sender.drain()
    assert not presenter.prompt_waits(live)


@pytest.mark.parametrize("without_dm", [False, True], ids=["all-told-by-dm", "one-without-dm"])
async def test_a_turn_change_is_urgent_on_the_table_only_for_whom_it_is_the_prompt(
    world, database, without_dm
):
    """The banker accepted: the players must draw. Everyone who must act gets their prompt in a DM,
    so the table's change only informs the group (it waits for room and merges with what follows);
    for someone who never opened a DM the table is the prompt: urgent."""
    if without_dm:
        world.people[3].started_bot = False
    bot = await start_bot(world, database, limits=Limits.of_settings(60))
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"})
    await open_and_start(bot, [1, 2, 3])
    empty_the_table_budget(bot, seconds=30)
    await handle(bot, world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄")))
    live = bot.runtime.tables.get(GROUP)
    if without_dm:  # the prompt's DM to 阿强 is refused: the bot learns it then
        for _ in range(500):
            if 3 in live.view.dm_failed:
                break
            await asyncio.sleep(0.01)
        assert 3 in live.view.dm_failed
    parcel = bot.runtime.presenter.sender.waiting(GROUP, TableKey(live.table_id), in_flight=True)
    assert parcel is not None, "the table's edit waits for the group's budget"
    assert parcel.priority is (Priority.PHASE if without_dm else Priority.INFO)
    await bot.runtime.presenter.sender.stop()
    await stop_bot(bot)


async def test_a_prompt_right_after_ones_own_turn_takes_its_place_in_one_edit(bot):
    """1 closes the second card's betting and shows the best cards of the third: their turn again
    at once. They are looking at the prompt they just answered: it becomes the new one (one edit),
    instead of an end and a new message buzzing them again. Someone else's turn next is a new one."""
    world = bot.world
    stack_showhand(bot, [1, 2], 1, {1: "8S 9H 9D QC KS", 2: "AD AH 8D 9C JH"})
    await open_and_start(bot, [1, 2], "showhand")
    assert await act(bot, "过牌") == 2, "A♥ showing speaks first"
    answered = newest(bot, 1)
    mark = len(world.requests)
    assert await act(bot, "过牌") == 1
    assert live_table(bot).engine.turn == 1, "a pair of 9 showing speaks first on the third card"

    def sent(chat_id: int) -> list[str]:
        return [r.method for r in world.requests[mark:] if r.chat_id == chat_id and r.error is None]

    assert sent(1) == ["editMessageText"], "one request: the prompt they answered is the new one"
    prompt = newest(bot, 1)
    assert prompt.message_id == answered.message_id and "过牌" in labels(prompt)
    assert "9♦️" in prompt.text, "with the card just dealt"
    mark = len(world.requests)
    await act(bot, "过牌")
    assert "sendMessage" in sent(2), "2's turn after 1's: a new message notifies them"
    assert sent(1) == ["editMessageText"], "1's answered prompt ends"


async def test_an_updates_id_is_saved_with_its_table_action_or_once_handled(bot, monkeypatch):
    """In one process as with workers (``bot/updates/seen.py``): a press's id rides in its action's
    transaction (no write of its own), a command's is saved once it is handled."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    store = bot.runtime.store
    alone, real = [], store.remember_update
    monkeypatch.setattr(store, "remember_update", lambda update: alone.append(update) or real(update))
    press = bot.world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄"))
    command = bot.world.post(2, GROUP, "/balance")
    await process(bot.application, press)
    await process(bot.application, command)
    assert await store.update_taken(press["update_id"]) and await store.update_taken(command["update_id"])
    assert alone == [command["update_id"]], "the press's id was saved with its action"
    assert "庄家 阿明" in bot.world.messages[(GROUP, live_table(bot).message_id)].text


async def test_a_press_delivered_again_while_it_is_handled_is_taken_once(bot):
    """The copy is dropped, and saves nothing: saved first, its id would refuse the first
    delivery's action (``UpdateTaken``), and the press would be lost."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    press = bot.world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄"))
    seen_updates = bot.application.bot_data.seen_updates
    async with bot.runtime.tables.lock(GROUP):  # another change of the table is under way
        first = asyncio.create_task(process(bot.application, press))
        await until(lambda: seen_updates.taken_here(press["update_id"]), "the first delivery is taken")
        await process(bot.application, press)  # Telegram posts it again meanwhile: dropped
    await first
    assert "庄家 阿明" in bot.world.messages[(GROUP, live_table(bot).message_id)].text, "the bank was taken"
    answers = [r.params.get("text") for r in bot.world.requests if r.method == "answerCallbackQuery"]
    assert not any("出了点问题" in str(text) for text in answers), answers
