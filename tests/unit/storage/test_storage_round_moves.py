"""A round's actions kept for its replay (``round_moves``), on SQLite and PostgreSQL: saved with the
action in one transaction, read back in order, nothing for a replayed batch or a refused one."""

from __future__ import annotations

import pytest

from storage import RoundMove, StaleVersion
from tests.unit.storage.storage_helpers import STATE, ante

BEFORE = {"engine": {"core": {"round_no": 0}}, "view": {"names": {"1": "阿强"}}}


async def test_a_rounds_actions_are_read_back_in_order_with_the_table_before_the_first(store):
    for person in (1, 2):
        await store.ensure_person(person, f"p{person}")
    table = await store.create_table(-1, "showhand", STATE)
    start = RoundMove({"type": "Ready", "person": 2}, BEFORE)
    await store.commit_action(
        table.id, round_no=1, action_seq=3, payments=[ante(1, 10), ante(2, 10)], state=STATE,
        deadline=None, move=start,
    )  # fmt: skip
    for seq, action in (
        (4, {"type": "Raise", "person": 1, "amount": 40}),
        (5, {"type": "Fold", "person": 2}),
    ):
        await store.commit_action(
            table.id, round_no=1, action_seq=seq, state=STATE, deadline=None, move=RoundMove(action)
        )
    await store.commit_action(
        table.id, round_no=1, action_seq=6, state=STATE, deadline=None
    )  # between rounds
    kept = await store.round_moves(table.id, 1)
    assert kept is not None and kept.before == BEFORE
    assert [action["type"] for action in kept.actions] == ["Ready", "Raise", "Fold"]
    assert kept.actions[1] == {"type": "Raise", "person": 1, "amount": 40}
    assert await store.round_moves(table.id, 2) is None  # never played
    assert await store.round_moves(table.id + 1, 1) is None  # no such table


async def test_a_replayed_or_refused_action_keeps_no_move(store):
    table = await store.create_table(-1, "muxi", STATE)
    first = RoundMove({"type": "Ready", "person": 1}, BEFORE)
    assert await store.commit_action(
        table.id, round_no=1, action_seq=1, state=STATE, deadline=None, move=first
    )
    again = RoundMove({"type": "Draw", "person": 1})
    assert not await store.commit_action(
        table.id, round_no=1, action_seq=1, state=STATE, deadline=None, move=again
    )
    await store.commit_action(table.id, round_no=1, action_seq=2, state=STATE, deadline=None, move=again)
    with pytest.raises(StaleVersion):  # an older version with coins: refused, nothing kept
        await store.commit_action(
            table.id, round_no=1, action_seq=2, payments=[ante(1, 10)], state=STATE, deadline=None,
            move=RoundMove({"type": "Stand", "person": 1}),
        )  # fmt: skip
    kept = await store.round_moves(table.id, 1)
    assert kept is not None and [action["type"] for action in kept.actions] == ["Ready", "Draw"]


async def test_a_round_whose_first_action_was_not_kept_has_no_replay(store):
    """A round under way when the bot was upgraded: its later actions are kept, its start is not."""
    table = await store.create_table(-1, "muxi", STATE)
    later = RoundMove({"type": "Draw", "person": 1})
    await store.commit_action(table.id, round_no=4, action_seq=9, state=STATE, deadline=None, move=later)
    assert await store.round_moves(table.id, 4) is None
