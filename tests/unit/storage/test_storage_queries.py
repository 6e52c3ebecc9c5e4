"""Round records with their fairness proofs, leaderboards and statistics."""

from __future__ import annotations

import pytest

from storage import GameStats, RoundRecord, RoundResult, StorageError
from tests.unit.storage.storage_helpers import STATE, ante, pot, settle


async def play_muxi_round(store, table_id, round_no, seq, banker, wins, losses):
    """Banker collects 100 from each of ``losses`` and pays 100 to each of ``wins``."""
    payments = [settle(p, banker, 100) for p in losses] + [settle(banker, p, 100) for p in wins]
    results = (
        RoundResult(banker, 100 * (len(losses) - len(wins)), len(losses) > len(wins), "八倍"),
        *(RoundResult(p, 100, True, "9点") for p in wins),
        *(RoundResult(p, -100, False, "3点") for p in losses),
    )
    record = RoundRecord(round_no, f"commit{round_no}", "AS KS QS", f"salt{round_no}", results)
    return await store.commit_action(
        table_id,
        round_no=round_no,
        action_seq=seq,
        payments=payments,
        state=STATE,
        deadline=None,
        round_record=record,
    )


@pytest.fixture
async def history(store):
    """Chat -1: two muxi rounds then a showhand game; chat -2: one muxi round. People 1..5."""
    for person in range(1, 6):
        await store.ensure_person(person, f"p{person}")
    muxi = await store.create_table(-1, "muxi", STATE)
    await play_muxi_round(store, muxi.id, 1, 1, banker=1, wins=[2], losses=[3, 4])
    await play_muxi_round(store, muxi.id, 2, 2, banker=1, wins=[2, 3], losses=[4])
    await store.commit_action(muxi.id, round_no=2, action_seq=3, state=STATE, deadline=None, closed=True)
    showhand = await store.create_table(-1, "showhand", STATE)
    await store.commit_action(
        showhand.id,
        round_no=1,
        action_seq=1,
        payments=[ante(2, 300), ante(4, 300)],
        state=STATE,
        deadline=None,
    )
    record = RoundRecord(
        1,
        "commitS",
        "AH KH",
        "saltS",
        (RoundResult(4, 300, True, "同花"), RoundResult(2, -300, False, "一对")),
    )
    await store.commit_action(
        showhand.id,
        round_no=1,
        action_seq=2,
        payments=[pot(4, 600)],
        state=STATE,
        deadline=None,
        round_record=record,
    )
    other = await store.create_table(-2, "muxi", STATE)
    await play_muxi_round(store, other.id, 1, 1, banker=5, wins=[], losses=[1])
    return {"muxi": muxi.id, "showhand": showhand.id, "other": other.id}


async def test_rounds_are_recorded_with_their_proofs(store, history):
    rounds = await store.last_rounds(chat_id=-1)
    assert [(r.game, r.round_no) for r in rounds] == [("showhand", 1), ("muxi", 2), ("muxi", 1)]
    newest = rounds[0]
    assert (newest.commitment, newest.deck, newest.salt) == ("commitS", "AH KH", "saltS")
    assert newest.results == (RoundResult(4, 300, True, "同花"), RoundResult(2, -300, False, "一对"))
    assert [r.round_no for r in await store.last_rounds(table_id=history["muxi"], limit=1)] == [2]
    found = await store.get_round(history["muxi"], 1)
    assert (
        found.salt == "salt1" and found.chat_id == -1 and {r.person_id for r in found.results} == {1, 2, 3, 4}
    )
    assert await store.get_round(history["muxi"], 9) is None
    with pytest.raises(ValueError):
        await store.last_rounds()


async def test_a_replayed_batch_does_not_record_its_round_twice(store, history):
    assert not await play_muxi_round(store, history["other"], 1, 1, banker=5, wins=[], losses=[1])
    assert len(await store.last_rounds(table_id=history["other"])) == 1


async def test_recording_a_round_twice_in_new_batches_is_refused(store, history):
    with pytest.raises(StorageError):
        await play_muxi_round(store, history["other"], 1, 2, banker=5, wins=[], losses=[1])
    assert await store.balance(1) == 9_900  # that batch booked nothing


async def test_chat_leaderboard_ranks_who_played_there_by_net_won_there(store, history):
    board = await store.chat_leaderboard(-1)
    # 1: +100 -100 = 0 (2 rounds); 2: +100 +100 -300 = -100; 3: -100 +100 = 0; 4: -100 -100 +300 = 100.
    assert [(r.rank, r.person_id, r.coins, r.rounds) for r in board] == [
        (1, 4, 100, 3),
        (2, 1, 0, 2),
        (3, 3, 0, 2),
        (4, 2, -100, 3),
    ]
    assert board[0].name == "p4"
    assert [(r.person_id, r.coins) for r in await store.chat_leaderboard(-2)] == [(5, 100), (1, -100)]
    assert len(await store.chat_leaderboard(-1, limit=2)) == 2
    assert await store.chat_leaderboard(-3) == []


async def test_global_leaderboard_ranks_everyone_by_balance(store, history):
    board = await store.global_leaderboard()
    assert [(r.person_id, r.coins) for r in board] == [
        (4, 10_100),
        (5, 10_100),
        (3, 10_000),
        (1, 9_900),
        (2, 9_900),
    ]
    assert [r.rounds for r in board] == [3, 1, 2, 3, 3]
    assert [r.rank for r in board] == [1, 2, 3, 4, 5]


async def test_person_stats_per_game_and_in_all(store, history):
    stats = await store.person_stats(2)
    assert stats.games == (GameStats("muxi", 2, 2, 200), GameStats("showhand", 1, 0, -300))
    assert stats.total == GameStats("all", 3, 2, -100)
    nobody = await store.person_stats(404)
    assert nobody.total == GameStats("all") and nobody.games == (GameStats("muxi"), GameStats("showhand"))


async def test_chat_settings_default_and_update(store):
    settings = await store.chat_settings(-1)
    assert (settings.language, settings.turn_seconds, settings.lobby_seconds) == (None, None, None)
    assert settings.allowed_games == ("muxi", "showhand")
    changed = await store.update_chat_settings(-1, language="zh-hant", allowed_games=["showhand"])
    assert (changed.language, changed.turn_seconds, changed.allowed_games) == ("zh-hant", None, ("showhand",))
    changed = await store.update_chat_settings(-1, turn_seconds=45, lobby_seconds=120)
    assert (changed.language, changed.turn_seconds, changed.lobby_seconds) == ("zh-hant", 45, 120)
    changed = await store.update_chat_settings(-1, lobby_seconds=None)  # back to the bot's default
    assert (changed.turn_seconds, changed.lobby_seconds) == (45, None)
    assert (await store.update_chat_settings(-1, language=None)).language is None
    assert await store.chat_settings(-1) == await store.update_chat_settings(-1)
    for bad in ({"turn_seconds": 0}, {"lobby_seconds": -5}, {"allowed_games": ["poker"]}):
        with pytest.raises(ValueError):
            await store.update_chat_settings(-1, **bad)


async def test_hands_held_per_game(store):
    from storage import RoundRecord, RoundResult

    await store.ensure_person(1, "a")
    await store.ensure_person(2, "b")
    saved = await store.create_table(-5, "muxi", {"s": 1})
    record = RoundRecord(
        1, "c" * 64, "AS 2S", "salt", (RoundResult(1, 10, True, "flush"), RoundResult(2, -10, False, None))
    )
    await store.commit_action(
        saved.id, round_no=1, action_seq=1, state={"s": 2}, deadline=None, round_record=record
    )
    assert await store.hands_held(1) == {"muxi": ("flush",)}
    assert await store.hands_held(2) == {}


async def test_a_migrated_chat_keeps_its_settings_table_escrow_and_history(store):
    from games.events import ESCROW, Paid, PayReason

    await store.ensure_person(1, "a")
    await store.update_chat_settings(-7, language="en", turn_seconds=45)
    saved = await store.create_table(-7, "showhand", {"s": 1})
    await store.commit_action(
        saved.id,
        round_no=1,
        action_seq=1,
        state={"s": 2},
        deadline=None,
        payments=[Paid(1, ESCROW, 100, PayReason.ANTE)],
        escrow=100,
    )
    await store.migrate_chat(-7, -1007)
    moved = await store.open_table(-1007)
    assert moved is not None and moved.id == saved.id and moved.escrow == 100
    assert await store.open_table(-7) is None
    settings = await store.chat_settings(-1007)
    assert (settings.language, settings.turn_seconds) == ("en", 45)
    assert (await store.check()).ok
