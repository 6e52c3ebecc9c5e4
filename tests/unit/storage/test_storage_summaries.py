"""A table's 总结算 as the store keeps it (storage/summaries.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from storage import RoundRecord, RoundResult, SummaryHand, SummaryNet, SummaryRound
from tests.unit.storage.storage_helpers import STATE, settle


async def _round(store, table_id, round_no, seq, results, payments=(), *, closed=False):
    record = RoundRecord(round_no, f"commit{table_id}-{round_no}", "AS KS QS", "salt", tuple(results))
    await store.commit_action(
        table_id,
        round_no=round_no,
        action_seq=seq,
        payments=list(payments),
        state=STATE,
        deadline=None,
        round_record=record,
        closed=closed,
    )


async def test_a_table_summary_adds_up_each_persons_rounds_best_first(store):
    for person, who in ((1, "阿强"), (2, "小红"), (3, "Bob")):
        await store.ensure_person(person, who)
    table = await store.create_table(-1, "muxi", STATE)
    # Round 1: 1 banks, takes 100 from 2 and pays 300 to 3 (a flush of 9 points).
    await _round(
        store,
        table.id,
        1,
        1,
        [
            RoundResult(1, -200, False, "normal", "5H 3S"),
            RoundResult(2, -100, False, "muxi", "10S KD"),
            RoundResult(3, 300, True, "flush", "4H 5H"),
        ],
        [settle(2, 1, 100), settle(1, 3, 300)],
    )
    # Round 2: 2 wins 100 from each; round 3: nobody took the bank (no results), the table closes.
    await _round(
        store,
        table.id,
        2,
        2,
        [
            RoundResult(1, -100, False, None),
            RoundResult(2, 200, True, "double", "7C 7D"),
            RoundResult(3, -100, False, "normal"),
        ],
        [settle(1, 2, 100), settle(3, 2, 100)],
    )
    await _round(store, table.id, 3, 3, [], closed=True)

    found = await store.table_summary(table.id)
    assert (found.table_id, found.chat_id, found.game, found.closed) == (table.id, -1, "muxi", True)
    assert found.played == 2
    assert found.rounds == (
        SummaryRound(1, f"commit{table.id}-1", 3, 300),
        SummaryRound(2, f"commit{table.id}-2", 3, 200),
        SummaryRound(3, f"commit{table.id}-3", 0, 0),
    )
    # 3: +300 -100 = +200 (1 won); 2: -100 +200 = +100; 1: -300. Ties would go by rounds won.
    assert found.nets == (
        SummaryNet(3, "Bob", 200, 2, 1),
        SummaryNet(2, "小红", 100, 2, 1),
        SummaryNet(1, "阿强", -300, 2, 0),
    )
    assert found.hands == (
        SummaryHand(1, "阿强", 1, "normal", "5H 3S"),
        SummaryHand(2, "小红", 1, "muxi", "10S KD"),
        SummaryHand(3, "Bob", 1, "flush", "4H 5H"),
        SummaryHand(2, "小红", 2, "double", "7C 7D"),
        SummaryHand(3, "Bob", 2, "normal", None),
    )
    assert found.created_at <= found.ended_at


async def test_an_unknown_table_has_no_summary_and_one_never_played_has_no_round(store):
    assert await store.table_summary(999) is None
    table = await store.create_table(-1, "showhand", STATE)
    found = await store.table_summary(table.id)
    assert found is not None and (found.played, found.rounds, found.nets, found.hands) == (0, (), (), ())


async def test_a_chat_lists_its_tables_where_a_round_was_played_newest_first(store):
    for person in (1, 2):
        await store.ensure_person(person, f"p{person}")
    first = await store.create_table(-1, "muxi", STATE)
    await _round(
        store, first.id, 1, 1, [RoundResult(1, 100, True, "double"), RoundResult(2, -100, False, None)]
    )
    await store.commit_action(first.id, round_no=1, action_seq=2, state=STATE, deadline=None, closed=True)
    empty = await store.create_table(-1, "muxi", STATE)  # closed with no round played: not listed
    await store.commit_action(empty.id, round_no=0, action_seq=1, state=STATE, deadline=None, closed=True)
    elsewhere = await store.create_table(-2, "muxi", STATE)
    await _round(
        store, elsewhere.id, 1, 1, [RoundResult(1, 50, True, None), RoundResult(2, -50, False, None)]
    )
    second = await store.create_table(-1, "showhand", STATE)  # still open, a round played
    await _round(
        store, second.id, 1, 1, [RoundResult(2, 300, True, "flush"), RoundResult(1, -300, False, None)]
    )

    listed = await store.chat_tables(-1)
    assert [(s.table_id, s.game, s.closed) for s in listed] == [
        (second.id, "showhand", False),
        (first.id, "muxi", True),
    ]
    assert [(n.person_id, n.net) for n in listed[0].nets] == [(2, 300), (1, -300)]
    assert [s.table_id for s in await store.chat_tables(-1, limit=1)] == [second.id]
    assert await store.chat_tables(-3) == []


async def test_the_cards_a_round_showed_are_kept_with_its_results(store):
    await store.ensure_person(1, "p1")
    await store.ensure_person(2, "p2")
    table = await store.create_table(-1, "showhand", STATE)
    await _round(
        store,
        table.id,
        1,
        1,
        [RoundResult(1, 300, True, "flush", "AH KH 9H 7H 2H"), RoundResult(2, -300, False, None)],
    )
    saved = await store.get_round(table.id, 1)
    assert saved.results == (
        RoundResult(1, 300, True, "flush", "AH KH 9H 7H 2H"),
        RoundResult(2, -300, False, None, None),
    )
