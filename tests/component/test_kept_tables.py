"""The tables whose messages the courier keeps up (issue 48, "the knots cut"): a message value names
its table by id, the courier finds the table among those held (``bot.send.kept_tables``), and a
table gone from here, closed or let go, is forgotten once its last messages are sent, with what
the orphan search kept of its DMs (``bot.send.orphans``)."""

from __future__ import annotations

from bot.send.messages import Cleanup
from bot.send.orphans import Orphans
from faketg.harness import ADMIN, GROUP, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.scenarios import empty_the_table_budget, handle, live_table, open_and_start


def test_the_orphan_search_keeps_each_tables_dms_apart():
    orphans = Orphans()
    orphans.adopted(7, {1: 40, 2: 41}, [1, 2, 3])
    orphans.lost(8, 1, 90)
    assert orphans.unsure == {(7, 1): 40, (7, 2): 41, (7, 3): None, (8, 1): 90}
    orphans.lost(7, 1, 50)  # (already unsure: its last message known stays)
    orphans.sure(7, 2)
    assert orphans.suspects(7, 1, anew=False, sent=None) == [], "an edit: what was cut off is to come"
    assert orphans.suspects(8, 1, anew=True, sent=95) == [94, 93, 92], "down from the new message"
    assert orphans.suspects(7, 3, anew=True, sent=60) == [59], "no message known before: one id"
    orphans.forget(7)
    assert orphans.unsure == {}, "table 8's DM was looked at, table 7 is gone"


async def test_a_closed_table_is_forgotten_once_its_last_messages_are_sent(world, database):
    bot = await start_bot(world, database, owners=frozenset({ADMIN}))
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    live, presenter = live_table(bot), bot.runtime.presenter
    presenter.orphans.lost(live.table_id, 2, live.dm_ids.get(2))  # (as if a new DM had timed out)
    empty_the_table_budget(bot)
    await handle(bot, world.post(ADMIN, GROUP, "/cancel"))
    assert bot.runtime.tables.get(GROUP) is None, "closed"
    await bot.runtime.wait_background()
    assert presenter.courier.tables.get(live.table_id) is live, "held while its table message waits"
    await bot.runtime.wait_idle()
    assert world.messages[(GROUP, live.message_id)].buttons == [], "the group saw the table closed"
    assert presenter.courier.tables.get(live.table_id) is None, "then forgotten"
    assert presenter.orphans.unsure == {}, "with its DMs' unsure state"
    await stop_bot(bot)


async def test_a_table_let_go_is_forgotten_with_its_unsure_dms(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    live, presenter = live_table(bot), bot.runtime.presenter
    presenter.orphans.lost(live.table_id, 2, live.dm_ids.get(2))
    assert presenter.courier.tables.get(live.table_id) is live
    await bot.runtime.let_go(lambda chat: chat == GROUP)
    assert presenter.courier.tables.get(live.table_id) is None
    assert presenter.orphans.unsure == {}


async def test_a_table_let_go_takes_along_what_it_left_to_bring_to_an_end(bot):
    """Let go while its group's budget is spent (the chaos test: an old round's table message,
    brought to its results 24 s after its table went to another worker, by the worker that had let
    it go): what was queued for its group, and in its people's DMs what is of this table, is not
    sent from here; a DM's message of another table stays."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    live, presenter = live_table(bot), bot.runtime.presenter
    sender = presenter.sender
    empty_the_table_budget(bot, seconds=30)
    sender.lanes[1].blocked_until = sender.clock() + 30  # (as after a 429 in that DM)
    presenter.clean_up(Cleanup(GROUP, live.message_id, "上一局", table_id=live.table_id))
    presenter.clean_up(Cleanup(1, 9001, "上一局", table_id=live.table_id))
    presenter.clean_up(Cleanup(1, 9002, "别的桌", table_id=live.table_id + 1))
    assert sender.waiting_in(GROUP)
    gone, sent_all = await bot.runtime.let_go(lambda chat: chat == GROUP, timeout=0.2)
    assert gone == [live] and not sent_all, "its group's budget is spent: not all went out"
    assert sender.waiting_in(GROUP) == [], "nothing for the group goes out from here"
    assert [parcel.payload.message_id for parcel in sender.waiting_in(1)] == [9002]
    sender.withdraw(1, sender.waiting_in(1)[0].key)  # (the bot stops at once)
