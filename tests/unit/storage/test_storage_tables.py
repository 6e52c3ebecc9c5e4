"""Saved tables: one open per chat, actions saved with their bookings, replays, messages, reload."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from storage import (
    EscrowMismatch,
    IdempotencyConflict,
    StaleVersion,
    TableAlreadyOpen,
    TableNotOpen,
    UnknownTable,
    open_store,
)
from tests.unit.storage.storage_helpers import STATE, ante, pot, settle
from tests.waiting import until

DEADLINE = datetime(2025, 3, 1, 4, 0, 30, tzinfo=UTC)


async def seated(store, *people):
    for person in people:
        await store.ensure_person(person, f"p{person}")


async def test_a_chat_has_one_open_table_and_a_new_one_after_it_closed(store):
    first = await store.create_table(-1, "muxi", STATE, deadline=DEADLINE, message_id=10)
    assert (first.chat_id, first.game, first.version, first.escrow, first.closed) == (-1, "muxi", 0, 0, False)
    assert first.deadline == DEADLINE and first.message_id == 10 and first.dm_message_ids == {}
    with pytest.raises(TableAlreadyOpen) as already:
        await store.create_table(-1, "showhand", STATE)
    assert already.value.table_id == first.id
    other_chat = await store.create_table(-2, "showhand", STATE)
    assert other_chat.id != first.id
    assert await store.commit_action(
        first.id, round_no=0, action_seq=1, state={"over": True}, deadline=None, closed=True
    )
    assert await store.open_table(-1) is None
    second = await store.create_table(-1, "showhand", STATE)
    assert (await store.open_table(-1)).id == second.id
    assert [t.id for t in await store.open_tables()] == [other_chat.id, second.id]
    with pytest.raises(ValueError):
        await store.create_table(-3, "poker", STATE)


async def test_an_action_saves_state_and_books_in_one_call_and_a_replay_books_nothing(store, clock):
    await seated(store, 1, 2)
    table = await store.create_table(-1, "showhand", STATE)
    batch = [ante(1, 100), ante(2, 100)]
    clock.advance(seconds=5)
    assert await store.commit_action(
        table.id, round_no=1, action_seq=1, payments=batch, state={"pot": 200}, deadline=DEADLINE
    )
    saved = await store.load_table(table.id)
    assert (saved.state, saved.version, saved.escrow, saved.deadline) == ({"pot": 200}, 1, 200, DEADLINE)
    assert saved.updated_at == clock.moment and saved.created_at < saved.updated_at

    clock.advance(seconds=5)
    assert not await store.commit_action(
        table.id, round_no=1, action_seq=1, payments=batch, state={"pot": 999}, deadline=None
    )
    assert await store.load_table(table.id) == saved
    assert [await store.balance(p) for p in (1, 2)] == [9_900, 9_900]
    assert len(await store.ledger(1)) == 2


async def test_an_action_without_payments_replays_by_version(store):
    table = await store.create_table(-1, "muxi", STATE)
    assert await store.commit_action(table.id, round_no=0, action_seq=1, state={"a": 1}, deadline=None)
    assert not await store.commit_action(table.id, round_no=0, action_seq=1, state={"a": 2}, deadline=None)
    assert (await store.load_table(table.id)).state == {"a": 1}


async def test_a_new_batch_with_a_stale_version_is_refused(store):
    await seated(store, 1, 2)
    table = await store.create_table(-1, "muxi", STATE)
    await store.commit_action(table.id, round_no=1, action_seq=5, state=STATE, deadline=None)
    with pytest.raises(StaleVersion):
        await store.commit_action(
            table.id, round_no=1, action_seq=4, payments=[settle(1, 2, 5)], state=STATE, deadline=None
        )
    assert await store.balance(1) == 10_000


async def test_a_batch_overlapping_a_booked_one_is_a_conflict_not_a_replay(store):
    await seated(store, 1, 2, 3)
    table = await store.create_table(-1, "muxi", STATE)
    await store.commit_action(
        table.id, round_no=1, action_seq=1, payments=[settle(1, 2, 5)], state=STATE, deadline=None
    )
    for other in ([settle(1, 2, 6)], [settle(1, 2, 5), settle(1, 3, 5)]):
        with pytest.raises(IdempotencyConflict):
            await store.commit_action(
                table.id, round_no=1, action_seq=1, payments=other, state=STATE, deadline=None
            )
    assert [await store.balance(p) for p in (1, 2, 3)] == [9_995, 10_005, 10_000]


async def test_escrow_follows_the_movements_and_must_be_empty_to_close(store):
    await seated(store, 1, 2)
    table = await store.create_table(-1, "showhand", STATE)
    with pytest.raises(EscrowMismatch):
        await store.commit_action(
            table.id, round_no=1, action_seq=1, payments=[ante(1, 100)], state=STATE, deadline=None, escrow=50
        )
    assert await store.commit_action(
        table.id, round_no=1, action_seq=1, payments=[ante(1, 100)], state=STATE, deadline=None, escrow=100
    )
    with pytest.raises(EscrowMismatch):
        await store.commit_action(table.id, round_no=1, action_seq=2, state=STATE, deadline=None, closed=True)
    assert await store.commit_action(
        table.id,
        round_no=1,
        action_seq=2,
        payments=[pot(2, 100)],
        state=STATE,
        deadline=None,
        escrow=0,
        closed=True,
    )
    assert (await store.load_table(table.id)).closed
    with pytest.raises(TableNotOpen):
        await store.commit_action(table.id, round_no=2, action_seq=3, state=STATE, deadline=None)
    # A replay of the closing batch is still recognised as one.
    assert not await store.commit_action(
        table.id, round_no=1, action_seq=2, payments=[pot(2, 100)], state=STATE, deadline=None, closed=True
    )
    assert (await store.check()).ok


async def test_unknown_tables_are_errors(store):
    with pytest.raises(UnknownTable):
        await store.commit_action(99, round_no=1, action_seq=1, state=STATE, deadline=None)
    with pytest.raises(UnknownTable):
        await store.update_messages(99, message_id=1)
    assert await store.load_table(99) is None


async def test_message_ids_are_updated_without_an_action(store):
    table = await store.create_table(-1, "muxi", STATE, message_id=10)
    await store.update_messages(table.id, dm_message_ids={1: 100, 2: 200})
    await store.update_messages(table.id, message_id=11, dm_message_ids={2: 201, 3: 300})
    await store.update_messages(table.id, dm_message_ids={1: None})
    saved = await store.load_table(table.id)
    assert saved.message_id == 11 and saved.dm_message_ids == {2: 201, 3: 300}
    assert saved.version == 0 and saved.state == STATE
    await store.update_messages(table.id, message_id=None)
    assert (await store.load_table(table.id)).message_id is None


async def test_a_restarted_store_reloads_open_tables_with_their_deadlines(db_path, clock):
    async with await open_store(db_path, now=clock) as store:
        await seated(store, 1, 2)
        table = await store.create_table(-1, "showhand", STATE, message_id=5)
        await store.commit_action(
            table.id,
            round_no=1,
            action_seq=3,
            payments=[ante(1, 50)],
            state={"big": "状态" * 500},
            deadline=DEADLINE,
        )
        await store.update_messages(table.id, dm_message_ids={1: 41})
        closed = await store.create_table(-2, "muxi", STATE)
        await store.commit_action(
            closed.id, round_no=0, action_seq=1, state=STATE, deadline=None, closed=True
        )
        before = await store.load_table(table.id)
    async with await open_store(db_path, now=clock) as store:
        [reloaded] = await store.open_tables()
        assert reloaded == before
        assert reloaded.deadline == DEADLINE and reloaded.dm_message_ids == {1: 41}
        assert reloaded.state == {"big": "状态" * 500}


async def test_bad_state_or_a_naive_deadline_is_refused_before_anything_is_written(store):
    await seated(store, 1, 2)
    table = await store.create_table(-1, "muxi", STATE)
    with pytest.raises(ValueError, match="naive"):
        await store.commit_action(
            table.id,
            round_no=1,
            action_seq=1,
            payments=[settle(1, 2, 5)],
            state=STATE,
            deadline=datetime(2025, 3, 1, 4, 0),
        )
    with pytest.raises(TypeError):
        await store.commit_action(
            table.id,
            round_no=1,
            action_seq=1,
            payments=[settle(1, 2, 5)],
            state={"x": object()},
            deadline=None,
        )
    assert await store.balance(1) == 10_000 and (await store.load_table(table.id)).version == 0


async def test_a_state_orjson_refuses_is_saved_as_the_standard_library_writes_it(store):
    """Keys that are not strings, an integer past 64 bits: saved, and read back as JSON reads them."""
    table = await store.create_table(-1, "muxi", {"1": 2**70, 3: [4]})
    assert (await store.load_table(table.id)).state == {"1": 2**70, "3": [4]}
    await store.commit_action(table.id, round_no=0, action_seq=1, state={5: "六"}, deadline=None)
    assert (await store.load_table(table.id)).state == {"5": "六"}
    for not_plain in (datetime(2026, 12, 3), settle(1, 2, 5)):  # (orjson would write them; refused)
        with pytest.raises(TypeError):
            await store.commit_action(
                table.id, round_no=0, action_seq=2, state={"x": not_plain}, deadline=None
            )
    assert (await store.load_table(table.id)).version == 1


async def test_what_an_edited_message_shows_is_saved_with_the_tables_next_action(store):
    table = await store.create_table(-1, "muxi", STATE, message_id=10)
    store.shown_later(table.id, {"table": "t1", "5": "a"})
    store.shown_later(table.id, {"table": "t2"})
    assert (await store.load_table(table.id)).shown == {}  # (not yet: no write of its own)
    await store.commit_action(table.id, round_no=0, action_seq=1, state={"a": 1}, deadline=None)
    saved = await store.load_table(table.id)
    assert saved.shown == {"table": "t2", "5": "a"} and saved.state == {"a": 1}


async def test_what_an_edited_message_shows_is_saved_soon_when_no_write_of_its_table_follows(store):
    table = await store.create_table(-1, "muxi", STATE, message_id=10)
    store.shown_saved_within = 0.05
    store.shown_later(table.id, {"table": "t1"})

    async def saved() -> bool:
        return (await store.load_table(table.id)).shown == {"table": "t1"}

    await until(saved, "the edit saved by itself")


async def test_an_edit_not_saved_yet_is_saved_as_the_store_closes(db_path, clock):
    async with await open_store(db_path, now=clock) as store:
        table = await store.create_table(-1, "muxi", STATE, message_id=10)
        store.shown_later(table.id, {"table": "t1"})
    async with await open_store(db_path, now=clock) as store:
        assert (await store.load_table(table.id)).shown == {"table": "t1"}


async def test_a_new_message_after_an_edit_not_saved_yet_is_saved_after_it(db_path, clock):
    async with await open_store(db_path, now=clock) as store:
        table = await store.create_table(-1, "muxi", STATE, message_id=10)
        store.shown_later(table.id, {"5": "edited", "table": "t1"})
        await store.update_messages(table.id, dm_message_ids={5: 51}, shown={"5": "new"})
        saved = await store.load_table(table.id)
        assert saved.shown == {"5": "new", "table": "t1"} and saved.dm_message_ids == {5: 51}
    async with await open_store(db_path, now=clock) as store:  # (and the edit is not written again)
        assert (await store.load_table(table.id)).shown == {"5": "new", "table": "t1"}


async def test_an_edit_taken_by_an_action_that_failed_is_saved_with_the_next_write(store):
    await seated(store, 1, 2)
    table = await store.create_table(-1, "muxi", STATE)
    await store.commit_action(table.id, round_no=1, action_seq=5, state=STATE, deadline=None)
    store.shown_later(table.id, {"table": "t1", "5": "a"})
    with pytest.raises(StaleVersion):
        await store.commit_action(
            table.id, round_no=1, action_seq=4, payments=[settle(1, 2, 5)], state=STATE, deadline=None
        )
    store.shown_later(table.id, {"5": "b"})  # (noted while it failed: the newer)
    await store.commit_action(table.id, round_no=1, action_seq=6, state=STATE, deadline=None)
    assert (await store.load_table(table.id)).shown == {"table": "t1", "5": "b"}


async def test_a_replayed_action_still_saves_what_the_messages_show(store):
    table = await store.create_table(-1, "muxi", STATE)
    assert await store.commit_action(table.id, round_no=0, action_seq=1, state={"a": 1}, deadline=None)
    store.shown_later(table.id, {"table": "t1"})
    assert not await store.commit_action(table.id, round_no=0, action_seq=1, state={"a": 2}, deadline=None)
    saved = await store.load_table(table.id)
    assert saved.shown == {"table": "t1"} and saved.state == {"a": 1}
