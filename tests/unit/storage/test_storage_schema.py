"""Opening, pragmas, and migrations: an older database is upgraded in place, keeping every row."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from storage import SCHEMA_VERSION, RoundRecord, RoundResult, SchemaTooNew, open_store, schema
from storage.on_sqlite import run_query
from storage.thread import on_thread
from tests.unit.storage.old_database import T0, make_old_database
from tests.unit.storage.storage_helpers import ROOT, STATE, ante, pot, python, subprocess_env
from tests.unit.storage.writes import execute, pragma

V1_TABLES = ("people", "chats", "accounts", "tables", "ledger")


async def schema_version_of(store) -> int:
    return await store.backend.read(schema.schema_version)


def dump(path: Path, table: str) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()


async def test_a_new_database_is_at_the_latest_version_with_wal_and_foreign_keys(db_path):
    async with await open_store(db_path) as store:
        assert await schema_version_of(store) == SCHEMA_VERSION == schema.LATEST
        writer = store.backend.writer
        assert await writer.on_connection(pragma, "journal_mode") == "wal"
        assert await writer.on_connection(pragma, "synchronous") == 2  # FULL
        for name, value in (("foreign_keys", 1), ("busy_timeout", 5000)):
            assert await writer.on_connection(pragma, name) == value
            assert await on_thread(store.backend.reader, pragma, name) == value
        assert await on_thread(store.backend.reader, pragma, "query_only") == 1
        assert await writer.on_connection(pragma, "query_only") == 0


async def test_the_path_defaults_to_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PAIJU_DB", str(tmp_path / "from-env.sqlite3"))
    async with await open_store() as store:
        assert store.path == str(tmp_path / "from-env.sqlite3")
    assert (tmp_path / "from-env.sqlite3").is_file()
    monkeypatch.delenv("PAIJU_DB")
    monkeypatch.chdir(tmp_path)
    async with await open_store() as store:
        assert store.path == "paiju.sqlite3"
    assert (tmp_path / "paiju.sqlite3").is_file()


@pytest.mark.parametrize("old_version", [1, 2, 5])
async def test_an_older_database_is_upgraded_in_place_keeping_every_row(db_path, old_version):
    make_old_database(db_path, old_version)
    before = {table: dump(db_path, table) for table in V1_TABLES}
    inode = db_path.stat().st_ino

    async with await open_store(db_path) as store:
        assert await schema_version_of(store) == SCHEMA_VERSION
    assert db_path.stat().st_ino == inode  # upgraded in place, not rebuilt
    for table, rows in before.items():
        width = len(rows[0])
        assert [row[:width] for row in dump(db_path, table)] == rows, table

    async with await open_store(db_path) as store:
        assert (await store.get_person(1)).name == "Ming"
        assert await store.balance(1) == 9900
        settings = await store.chat_settings(-10)
        assert (settings.language, settings.turn_seconds, settings.lobby_seconds) == ("en", 45, 600)
        assert settings.allowed_games == ("muxi", "showhand")  # v2's default for chats that predate it
        table = await store.open_table(-10)
        assert (table.id, table.state, table.version, table.escrow) == (7, {"v": 1}, 3, 100)
        report = await store.check()
        assert report.ok, report.problems
        # The upgraded database is usable: book on the old table, then close it with a round record (v3).
        assert await store.commit_action(
            7, round_no=1, action_seq=4, payments=[ante(2, 100)], state=STATE, deadline=None
        )
        assert await store.commit_action(
            7,
            round_no=1,
            action_seq=5,
            payments=[pot(1, 200)],
            state=STATE,
            deadline=None,
            closed=True,
            round_record=RoundRecord(1, "c0ffee", "AS KS", "salt", (RoundResult(1, 100, True, "pair"),)),
        )
        assert await store.balance(1) == 10_100
        assert [r.round_no for r in await store.last_rounds(chat_id=-10)] == [1]
        report = await store.check()
        assert report.ok, report.problems


V5_ROWS = [
    "INSERT INTO chats (id, language, turn_seconds, lobby_seconds, allowed_games, created_at, updated_at)"
    " VALUES (-20, 'zh-hant', 30, 300, '[\"muxi\"]', 't0', 't0'),"
    " (-30, NULL, 30, 600, '[\"muxi\"]', 't0', 't0')",
    "INSERT INTO tables (id, chat_id, game, state, version, escrow, created_at, updated_at)"
    " VALUES (8, -20, 'muxi', '{\"v\":2}', 1, 0, 't0', 't0')",
    "INSERT INTO rounds (table_id, chat_id, game, round_no, commitment, deck, salt, created_at)"
    " VALUES (7, -10, 'showhand', 1, 'c0ffee', 'AS KS', 'salt', 't0'),"
    " (8, -20, 'muxi', 1, 'beef', 'AS', 's', 't0')",
]


async def test_v6_leaves_the_seconds_no_chat_chose_to_the_operator(db_path):
    """Issue 19: the chats table is rebuilt with nullable seconds (NULL: the bot's settings apply);
    the old defaults 30 and 300 become NULL, a choice stays, and every table and round still
    points at its chat (with foreign keys on, as the bot migrates)."""
    make_old_database(db_path, 5)
    with sqlite3.connect(db_path) as db:
        for statement in V5_ROWS:
            db.execute(statement.replace("'t0'", T0))
    before = dump(db_path, "chats")

    async with await open_store(db_path) as store:
        assert await schema_version_of(store) == SCHEMA_VERSION == schema.LATEST
        assert await store.backend.writer.on_connection(pragma, "foreign_keys") == 1
        assert await store.backend.writer.on_connection(execute, "PRAGMA foreign_key_check") == []
        chosen = {
            chat: (s.language, s.turn_seconds, s.lobby_seconds, s.allowed_games)
            for chat in (-10, -20, -30)
            for s in [await store.chat_settings(chat)]
        }
        assert chosen == {
            -10: ("en", 45, 600, ("muxi", "showhand")),
            -20: ("zh-hant", None, None, ("muxi",)),
            -30: (None, None, 600, ("muxi",)),
        }
        assert (await store.open_table(-20)).id == 8
        assert [r.commitment for r in await store.last_rounds(chat_id=-20)] == ["beef"]
        assert (await store.update_chat_settings(-20, turn_seconds=20)).turn_seconds == 20
        with pytest.raises(sqlite3.IntegrityError):  # the checks are kept
            await store.backend.writer.on_connection(execute, "UPDATE chats SET lobby_seconds = 0")
    # id, language, created_at and allowed_games as they were, in the same order
    assert [(r[0], r[1], r[4], r[6]) for r in dump(db_path, "chats")] == [
        (r[0], r[1], r[4], r[6]) for r in before
    ]
    done = subprocess.run(
        [python(), "-m", "storage", "check", str(db_path)],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


async def test_a_failing_migration_step_leaves_the_previous_version(db_path, monkeypatch):
    async with await open_store(db_path):
        pass
    broken = ("CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL")
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, schema.Step(broken, broken)))
    monkeypatch.setattr(schema, "LATEST", SCHEMA_VERSION + 1)
    db = sqlite3.connect(db_path, isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError):
            run_query(db, schema.migrate(target=SCHEMA_VERSION + 1))
        assert schema.file_version(db) == SCHEMA_VERSION
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_schema")}
        assert "half_done" not in names
    finally:
        db.close()


async def test_a_database_from_newer_code_is_refused(db_path):
    with sqlite3.connect(db_path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaTooNew):
        await open_store(db_path)


async def test_opening_twice_migrates_once(db_path):
    async with await open_store(db_path) as store:
        await store.ensure_person(1, "Ming")
    async with await open_store(db_path) as store:
        assert await store.balance(1) == 10_000
        assert await schema_version_of(store) == SCHEMA_VERSION
