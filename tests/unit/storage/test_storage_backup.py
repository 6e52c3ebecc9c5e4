"""Backups: a copy made while writes go on is one commit's state and passes the check; a copy that
fails its check is not kept; a restore refuses a running bot's database and a bad backup, and keeps
what it replaces, which can be restored in turn with the commits its -wal holds; a schema upgrade is
preceded by a copy; the daily backups are taken once a day and pruned."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from storage import BackupFailed, backup_database, backup_if_due, open_store, prune, restore_database
from storage.backup import automatic_backups, verify
from tests.unit.storage.old_database import make_old_database
from tests.unit.storage.storage_helpers import NOW, count_people, holder, storage_command


def spoil_the_books(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE people SET balance = balance + 1 WHERE id = 1")


async def test_a_backup_made_while_people_arrive_is_one_consistent_file(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    arriving = asyncio.create_task(_arrive(store, range(2, 400)))
    copy, report = await asyncio.to_thread(backup_database, db_path, tmp_path / "copy.sqlite3")
    await arriving
    assert report.ok, report.problems
    assert 1 <= count_people(copy) <= 399 and count_people(db_path) == 399
    assert verify(copy).ok
    assert not list(tmp_path.glob("copy.sqlite3-*")) and not list(tmp_path.glob(".copy*")), "one file"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600  # it holds the open rounds' decks too


async def _arrive(store, ids) -> None:
    for person in ids:
        await store.ensure_person(person, f"p{person}")


async def test_the_command_names_the_copy_in_the_folder_given(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    folder = tmp_path / "backups"
    folder.mkdir()
    made = storage_command("backup", str(db_path), "--to", str(folder))
    assert made.returncode == 0, made.stderr
    [copy] = folder.glob("paiju-*.sqlite3")
    assert str(copy) in made.stdout and "OK:" in made.stdout
    assert count_people(copy) == 1


async def test_a_copy_that_fails_its_check_is_not_kept(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    await store.close()
    spoil_the_books(db_path)
    with pytest.raises(BackupFailed, match="balance 10001 but ledger sums to 10000"):
        backup_database(db_path, tmp_path / "copy.sqlite3")
    made = storage_command("backup", str(db_path), "--to", str(tmp_path / "copy.sqlite3"))
    assert made.returncode == 1 and "ledger sums to" in made.stderr
    assert not list(tmp_path.glob("*copy*"))


async def test_a_restore_waits_for_the_bot_to_stop_and_checks_the_backup(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    copy, _ = backup_database(db_path, tmp_path / "copy.sqlite3")
    await store.ensure_person(2, "Hong")  # after the backup: the restore takes it back

    with holder(db_path) as bot:  # a bot runs on it
        refused = storage_command("restore", str(copy), "--to", str(db_path))
    assert refused.returncode == 2 and f"in use by process {bot.pid}. Stop the bot first" in refused.stderr
    await store.close()

    spoiled = tmp_path / "spoiled.sqlite3"
    spoiled.write_bytes(copy.read_bytes())
    spoil_the_books(spoiled)
    refused = storage_command("restore", str(spoiled), "--to", str(db_path))
    assert refused.returncode == 1 and "fails its check" in refused.stderr
    assert count_people(db_path) == 2, "nothing was replaced"

    restored = storage_command("restore", str(copy), "--to", str(db_path))
    assert restored.returncode == 0, restored.stderr
    assert count_people(db_path) == 1
    [aside] = tmp_path.glob("paiju-replaced-*.sqlite3")
    assert count_people(aside) == 2, "the database it replaced is kept, with what its -wal held"
    assert not Path(f"{db_path}-wal").exists()
    async with await open_store(db_path) as reopened:  # the bot starts on it again
        assert (await reopened.check()).ok
        assert await reopened.get_person(2) is None


async def test_a_schema_upgrade_is_preceded_by_a_verified_copy(tmp_path):
    database = tmp_path / "paiju.sqlite3"
    make_old_database(database, 5)
    async with await open_store(database):
        pass
    [copy] = tmp_path.glob("paiju-v5-*.sqlite3")
    with sqlite3.connect(copy) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 5
    assert verify(copy, books=False).ok
    async with await open_store(database):  # up to date now: no second copy
        pass
    assert len(list(tmp_path.glob("paiju-v*.sqlite3"))) == 1


async def test_a_new_database_needs_no_copy(db_path, tmp_path):
    async with await open_store(db_path):
        pass
    assert [path.name for path in tmp_path.iterdir() if path.suffix == ".sqlite3"] == ["paiju.sqlite3"]


async def test_daily_backups_are_taken_once_a_day_and_kept_so_many_days(store, db_path, tmp_path):
    folder = tmp_path / "backups"
    first = backup_if_due(db_path, folder, NOW)
    assert first is not None and first.name == "paiju-20250301T040000Z.sqlite3"
    assert backup_if_due(db_path, folder, NOW + timedelta(hours=23)) is None
    for day in range(1, 5):
        assert backup_if_due(db_path, folder, NOW + timedelta(days=day)) is not None
    (folder / "paiju-v5-20250101T000000Z.sqlite3").write_bytes(b"")  # not an automatic one
    assert len(automatic_backups(db_path, folder)) == 5

    removed = prune(db_path, folder, keep_days=2, now=NOW + timedelta(days=4))

    def days(paths):
        return [path.name[6:14] for path in paths]

    assert days(removed) == ["20250301", "20250302"]
    assert days(automatic_backups(db_path, folder)) == ["20250303", "20250304", "20250305"]
    assert (folder / "paiju-v5-20250101T000000Z.sqlite3").exists()
    assert len(prune(db_path, folder, keep_days=1, now=NOW + timedelta(days=400))) == 2, "the newest stays"


async def _left_by_a_crash(store, db_path: Path) -> None:
    """Close ``store`` but leave its files as a SIGKILLed bot does: the last commits only in the -wal."""
    db, wal = db_path.read_bytes(), Path(f"{db_path}-wal").read_bytes()
    await store.close()  # (checkpoints and deletes the -wal: put back as it was)
    db_path.write_bytes(db)
    Path(f"{db_path}-wal").write_bytes(wal)
    Path(f"{db_path}-shm").unlink(missing_ok=True)


async def test_a_database_kept_aside_is_restored_with_the_commits_in_its_wal(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    copy, _ = backup_database(db_path, tmp_path / "copy.sqlite3")
    await store.ensure_person(2, "Hong")
    await _left_by_a_crash(store, db_path)

    assert storage_command("restore", str(copy), "--to", str(db_path)).returncode == 0
    [aside] = tmp_path.glob("paiju-replaced-*.sqlite3")
    assert Path(f"{aside}-wal").stat().st_size > 0, "Hong is in the -wal kept with it"
    undone = storage_command("restore", str(aside), "--to", str(db_path))
    assert undone.returncode == 0, undone.stderr
    assert count_people(db_path) == 2, "the commits in its -wal came back too"
    assert not Path(f"{db_path}-wal").exists()


async def test_two_restores_in_one_second_keep_both_databases_they_replaced(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    copy, _ = backup_database(db_path, tmp_path / "copy.sqlite3")
    await store.ensure_person(2, "Hong")
    await store.close()
    first = restore_database(copy, db_path, now=NOW)
    second = restore_database(copy, db_path, now=NOW)
    assert first is not None and second is not None and first != second
    assert count_people(first) == 2 and count_people(second) == 1


async def test_a_restore_refused_leaves_no_database_where_there_was_none(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    await store.close()
    spoil_the_books(db_path)  # a backup that fails its check
    new = tmp_path / "new" / "paiju.sqlite3"
    new.parent.mkdir()
    refused = storage_command("restore", str(db_path), "--to", str(new))
    assert refused.returncode == 1 and "fails its check" in refused.stderr
    assert not new.exists(), "the empty file the restore's lock created is gone with it"
    assert sorted(path.name for path in new.parent.iterdir()) == ["paiju.sqlite3-lock"]
