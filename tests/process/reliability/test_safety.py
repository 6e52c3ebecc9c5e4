"""Coins and tables safe under races, failed saves, restarts, late upgrades, misplaced buttons and
a seated admin's /cancel (issue 14): each test names what it protects."""

import asyncio
import contextlib
import sqlite3

import pytest

from faketg.harness import ADMIN, GROUP, escape, start_bot, stop_bot
from games.table import Join
from storage import SeatRefused
from tests.component.decks import stack
from tests.component.scenarios import open_and_start
from tests.unit.storage.writes import set_pragma

OTHER = -100_456  # a second group, where some of the same people play


@contextlib.asynccontextmanager
async def write_lock_held(bot, database):
    """Another process holds the database's write lock: the bot's saves fail (after 50 ms)."""
    await bot.runtime.store.backend.writer.on_connection(set_pragma, "busy_timeout", 50)
    blocker = sqlite3.connect(database, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()


def table_message(bot, chat_id=GROUP):
    live = bot.runtime.tables.get(chat_id)
    return bot.world.messages[(chat_id, live.message_id)].text


async def coins(bot, people):
    return {person: await bot.balance(person) for person in people}


async def test_an_escaping_banker_cannot_sit_elsewhere_with_the_coins_of_the_escape(bot, world):
    """/leave at B (the banker's escape) and /join at A in one batch: the seat at A gets what the
    wallet holds once the escape is paid, never the balance from before it."""
    world.add_group(OTHER, "隔壁群", [1, 4, 5], admins=[4])
    d = bot.driver
    await d.send(4, OTHER, "/newgame muxi")
    await d.press(5, OTHER, "加入")
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")  # 1 is the banker: leaving now is an escape (50× base)
    await d.send(1, GROUP, "/leave")  # the price, and "send it again to confirm"
    assert "罚 5,000" in d.last(GROUP) and "再发一次 /leave 确认" in d.last(GROUP)
    await asyncio.gather(d.send(1, GROUP, "/leave"), d.send(1, OTHER, "/join"))
    wallet = await bot.balance(1)
    assert wallet == 5_000, "the banker's escape was paid"
    seat = bot.runtime.tables.get(OTHER).engine.core.seat_of(1)
    assert seat is None or seat.balance == wallet, "seated with coins the wallet no longer holds"
    report = await bot.runtime.store.check()
    assert report.ok, report


async def test_a_join_racing_an_escape_either_order_never_seats_unbacked_coins(bot, world):
    world.add_group(OTHER, "隔壁群", [1, 4, 5], admins=[4])
    d = bot.driver
    await d.send(4, OTHER, "/newgame muxi")
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await asyncio.gather(d.send(1, OTHER, "/join"), d.send(1, GROUP, "/leave"))
    live = bot.runtime.tables.get(OTHER)
    seat = live.engine.core.seat_of(1)
    assert seat is None or seat.balance == await bot.balance(1)
    assert (await bot.runtime.store.check()).ok


async def test_storage_refuses_a_seat_the_wallet_does_not_back(bot, world):
    """The last line: whatever path the bot takes, storage will not save such a seat."""
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    live = bot.runtime.tables.get(GROUP)
    await bot.runtime.store.ensure_person(2, "小红")
    before = live.engine.to_dict()

    async def wrong_balance():  # a path that read the wallet wrong (or too early)
        return 9_000

    with pytest.raises(SeatRefused, match="sits down with 9000 coins but the wallet holds 10000"):
        await bot.runtime.tables.seat(live, 2, wrong_balance)
    assert live.engine.to_dict() == before
    with pytest.raises(TypeError):
        await bot.runtime.tables.apply(live, Join(2, 10_000))  # a seat is given by Tables.seat only


async def test_a_failed_save_after_a_restart_is_undone_and_its_deadline_tried_again(world, database):
    first = await start_bot(world, database)
    stack(first, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(first, [1, 2])
    await first.driver.press(1, GROUP, "当庄")
    await stop_bot(first)

    second = await start_bot(world, database)
    live = second.runtime.tables.get(GROUP)
    saved = live.engine.to_dict()
    async with write_lock_held(second, database):
        await second.fire_timer()
    assert live.engine.to_dict() == saved, "memory went back to what is saved"
    assert second.runtime.turns.moment(live.table_id) is not None, "the deadline is tried again"
    await second.fire_timer()
    assert "小红🤖  ✋ 不补" in table_message(second)  # (托管 since the deadline)
    await second.driver.press(1, GROUP, "不补")
    assert "结算" in second.driver.table(GROUP)
    assert sum((await coins(second, (1, 2))).values()) == 20_000
    assert (await second.runtime.store.check()).ok
    await stop_bot(second)


async def test_a_failed_press_after_a_restart_leaves_memory_as_saved(world, database):
    first = await start_bot(world, database)
    stack(first, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(first, [1, 2])
    await first.driver.press(1, GROUP, "当庄")
    await first.driver.press(2, GROUP, "不补")
    await stop_bot(first)

    second = await start_bot(world, database)
    live = second.runtime.tables.get(GROUP)
    saved = live.engine.to_dict()
    async with write_lock_held(second, database):
        await second.driver.press(1, GROUP, "不补")  # the show-down: its save fails
    assert "出了点问题" in second.driver.popup(1)
    assert live.engine.to_dict() == saved, "no settled round in memory that the books do not have"
    await second.driver.press(1, GROUP, "不补")
    assert "结算" in second.driver.table(GROUP)
    assert (await second.runtime.store.check()).ok
    await stop_bot(second)


async def late_upgrade(bot, world):
    """GROUP (a table in its draw, 2 escaped: 1,000 in escrow) became a supergroup; the bot missed
    the notice and someone opened a table in the new chat first."""
    new = -100_888
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await escape(d, 2)
    notices = world.upgrade_group(GROUP, new)
    world.chats[new].members.update({4, 5})
    await d.send(4, new, "/newgame muxi")
    assert bot.runtime.tables.get(new) is not None
    return new, notices


async def test_a_table_the_upgrade_cannot_move_ends_with_its_escrow_returned(bot, world):
    new, notices = await late_upgrade(bot, world)
    d = bot.driver
    await d.press(3, GROUP, "不补")
    assert "出了点问题" not in d.popup(3)
    assert bot.runtime.tables.get(GROUP) is None, "no table plays on unseen"
    assert await coins(bot, (1, 2, 3)) == {1: 10_000, 2: 10_000, 3: 10_000}, "the escrow went back"
    told = [text for text in d.texts(new) if "升级前的牌桌已结束" in text]
    assert told and "退还 小红 1,000" in told[0]
    for update in notices:  # the notices arrive late: nothing more happens
        await d.deliver(update)
    assert bot.runtime.tables.get(new).game == "muxi" and 4 in bot.runtime.tables.get(new).seated()
    assert (await bot.runtime.store.check()).ok
    assert bot.world.open_queries == {}


async def test_a_deadline_of_a_table_the_upgrade_cannot_move_ends_it(bot, world):
    await late_upgrade(bot, world)
    old = bot.runtime.tables.get(GROUP)
    await bot.fire_timer()
    assert bot.runtime.tables.get(GROUP) is None and bot.runtime.turns.moment(old.table_id) is None
    assert (await bot.runtime.store.check()).ok


async def test_the_upgrade_notice_ends_a_table_the_new_chat_already_replaced(bot, world):
    new, notices = await late_upgrade(bot, world)
    for update in notices:
        await bot.driver.deliver(update)
    assert bot.runtime.tables.get(GROUP) is None and bot.runtime.tables.get(new).seated() == [4]
    assert await coins(bot, (1, 2, 3)) == {1: 10_000, 2: 10_000, 3: 10_000}
    assert (await bot.runtime.store.check()).ok


async def test_a_game_is_not_picked_outside_a_group(bot, world):
    d = bot.driver
    await d.send(2, GROUP, "/newgame")
    group_pick = d.button_data(GROUP, "木虱")[1]
    await d.send(2, 2, "/balance")  # any bot message in the DM carries the forged button
    dm_message = world.bot_messages(2)[-1].message_id
    await d.press_data(2, 2, dm_message, group_pick)
    assert "请在群里使用" in d.popup(2)
    assert bot.runtime.tables.get(2) is None and bot.runtime.tables.get(GROUP) is None
    assert world.open_queries == {}


async def test_a_seat_is_not_taken_from_a_dm(bot, world):
    """Someone outside the group sends that table's join data from their own DM."""
    world.add_person(70, "外人")
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    _, join_data = d.button_data(GROUP, "加入")
    await d.send(70, 70, "/start")
    dm_message = world.bot_messages(70)[-1].message_id
    for data in (join_data, join_data.replace("join", "ready"), join_data.replace("join", "leave")):
        await d.press_data(70, 70, dm_message, data)
        assert "请在群里的牌桌上按" in d.popup(70)
    assert bot.runtime.tables.get(GROUP).seated() == [1]
    assert world.open_queries == {}


async def test_a_dm_still_takes_its_own_moves_and_cards(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await d.press(2, 2, "补牌")  # the button of 2's DM
    assert "小红  ✅ 已补牌" in table_message(bot)


async def test_an_owner_cancels_at_once_and_the_table_lists_the_refunds(world, database):
    bot = await start_bot(world, database, owners=frozenset({ADMIN}))
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await escape(d, 2)
    message_id = bot.runtime.tables.get(GROUP).message_id
    await d.send(ADMIN, GROUP, "/cancel")
    closed = world.messages[(GROUP, message_id)].text
    assert "管理员已结束本桌" in closed and "退还 小红 1,000" in closed
    assert await coins(bot, (1, 2, 3)) == {1: 10_000, 2: 10_000, 3: 10_000}
    assert (await bot.runtime.store.check()).ok
    await stop_bot(bot)


async def test_a_seated_admin_cannot_void_a_round_they_are_losing(world, database):
    bot = await start_bot(world, database)
    world.people[ADMIN].started_bot = True
    d = bot.driver
    stack(bot, [ADMIN, 1], {ADMIN: "2S 3S", 1: "9H KH"})  # the admin plays a 5 against a 9 tiangong
    await open_and_start(bot, [1, ADMIN])
    await d.press(1, GROUP, "当庄")
    await d.send(ADMIN, GROUP, "/cancel")
    assert bot.runtime.tables.get(GROUP) is not None, "the round goes on"
    await bot.fire_timer()  # the admin never decides: the deadline settles the round
    assert bot.runtime.tables.get(GROUP) is None, "then the table closes"
    assert await bot.balance(ADMIN) < 10_000, "the admin's loss stands"
    assert (await bot.runtime.store.check()).ok
    await stop_bot(bot)


async def test_a_refund_to_someone_seated_elsewhere_reaches_that_table(world, database):
    bot = await start_bot(world, database, owners=frozenset({ADMIN}))
    world.add_group(OTHER, "隔壁群", [2, 4], admins=[4])
    d = bot.driver
    await d.send(4, OTHER, "/newgame muxi")
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await escape(d, 2)  # 1,000 held in escrow
    await d.send(2, OTHER, "/join")
    assert bot.runtime.tables.get(OTHER).engine.core.seat_of(2).balance == 9_000
    await d.send(ADMIN, GROUP, "/cancel")  # the owner's: the escrow goes back at once
    assert await bot.balance(2) == 10_000
    assert bot.runtime.tables.get(OTHER).engine.core.seat_of(2).balance == 10_000, "that table learnt of it"
    assert (await bot.runtime.store.check()).ok
    await stop_bot(bot)


async def test_an_admins_close_before_the_deal_is_at_once_and_a_closing_table_seats_nobody(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])  # the banker question: no card is out yet
    await d.send(ADMIN, GROUP, "/cancel")
    assert bot.runtime.tables.get(GROUP) is None, "nothing to void: closed at once"
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await d.send(ADMIN, GROUP, "/cancel")
    await d.send(3, GROUP, "/join")
    assert "本局结算后牌桌就会关闭" in d.last(GROUP) and bot.runtime.tables.get(GROUP).seated() == [1, 2]
