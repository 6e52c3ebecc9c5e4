"""Which updates were taken (``storage/updates.py``) and ``bot.updates.seen.SeenUpdates`` on a real
store: each update handled once, across a restart and past what memory keeps; forgotten once
Telegram can no longer send it again."""

from __future__ import annotations

import asyncio

import pytest

from bot.updates.seen import Handling, SeenUpdates
from storage import UpdateTaken, open_store
from tests.unit.storage.storage_helpers import STATE


async def take(deliveries: SeenUpdates, update_id: int) -> bool:
    """What handling an update does with its id: ``first_time``; then its id saved once handled,
    its handling making no table action (``SeenUpdates.handle``)."""
    first = await deliveries.first_time(update_id)
    if first:
        await deliveries.handled(Handling(update_id, None))
    return first


async def test_an_update_is_taken_once_and_still_known_after_a_restart(db_path, clock):
    store = await open_store(db_path, now=clock)
    deliveries = SeenUpdates(store)
    await deliveries.load()
    assert [await take(deliveries, i) for i in (5, 6, 5, 7, 6)] == [True, True, False, True, False]
    await deliveries.flush()
    await store.close()

    store = await open_store(db_path, now=clock)
    try:
        again = SeenUpdates(store)
        await again.load()
        assert again.floor == 7
        assert [await take(again, i) for i in (6, 8, 5, 8, 4)] == [False, True, False, False, True]
    finally:
        await store.close()


async def test_an_id_memory_let_go_is_looked_up_in_the_database(store):
    deliveries = SeenUpdates(store, memory=3)
    await deliveries.load()
    for update_id in range(1, 10):
        assert await take(deliveries, update_id)
    await deliveries.flush()
    assert 1 not in deliveries.recent and deliveries.floor == 6
    assert not await take(deliveries, 1)
    assert await take(deliveries, 10)


async def test_two_deliveries_of_one_update_at_once_pass_once(store):
    deliveries = SeenUpdates(store)
    await deliveries.load()
    await take(deliveries, 50)
    await deliveries.flush()
    restarted = SeenUpdates(store)
    await restarted.load()  # 41 is below the floor: its check waits for the database
    passed = await asyncio.gather(*(take(restarted, 41) for _ in range(5)))
    assert sorted(passed) == [False, False, False, False, True]


async def test_updates_older_than_telegram_keeps_them_are_forgotten(store, clock):
    deliveries = SeenUpdates(store)
    await deliveries.load()
    await take(deliveries, 1)
    await deliveries.flush()
    clock.advance(hours=49)
    assert await store.forget_old_updates() == 1
    assert not await store.update_taken(1)


async def test_only_the_newest_ids_are_kept_however_recent(store):
    await asyncio.gather(*(store.remember_update(i) for i in range(1, 11)))
    assert await store.forget_old_updates(newest=4) == 6
    assert [await store.update_taken(i) for i in (6, 7, 10)] == [False, True, True]
    assert await store.forget_old_updates(newest=4) == 0


@pytest.mark.sqlite_only
async def test_an_id_is_saved_no_later_than_what_its_handling_writes(store):
    """A crash just after a handler's write must not leave its update unknown (it would be
    handled again when Telegram sends it once more). (One process; a worker saves the id in its
    table action's transaction: the test below.)"""
    deliveries = SeenUpdates(store)
    await deliveries.load()
    for update_id in range(1000, 1010):  # writes in flight ahead, as under load
        await take(deliveries, update_id)
    assert await take(deliveries, 1010)
    await store.probe_write()  # what the handler of update 1010 writes, and waits for
    assert await store.update_taken(1010)


async def test_an_actions_updates_are_taken_with_it_or_not_at_all(store):
    """A worker's update is marked taken in the transaction of the table action it makes
    (``commit_action(taken=…)``): a refused action leaves it untaken; one taken already (by another
    worker) refuses the action, which saves nothing."""
    for person in (1, 2):
        await store.ensure_person(person, f"p{person}")
    table = await store.create_table(-1, "showhand", STATE)

    async def act(seq: int, taken: list[int]) -> bool:
        return await store.commit_action(
            table.id, round_no=1, action_seq=seq, state=STATE, deadline=None, taken=taken
        )

    assert await act(1, [71])
    assert await store.update_taken(71)
    assert not await act(1, [72])  # saved before (a replay): its update is not taken with it
    assert not await store.update_taken(72)
    with pytest.raises(UpdateTaken):
        await act(2, [71])
    assert (await store.open_table(-1)).version == 1, "nothing of the refused action was saved"
