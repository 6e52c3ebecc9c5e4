"""Several workers on one database, as storage sees it: the partitions and their epochs, the fence
on every write to a table, the inbox (an update kept until its owner has taken it), and the
workers' advisory locks, on the connection that holds the bot's lock (taken again once it ends)."""

from __future__ import annotations

import asyncpg
import pytest

from storage import DatabaseInUse, partitions
from storage.on_postgres import run_query
from storage.partitions import Fence, NotOwner, partition_of
from storage.postgres import hold_postgres
from tests.unit.storage.storage_helpers import STATE, ante
from tests.waiting import until

COUNT = 4
GROUP = -1001  # partition 3 of 4 (Python's % is never negative)


async def test_the_partitions_are_made_once_and_each_claim_is_a_new_epoch(store):
    assert await store.ensure_partitions(COUNT) == COUNT
    assert await store.ensure_partitions(16) == COUNT  # the first worker's count stays
    assert await store.claim_partition(2, "a") == 1
    assert await store.claim_partition(2, "b") == 2
    owners = await store.partition_owners()
    assert owners[2] == ("b", 2) and owners[0] == (None, 0) and len(owners) == COUNT


async def test_the_open_tables_of_some_partitions_are_found_by_their_chats(store):
    await store.ensure_partitions(COUNT)
    chats = [-1000, -1001, -1002, -1003, 5, 6]
    made = {chat: await store.create_table(chat, "muxi", STATE) for chat in chats}
    chosen = {partition_of(-1001, COUNT), partition_of(6, COUNT)}
    found = await store.open_tables_in(chosen, COUNT)
    assert {t.chat_id for t in found} == {c for c in chats if partition_of(c, COUNT) in chosen}
    assert {t.id for t in found} <= {t.id for t in made.values()}


async def test_a_write_to_a_table_is_refused_unless_its_worker_owns_the_partition_now(store):
    await store.ensure_partitions(COUNT)
    await store.ensure_person(1, "Ming")
    partition = partition_of(GROUP, COUNT)
    a = Fence("a", COUNT, {partition: await store.claim_partition(partition, "a")})
    store.fence_with(a)
    table = await store.create_table(GROUP, "muxi", STATE)
    assert await store.commit_action(
        table.id, round_no=1, action_seq=1, payments=[ante(1, 10)], state=STATE, deadline=None
    )

    # Worker b takes the partition over; a, unaware, tries to go on: every write is refused.
    b = Fence("b", COUNT, {partition: await store.claim_partition(partition, "b")})
    for attempt in (
        store.commit_action(
            table.id, round_no=1, action_seq=2, payments=[ante(1, 10)], state=STATE, deadline=None
        ),
        store.update_messages(table.id, message_id=5),
    ):
        with pytest.raises(NotOwner):
            await attempt
    store.fence_with(Fence("a", COUNT, {}))  # nor may a worker write to a partition it never claimed
    with pytest.raises(NotOwner):
        await store.create_table(GROUP - 4, "muxi", STATE)
    assert (await store.load_table(table.id)).version == 1 and await store.balance(1) == 9_990

    store.fence_with(b)  # the owner now
    assert await store.commit_action(
        table.id, round_no=1, action_seq=2, payments=[ante(1, 10)], state=STATE, deadline=None
    )
    await store.update_messages(table.id, message_id=5)
    assert (await store.load_table(table.id)).message_id == 5
    assert (await store.check()).ok


async def test_an_update_waits_in_the_inbox_once_until_its_owner_takes_it(store):
    await store.ensure_partitions(COUNT)
    assert await store.put_updates([(12, 1, '{"update_id": 12}')]) == 1
    assert await store.put_updates([(10, 3, '{"update_id": 10}')]) == 1
    assert await store.put_updates([(11, 1, '{"update_id": 11}')]) == 1
    assert await store.put_updates([(11, 1, '{"update_id": 11}')]) == 0  # delivered again: once
    assert await store.waiting_updates({1}, 0, 10) == [
        (11, 1, '{"update_id": 11}'),
        (12, 1, '{"update_id": 12}'),
    ]
    assert [u[0] for u in await store.waiting_updates({1, 3}, 10, 10)] == [11, 12]
    assert await store.inbox_depth() == 3

    store.fence_with(Fence("a", COUNT, {}))  # a worker that does not own partition 1 cannot take 11
    with pytest.raises(NotOwner):
        await store.remember_update(11)
    assert await store.inbox_depth() == 3 and not await store.update_taken(11)

    store.fence_with(Fence("a", COUNT, {1: await store.claim_partition(1, "a")}))
    await store.remember_update(11)
    assert await store.update_taken(11)
    assert [u[0] for u in await store.waiting_updates({1}, 0, 10)] == [12]
    assert await store.put_updates([(11, 1, '{"update_id": 11}')]) == 0  # taken: never again


async def test_the_workers_locks_say_who_is_alive_and_who_holds_which_partition(postgres_url):
    a, b = [await hold_postgres(postgres_url, shared=True) for _ in range(2)]  # two workers' own
    try:
        assert await run_query(a.conn, partitions.live_workers()) == 0  # (none has joined yet)
        assert await run_query(a.conn, partitions.join(7))
        assert not await run_query(b.conn, partitions.join(7))  # (drawn already: it draws again)
        assert await run_query(b.conn, partitions.join(8))
        assert await run_query(a.conn, partitions.take_receiving())
        assert not await run_query(b.conn, partitions.take_receiving())  # one polls Telegram
        assert await run_query(b.conn, partitions.live_workers()) == 2  # (a's two locks: one worker)

        assert await run_query(a.conn, partitions.try_partition(3))
        assert await run_query(b.conn, partitions.try_partition(5))
        assert not await run_query(b.conn, partitions.try_partition(3))
        assert await run_query(b.conn, partitions.held()) == {3, 5}
        await run_query(a.conn, partitions.let_partition_go(3))
        assert await run_query(a.conn, partitions.held()) == {5}
        assert await run_query(b.conn, partitions.try_partition(3))

        heard: list[tuple[str, str]] = []
        await b.conn.add_listener(
            "paiju_test", lambda conn, pid, channel, payload: heard.append((channel, payload))
        )
        await run_query(a.conn, partitions.notify("paiju_test", "12"))
        await until(lambda: heard == [("paiju_test", "12")], "b heard a")

        b.release()  # its session ends, and every lock of it with it

        async def gone_with_b() -> bool:
            alive = await run_query(a.conn, partitions.live_workers())
            return alive == 1 and await run_query(a.conn, partitions.held()) == set()

        await until(gone_with_b, "b's locks went with its session")
    finally:
        a.release()
        b.release()


async def test_a_lock_whose_connection_ended_is_taken_again_as_it_was_taken(postgres_url):
    lock = await hold_postgres(postgres_url, shared=True)
    other = await asyncpg.connect(postgres_url)
    try:
        lost = lock.conn
        await other.execute("SELECT pg_terminate_backend($1)", lost.get_server_pid())
        await until(lost.is_closed, "its connection ended")
        await lock.take_again()
        assert lock.held and lock.conn is not lost and not lock.conn.is_closed()
        with pytest.raises(DatabaseInUse):  # held again: a tool that needs it alone is refused
            await hold_postgres(postgres_url)
        (await hold_postgres(postgres_url, shared=True)).release()  # shared, as it was taken
    finally:
        lock.release()
        await other.close()
