"""``python -m storage migrate-to``: an SQLite file's people, coins, tables and history moved into
PostgreSQL whole, checked before the commit, refused with nothing done when it must be; and the
storage tools on a PostgreSQL URL (``check`` works, ``backup`` and ``restore`` point to pg_dump)."""

from __future__ import annotations

from pathlib import Path

from storage import SCHEMA_VERSION, RoundRecord, RoundResult, hold, hold_database, open_store
from tests.unit.storage.storage_helpers import STATE, ante, pot, storage_command


async def a_played_file(path: Path) -> dict[str, object]:
    """A file a bot has played on: three people, a daily bonus, a settled round, an open table with
    coins in escrow and its seats, a chat's settings, an update taken; what it holds."""
    async with await open_store(path) as store:
        for person in (1, 2, 3):
            await store.ensure_person(person, f"p{person}")
        await store.claim_daily(1)
        await store.update_chat_settings(-100, turn_seconds=45)
        done = await store.create_table(-100, "muxi", STATE)
        await store.commit_action(
            done.id,
            round_no=1,
            action_seq=1,
            payments=[ante(1, 100), ante(2, 100)],
            state=STATE,
            deadline=None,
            seats={1: 11_900, 2: 9_900},
            joined=(),
        )
        record = RoundRecord(
            1,
            "c0ffee",
            "deck",
            "salt",
            (RoundResult(1, 100, True, "天公9"), RoundResult(2, -100, False, None)),
        )
        await store.commit_action(
            done.id,
            round_no=1,
            action_seq=2,
            payments=[pot(1, 200)],
            state=STATE,
            deadline=None,
            closed=True,
            round_record=record,
        )
        table = await store.create_table(-200, "showhand", {"turn": {"person": 3}})
        await store.commit_action(
            table.id,
            round_no=1,
            action_seq=1,
            payments=[ante(3, 50)],
            state={"turn": {"person": 3}},
            deadline=None,
            seats={3: 9_950},
            joined=(),
        )
        await store.update_messages(
            table.id,
            message_id=77,
            dm_message_ids={3: 78},
            shown={"table": '{"text_hash":"a","buttons_hash":"b"}'},
        )
        await store.remember_update(424242)
        return {
            "balances": [await store.balance(p) for p in (1, 2, 3)],
            "ledger": await store.ledger(1, limit=100),
            "table": await store.load_table(table.id),
            "round": await store.get_round(done.id, 1),
            "chat": await store.chat_settings(-100),
            "check": (await store.check()).figures,
        }


async def test_everything_in_the_file_moves_into_postgresql_and_the_bot_plays_on_there(
    tmp_path, postgres_url
):
    path = tmp_path / "paiju.sqlite3"
    held = await a_played_file(path)

    moved = storage_command("migrate-to", postgres_url, "--from", str(path))
    assert moved.returncode == 0, moved.stderr
    assert "moved" in moved.stdout and f"OK: schema v{SCHEMA_VERSION}, 3 people" in moved.stdout
    assert "PAIJU_DATABASE_URL" in moved.stdout

    async with await open_store(postgres_url) as store:
        assert [await store.balance(p) for p in (1, 2, 3)] == held["balances"]
        assert await store.ledger(1, limit=100) == held["ledger"]  # ids, keys and times kept
        assert await store.load_table(held["table"].id) == held["table"]  # state, messages, escrow
        assert await store.get_round(held["round"].table_id, 1) == held["round"]
        assert await store.chat_settings(-100) == held["chat"]
        assert await store.update_taken(424242)
        assert (await store.check()).figures == held["check"]
        # The ids go on after the last one moved: a new table and new ledger rows never collide.
        table = await store.create_table(-300, "muxi", STATE)
        assert table.id > held["table"].id
        await store.claim_daily(2)
        assert (await store.ledger(2, limit=1))[0].id > max(e.id for e in held["ledger"])
    assert storage_command("check", postgres_url).returncode == 0
    assert storage_command("check", str(path)).returncode == 0  # the file is left as it was


async def test_a_database_holding_anything_already_is_refused_with_nothing_moved(tmp_path, postgres_url):
    path = tmp_path / "paiju.sqlite3"
    await a_played_file(path)
    assert storage_command("migrate-to", postgres_url, "--from", str(path)).returncode == 0
    again = storage_command("migrate-to", postgres_url, "--from", str(path))
    assert again.returncode == 2 and "holds data already" in again.stderr, again.stderr
    async with await open_store(postgres_url) as store:
        assert (await store.check()).figures["people"] == 3  # nothing twice


async def test_moving_is_refused_while_a_bot_runs_on_the_file_or_on_the_database(tmp_path, postgres_url):
    path = tmp_path / "paiju.sqlite3"
    await a_played_file(path)
    with hold_database(path):
        refused = storage_command("migrate-to", postgres_url, "--from", str(path))
    assert refused.returncode == 2 and "is in use by process" in refused.stderr, refused.stderr
    bot = await hold(postgres_url)
    try:
        refused = storage_command("migrate-to", postgres_url, "--from", str(path))
    finally:
        bot.release()
    assert refused.returncode == 2 and "is in use by paiju pid" in refused.stderr, refused.stderr
    missing = storage_command("migrate-to", postgres_url, "--from", str(tmp_path / "none.sqlite3"))
    assert missing.returncode == 2 and "no database file" in missing.stderr
    empty = storage_command("check", postgres_url)  # still empty: no schema, no books
    assert empty.returncode == 1 and "schema version 0" in empty.stdout, empty


def test_backup_and_restore_of_postgresql_point_to_the_servers_tools(tmp_path):
    url = "postgresql://paiju:secret@db.internal/paiju"
    for args in (("backup", url), ("restore", str(tmp_path / "x.sqlite3"), "--to", url)):
        result = storage_command(*args)
        assert result.returncode == 2 and "pg_dump" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_the_check_of_an_unreachable_database_says_why(tmp_path):
    result = storage_command("check", f"postgresql://paiju:secret@/paiju?host={tmp_path}&port=5999")
    assert result.returncode == 1 and "cannot reach the database" in result.stdout, result
    assert "secret" not in result.stdout + result.stderr
