"""Two workers in process on one PostgreSQL database and one fake Telegram: they share the chats'
partitions, each handles the updates of its own from the inbox, once; a worker cut off loses its
partitions to the other, which takes over its tables and finishes their rounds; and a worker that
lost a partition unawares is refused by the fence when it tries to act on one of its tables."""

from __future__ import annotations

import asyncio
import json
import time

import asyncpg
import pytest
from telegram import Update

from bot.cluster import workers
from bot.cluster.workers import Worker
from bot.updates.seen import SeenUpdates
from faketg.driver import Driver
from faketg.harness import start_bot, stop_bot
from storage.partitions import partition_of
from tests.component.decks import stack
from tests.waiting import until

PARTITIONS = 8  # (fewer than the default 32: shared out again in a step or two)


def people(chat_id: int) -> tuple[int, int, int]:
    """A group's three players (a person sits at one table at a time): banker, player, player."""
    first = 100 * (-chat_id % 1000)
    return first + 1, first + 2, first + 3


def worker(bot) -> Worker:
    assert bot.application.bot_data.worker is not None
    return bot.application.bot_data.worker


def owner_of(bots, chat_id):
    """The bot whose worker owns the chat's partition (exactly one)."""
    owning = [b for b in bots if partition_of(chat_id, worker(b).count) in worker(b).owned]
    assert len(owning) == 1, [sorted(worker(b).owned) for b in bots]
    return owning[0]


async def settled(bots) -> None:
    """Every update put in the inbox handled, and what it changed sent."""
    store = bots[0].runtime.store

    async def done() -> bool:
        return await store.inbox_depth() == 0 and not any(
            task for b in bots for tasks in worker(b).in_flight.values() for task in tasks
        )

    await until(done, "the inbox emptied and every update handled")
    for b in bots:
        await b.runtime.wait_idle()


def through_the_inbox(world, bots, delivered: list[int]) -> Driver:
    """People whose updates reach the bot as by its webhook: put in the inbox by one worker (the
    first alive), handled by the owner of their chat; ``delivered`` lists their ids."""

    async def deliver(update: dict) -> None:
        entry = next(b for b in bots if b.application.bot_data.worker is not None)
        body = json.loads(json.dumps(update))
        assert await worker(entry).put([(Update.de_json(body, entry.application.bot), body)])
        delivered.append(body["update_id"])
        await settled(bots)

    return Driver(world, deliver)


async def balanced(bots) -> None:
    def shared() -> bool:
        owned = [worker(b).owned for b in bots]
        count = worker(bots[0]).count
        return (
            set().union(*owned) == set(range(count))
            and sum(map(len, owned)) == count
            and all(len(o) == count // len(bots) for o in owned)
        )

    await until(shared, "the partitions shared out evenly")


def groups_of(world, bots, each: int = 2) -> list[int]:
    """``each`` new groups (with their players) in the partitions of each worker."""
    chosen: list[int] = []
    for b in bots:
        candidates = (chat for chat in range(-1001, -1999, -1) if chat not in chosen)
        mine = [chat for chat in candidates if partition_of(chat, worker(b).count) in worker(b).owned]
        chosen.extend(mine[:each])
    for chat_id in chosen:
        for person in people(chat_id):
            world.add_person(person, f"玩家{person}")
        world.add_group(chat_id, f"群{-chat_id % 1000}", [*people(chat_id)])
    return chosen


async def open_round(driver, bot_for, chat_id) -> None:
    """A muxi round dealt in the group, its banker chosen: the players' draws are awaited."""
    banker, second, third = people(chat_id)
    hands = {banker: "9S KS", second: "5S 6H", third: "2C 2D"}
    stack(bot_for(chat_id), [second, third, banker], hands, "7S")
    await driver.open_table(chat_id, list(people(chat_id)))
    await driver.press(banker, chat_id, "当庄")


async def finish_round(driver, chat_id) -> None:
    """The players draw (in their DMs): the round is settled."""
    _, second, third = people(chat_id)
    await driver.press(third, third, "不补")
    await driver.press(second, second, "补牌")
    assert "第 1 局 · 结算" in driver.table(chat_id)


@pytest.fixture
async def pair(world, postgres_url):
    """Two workers on one database, the partitions shared out between them (stopped after)."""
    bots = []
    try:
        for _ in range(2):
            bots.append(await start_bot(world, postgres_url, partitions=PARTITIONS))
        await balanced(bots)
        yield bots
    finally:
        for bot in bots:
            await stop_bot(bot)


async def test_two_workers_share_the_chats_and_each_handles_its_own_once(world, postgres_url):
    bots = [await start_bot(world, postgres_url, partitions=PARTITIONS)]
    try:
        assert len(worker(bots[0]).owned) == worker(bots[0]).count  # alone: every partition
        bots.append(await start_bot(world, postgres_url, partitions=PARTITIONS))
        await balanced(bots)
        groups = groups_of(world, bots)
        delivered: list[int] = []
        driver = through_the_inbox(world, bots, delivered)
        for chat_id in groups:
            await open_round(driver, lambda chat: owner_of(bots, chat), chat_id)
            held = owner_of(bots, chat_id)
            assert held.runtime.tables.get(chat_id) is not None
            assert all(b.runtime.tables.get(chat_id) is None for b in bots if b is not held)
            await finish_round(driver, chat_id)
        report = await bots[0].runtime.store.check()
        assert report.ok and report.figures["granted"] == 10_000 * 3 * len(groups), report
        assert report.figures["open_tables"] == len(groups)
        handed = [
            b.application.bot_data.metrics.registry.get_sample_value("paiju_inbox_updates_total")
            for b in bots
        ]
        assert sum(handed) == len(delivered)  # each update handed over once
    finally:
        for b in bots:
            await stop_bot(b)


@pytest.mark.parametrize("heard", [True, False], ids=["its-end-heard", "its-end-not-heard"])
async def test_a_worker_cut_off_loses_its_tables_to_the_other_which_finishes_their_rounds(world, pair, heard):
    """Whether the worker hears of its connection's end at once (asyncpg's termination listener) or
    only finds it closed at its next look (the listener did not fire, as once under load), it lets
    its tables go."""
    a, b = bots = pair
    groups = groups_of(world, bots)
    driver = through_the_inbox(world, bots, [])
    for chat_id in groups:
        await open_round(driver, lambda chat: owner_of(bots, chat), chat_id)

    back = asyncio.Event()
    reconnect = worker(a)._reconnect

    async def held_back() -> None:  # a stays cut off until the test lets it back
        await back.wait()
        await reconnect()

    worker(a)._reconnect = held_back
    if not heard:
        worker(a).conn.remove_termination_listener(worker(a)._cut_off)
    await a.runtime.store.backend.pool.execute(
        "SELECT pg_terminate_backend($1)", worker(a).conn.get_server_pid()
    )
    started = time.monotonic()
    await until(lambda: len(worker(b).owned) == worker(b).count, "b took every partition")
    assert time.monotonic() - started < 10  # the target: a lost worker's chats owned again in 10 s
    await until(lambda: not a.runtime.tables.by_chat, "a let go of its tables")
    assert all(b.runtime.tables.get(chat) is not None for chat in groups)  # loaded, clocks re-armed
    for chat_id in groups:
        await finish_round(driver, chat_id)

    back.set()  # a is back: the partitions are shared again, never a table held by two
    await balanced(bots)
    for chat_id in groups:
        holders = [x for x in bots if x.runtime.tables.get(chat_id) is not None]
        assert holders == [owner_of(bots, chat_id)]
    report = await b.runtime.store.check()
    assert report.ok, report.problems


async def test_a_worker_that_lost_a_partition_unawares_is_refused_when_it_acts_there(world, postgres_url):
    a = await start_bot(world, postgres_url, partitions=PARTITIONS)
    chat_id = groups_of(world, [a], each=1)[0]
    driver = through_the_inbox(world, [a], [])
    await open_round(driver, lambda chat: a, chat_id)
    b = await start_bot(world, postgres_url, partitions=PARTITIONS)
    bots = [a, b]
    try:
        for x in bots:  # no rebalancing while the fault is injected: the test moves the partition
            next(task for task in worker(x)._tasks if task.get_name() == "partitions").cancel()
        # Fault injection: b takes the chat's partition while a still holds its lock and its table.
        await worker(b).take_over(partition_of(chat_id, worker(b).count))
        assert a.runtime.tables.get(chat_id) is not None and b.runtime.tables.get(chat_id) is not None
        before = await a.runtime.store.load_table(a.runtime.tables.get(chat_id).table_id)
        third = people(chat_id)[2]

        answered = len(world.popups.get(third, []))
        await a.driver.press(third, third, "不补")  # a acts on the table: its save is refused
        assert len(world.popups.get(third, [])) == answered, "left to the owner to answer (issue 47)"
        assert (await a.runtime.store.load_table(before.id)).version == before.version

        await b.driver.press(third, third, "不补")  # b, the owner now, acts: taken
        assert (await b.runtime.store.load_table(before.id)).version == before.version + 1
        assert (await b.runtime.store.check()).ok
    finally:
        for x in bots:
            await stop_bot(x)


async def test_an_older_update_put_after_a_newer_one_was_handed_over_is_still_handled(world, postgres_url):
    """Telegram posts several updates at once: the inbox may get an older id after a newer one."""
    bot = await start_bot(world, postgres_url, partitions=PARTITIONS)
    try:
        newer = world.post(1, 1, "/balance")
        older = world.post(1, 1, "/balance")  # the same chat: the same partition
        older["update_id"] = int(newer["update_id"]) - 1_000
        for update in (newer, older):
            body = json.loads(json.dumps(update))
            assert await worker(bot).put([(Update.de_json(body, bot.application.bot), body)])
            await settled([bot])
        assert sum("10,000" in message.text for message in world.bot_messages(1)) == 2  # both answered
    finally:
        await stop_bot(bot)


async def test_an_update_taken_here_and_still_in_the_inbox_is_dropped_not_handed_over_again(
    world, postgres_url
):
    """Telegram's redelivery put in the inbox while the first delivery's mark was committing (the
    put saw it not taken yet) stays there once the mark commits; and a read of the inbox begun
    before that commit still returns it. Either way the update is taken here: it leaves the inbox
    without being handed over again (handled once, not counted as a redelivery)."""
    bot = await start_bot(world, postgres_url, partitions=PARTITIONS)
    try:
        update = json.loads(json.dumps(world.post(1, 1, "/balance")))
        assert await worker(bot).put([(Update.de_json(update, bot.application.bot), update)])
        await settled([bot])
        count = worker(bot).count
        conn = await asyncpg.connect(postgres_url)
        try:
            await conn.execute(
                "INSERT INTO inbox (update_id, partition, body, received_at) VALUES ($1, $2, $3, $4)",
                update["update_id"],
                partition_of(1, count),
                json.dumps(update),
                "2026-12-02T00:00:00",
            )
        finally:
            await conn.close()
        worker(bot).notified.add(partition_of(1, count))
        worker(bot).wake.set()
        await settled([bot])
        sample = bot.application.bot_data.metrics.registry.get_sample_value
        assert sample("paiju_updates_redelivered_total") == 0
        assert sample("paiju_inbox_updates_total") == 1
        assert sum("10,000" in message.text for message in world.bot_messages(1)) == 1
    finally:
        await stop_bot(bot)


async def test_a_press_is_marked_taken_in_its_actions_transaction(world, postgres_url, monkeypatch):
    """A worker's press leaves the inbox in the commit of the table action it makes: a worker lost
    right after that commit (here: doing nothing once the update is handled) leaves nothing for the
    next owner to act on again."""
    bot = await start_bot(world, postgres_url, partitions=PARTITIONS)
    try:
        chat_id = groups_of(world, [bot], each=1)[0]
        delivered: list[int] = []
        driver = through_the_inbox(world, [bot], delivered)
        await open_round(driver, lambda chat: bot, chat_id)

        async def lost_once_handled(self, handling) -> None:
            """(the worker would save the id here, had its action not)"""

        def lost(self, update_id):  # (nor at its next look at the inbox)
            raise AssertionError("the worker is lost")

        monkeypatch.setattr(SeenUpdates, "handled", lost_once_handled)
        monkeypatch.setattr(SeenUpdates, "save", lost)
        third = people(chat_id)[2]
        await driver.press(third, third, "不补")  # waits until the inbox is empty
        assert await bot.runtime.store.update_taken(delivered[-1])
        assert "✋ 不补" in driver.table(chat_id)
    finally:
        await stop_bot(bot)


async def test_a_partition_that_could_not_be_loaded_is_let_go_and_taken_at_the_next_look(
    world, postgres_url, monkeypatch
):
    from storage import Store

    real, failed = Store.open_tables_in, []

    async def failing_once(self, chosen, count):
        if not failed:
            failed.append(chosen)
            raise OSError("the database went away for a moment")
        return await real(self, chosen, count)

    monkeypatch.setattr(Store, "open_tables_in", failing_once)
    bot = await start_bot(world, postgres_url, partitions=PARTITIONS)
    try:
        assert failed and len(worker(bot).owned) == PARTITIONS - 1  # the one that failed: not owned
        await until(lambda: len(worker(bot).owned) == PARTITIONS, "the partition taken at the next look")
        assert failed[0] <= worker(bot).owned
    finally:
        await stop_bot(bot)


@pytest.mark.parametrize("notices", ["as sent", "the other order", "the new chat's only"])
async def test_a_table_whose_group_upgrades_into_another_workers_partition_goes_to_that_worker(
    world, pair, notices
):
    """Issue 47, point 8: either notice moves the table; both are handled by the old chat's owner
    (the one holding the table), whichever order they come in, and the other is a no-op."""
    a, b = bots = pair
    old = groups_of(world, [a], each=1)[0]
    new = next(chat for chat in range(-100_100_000, -100_200_000, -1) if worker(b).owns(chat))
    driver = through_the_inbox(world, bots, [])
    await open_round(driver, lambda chat: owner_of(bots, chat), old)
    table_id = a.runtime.tables.get(old).table_id

    told = world.upgrade_group(old, new)  # both service messages, as Telegram sends them
    told = {"as sent": told, "the other order": told[::-1], "the new chat's only": told[1:]}[notices]
    for update in told:
        await driver.deliver(update)
    await until(lambda: b.runtime.tables.get(new) is not None, "the new chat's worker holds the table")
    assert a.runtime.tables.get(old) is None and a.runtime.tables.get(new) is None
    assert b.runtime.tables.get(new).table_id == table_id
    await settled(bots)
    assert "第 1 局" in driver.table(new)  # shown in the supergroup, by its worker
    _, second, third = people(old)
    await driver.press(third, third, "不补")  # played on there
    await driver.press(second, second, "补牌")
    assert "第 1 局 · 结算" in driver.table(new)
    assert (await b.runtime.store.check()).ok


async def test_a_hung_worker_misses_its_lease_and_the_other_takes_its_tables(world, pair):
    """Issue 47, point 3: a worker that is there but does nothing (stopped, hung: its connection
    stays open, and its advisory locks with it) stops renewing its lease. It stops acting on its
    own clock; the other ends its session once the lease lapsed and takes every partition, and
    finishes its rounds. Back, the hung one finds its session gone, lets its tables go, and the
    partitions are shared again, never a table held by two."""
    a, b = bots = pair
    groups = groups_of(world, bots)
    driver = through_the_inbox(world, bots, [])
    for chat_id in groups:
        await open_round(driver, lambda chat: owner_of(bots, chat), chat_id)
    hung = worker(a)
    for task in hung._tasks:  # a hangs: nothing of it runs, its connection stays open
        task.cancel()
    started = time.monotonic()
    await until(lambda: not hung.may_act(), "a knows, by its own clock, that its lease is not sure")
    assert len(worker(b).owned) < worker(b).count, "before anyone could take its partitions"
    await until(lambda: len(worker(b).owned) == worker(b).count, "b took every partition", timeout=20)
    took = time.monotonic() - started
    assert took < workers.LEASE + 3 * workers.REBALANCE, took
    assert hung.conn.is_closed() or not hung.owned, "its session was ended"
    for chat_id in groups:
        assert b.runtime.tables.get(chat_id) is not None
        await finish_round(driver, chat_id)

    hung._tasks = [  # a runs again
        asyncio.create_task(hung._renewing()),
        asyncio.create_task(hung._rebalancing()),
        asyncio.create_task(hung._handing_over()),
    ]
    await until(lambda: not a.runtime.tables.by_chat, "a let go of its tables")
    await balanced(bots)
    for chat_id in groups:
        holders = [x for x in bots if x.runtime.tables.get(chat_id) is not None]
        assert holders in ([], [owner_of(bots, chat_id)])
    report = await b.runtime.store.check()
    assert report.ok, report.problems


async def test_a_cap_one_worker_learns_from_429s_about_the_bot_every_worker_keeps(pair):
    """Issue 50, point 1: no cap on new messages until Telegram says otherwise; 429s in two DMs at
    once cap the bot, and the other worker keeps to that cap too (told once, not asked per message),
    each to its part."""
    _, b = pair
    senders = [bot.runtime.presenter.sender for bot in pair]
    assert [sender.new.learnt for sender in senders] == [None, None]
    senders[0].rate_limited(1001)
    senders[0].rate_limited(1002)
    cap = senders[0].new.learnt
    assert cap is not None
    await until(lambda: senders[1].new.learnt == cap, "the other worker keeps to the cap learnt")
    assert senders[1].new.per_second == cap / worker(b).workers


async def test_a_worker_keeps_renewing_its_lease_while_keeping_its_groups_last_minute_waits(
    world, postgres_url, pair
):
    """Keeping what a group got in the last minute is a write that may wait, on a row lock held by a
    paused worker's open transaction (here, a session of the test's). The lease is renewed all the
    same: the worker goes on acting, and the write is done once the lock goes."""
    bots = pair
    (chat_id, *_) = groups_of(world, bots, each=1)
    driver = through_the_inbox(world, bots, [])
    await open_round(driver, lambda chat: owner_of(bots, chat), chat_id)
    holder = worker(owner_of(bots, chat_id))
    locked = await asyncpg.connect(postgres_url)
    try:

        async def kept() -> bool:
            return await locked.fetchval("SELECT count(*) FROM chat_budgets WHERE chat_id = $1", chat_id) > 0

        await until(kept, "the group's last minute kept once")
        transaction = locked.transaction()
        await transaction.start()
        await locked.execute("SELECT * FROM chat_budgets WHERE chat_id = $1 FOR UPDATE", chat_id)
        since = workers.since_boot()
        await finish_round(driver, chat_id)  # (the group's table changes: its last minute is kept again)
        await until(
            lambda: holder.acting_until > since + workers.LEASE + 2 * workers.RENEW_EVERY,
            "the lease renewed past its end while the write waits for the lock",
            timeout=2 * workers.LEASE,
        )
        assert holder.may_act()
        sent = await locked.fetchval("SELECT sent FROM chat_budgets WHERE chat_id = $1", chat_id)
        await transaction.rollback()

        async def kept_again() -> bool:
            return await locked.fetchval("SELECT sent FROM chat_budgets WHERE chat_id = $1", chat_id) != sent

        await until(kept_again, "the write done once the lock went")
    finally:
        await locked.close()


async def test_a_worker_whose_renewal_goes_unanswered_ends_its_connection_and_comes_back(
    world, postgres_url, pair
):
    """A query on the worker's own connection that never gets its answer (here its renewal waits on
    a row lock a session of the test's holds; in life a hung server, or a socket open behind a lost
    peer) held the lease for as long as it waited: the worker stayed silent, its tables waited, and
    it never took its share again. Unanswered for ``ANSWER_WITHIN`` seconds, the connection is ended
    and taken again: the worker's tables go to the other meanwhile, and it is back once its renewal
    goes through."""
    bots = pair
    (chat_id, *_) = groups_of(world, bots, each=1)
    driver = through_the_inbox(world, bots, [])
    await open_round(driver, lambda chat: owner_of(bots, chat), chat_id)
    holder = worker(owner_of(bots, chat_id))
    first_session = holder.conn.get_server_pid()
    locked = await asyncpg.connect(postgres_url)
    try:
        transaction = locked.transaction()
        await transaction.start()
        await locked.execute("SELECT * FROM workers WHERE name = $1 FOR UPDATE", holder.name)
        await until(
            lambda: not holder.conn.is_closed() and holder.conn.get_server_pid() != first_session,
            "the worker's connection ended and taken again while its renewal waited",
            timeout=3 * workers.ANSWER_WITHIN,
        )
        assert not holder.may_act()  # (its renewal still waits for the lock, on the new connection)
        await transaction.rollback()
        await until(holder.may_act, "the lease renewed once the lock went", timeout=2 * workers.LEASE)
        await balanced(bots)
    finally:
        await locked.close()


async def test_a_partition_let_go_is_handed_over_clean_with_its_groups_last_minute(
    world, postgres_url, pair, caplog
):
    """Issue 47, points 4 and 6: a third worker joins, and the two others let a partition each go
    to it. The worker letting one go finishes what it has in flight, saves what its messages show
    and what its groups got in the last minute, then lets it go. The next owner counts those
    requests against the group's 20 a minute, writes nothing refused, and does not look over the
    DMs for a message nobody lost."""
    bots = list(pair)
    count = worker(bots[0]).count
    groups = [next(c for c in range(-1001, -1999, -1) if partition_of(c, count) == p) for p in range(count)]
    for chat_id in groups:  # a table in every partition: some move, whichever they are
        for person in people(chat_id):
            world.add_person(person, f"玩家{person}")
        world.add_group(chat_id, f"群{-chat_id % 1000}", [*people(chat_id)])
    driver = through_the_inbox(world, bots, [])
    for chat_id in groups:
        await open_round(driver, lambda chat: owner_of(bots, chat), chat_id)
    before = {chat_id: owner_of(bots, chat_id) for chat_id in groups}
    requests_before = len(world.requests)
    caplog.clear()
    c = await start_bot(world, postgres_url, partitions=PARTITIONS)
    try:
        bots.append(c)

        def shared_by_three() -> bool:
            owned = [worker(x).owned for x in bots]
            return sum(map(len, owned)) == count and len(set().union(*owned)) == count and len(owned[2]) >= 2

        await until(shared_by_three, "the new worker took its share")
        await until(lambda: all(not worker(x).in_flight.get(p) for x in bots for p in range(count)))
        await until(lambda: sum(len(x.runtime.tables.by_chat) for x in bots) == len(groups), "tables adopted")
        moved = [chat_id for chat_id in groups if c.runtime.tables.get(chat_id) is not None]
        assert moved, "some tables moved to the new worker"
        await c.runtime.wait_idle()
        for chat_id in moved:
            assert before[chat_id].runtime.tables.get(chat_id) is None
            budget = c.runtime.presenter.sender.lanes[chat_id].budget
            assert budget.history(time.monotonic()), "the group's requests count at its new owner"
        probes = [r for r in world.requests[requests_before:] if r.method == "editMessageReplyMarkup"]
        assert probes == [], "no DM looked over: nothing was lost"
        for chat_id in groups:
            await finish_round(driver, chat_id)
        assert "NotOwner" not in caplog.text
    finally:
        await stop_bot(c)


async def test_the_polling_workers_deaf_spells_hold_every_workers_turns(pair):
    """Issue 47, point 9, with workers: the worker that polls tells the others when updates stop
    coming in and when they come again, so every worker's turns are held and given the time back."""
    a, b = pair
    a.runtime.hearing.told = worker(a)._tell_hearing  # (a is the one polling: as Worker._polling sets)
    a.runtime.hearing.deaf()
    await until(lambda: b.runtime.hearing.is_deaf(), "b knows the bot is deaf")
    a.runtime.hearing.heard()
    await until(lambda: not b.runtime.hearing.is_deaf(), "and that it hears again")
    assert list(b.runtime.hearing.spells) == list(a.runtime.hearing.spells)
