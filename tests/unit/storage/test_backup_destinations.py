"""Backups that cannot destroy (issue 24, finding 6): ``python -m storage backup --to DEST`` wrote over
whatever was at DEST, the live database's ``-wal`` included (a crash then lost every commit it held,
and the books still balanced). Now it refuses, in one line and exit 2, an existing file (``--force``:
unless it is a Paiju backup), and the database or a file beside it by any name; a copy that fails
leaves nothing at DEST; a restore refuses to put a database on its backup, on a file beside a
database, or in place of a file that is not one; the daily pruning deletes only backups."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
from datetime import timedelta
from pathlib import Path

from storage import backup_database, prune
from tests.unit.storage.storage_helpers import (
    NOW,
    ROOT,
    count_people,
    python,
    storage_command,
    subprocess_env,
)

NOTES = b"my notes, not a database\n"
# The child limits the size of the files it writes (RLIMIT_FSIZE; Python ignores SIGXFSZ, so a write
# past the limit fails with EFBIG): the copy fails halfway through being written.
SMALL_FILES = """
import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
sys.argv = ["storage", *sys.argv[2:]]
runpy.run_module("storage", run_name="__main__", alter_sys=True)
"""


def refused(result: subprocess.CompletedProcess[str], reason: str) -> None:
    """Refused as the command refuses: exit 2, one line naming why, no traceback."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert reason in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr and not result.stdout


def hidden(folder: Path) -> list[str]:
    """What a copy under way keeps in the folder: nothing once it is over."""
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


def contents(*paths: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in paths}


async def test_an_existing_file_is_refused_and_kept_byte_for_byte(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    notes = tmp_path / "notes.txt"
    notes.write_bytes(NOTES)
    refused(storage_command("backup", str(db_path), "--to", str(notes)), "a file is there already")
    refused(storage_command("backup", str(db_path), "--to", str(notes), "--force"), "not a Paiju backup")
    assert notes.read_bytes() == NOTES
    assert hidden(tmp_path) == []


async def test_the_live_database_and_its_files_are_refused_by_any_name(store, db_path, tmp_path):
    for person in range(1, 30):
        await store.ensure_person(person, f"p{person}")  # in the -wal: the store is open
    wal = Path(f"{db_path}-wal")
    assert wal.stat().st_size > 0
    kept = contents(db_path, wal)
    links = tmp_path / "links"
    links.mkdir()
    (links / "db.sqlite3").symlink_to(db_path)
    (links / "wal.sqlite3").symlink_to(wal)
    (links / "journal.sqlite3").symlink_to(f"{db_path}-journal")  # dangling: SQLite's name for later
    os.link(db_path, links / "hard-db.sqlite3")
    os.link(wal, links / "hard-wal.sqlite3")
    folder_link = tmp_path / "same-folder"
    folder_link.symlink_to(tmp_path)
    destinations = {
        db_path: "the database itself",
        wal: "the -wal file of the database",
        Path(f"{db_path}-shm"): "the -shm file of the database",
        Path(f"{db_path}-journal"): "the -journal file of the database",
        Path(f"{db_path}-lock"): "the -lock file of the database",
        links / "db.sqlite3": "the database itself",
        links / "wal.sqlite3": "the -wal file of the database",
        links / "journal.sqlite3": "the -journal file of the database",
        folder_link / "paiju.sqlite3-wal": "the -wal file of the database",
        links / "hard-db.sqlite3": "the database itself, by another name",
        links / "hard-wal.sqlite3": "the -wal file of the database, by another name",
        tmp_path / "other.sqlite3-wal": "-wal names a file kept beside a database",
    }
    for destination, reason in destinations.items():
        for force in ((), ("--force",)):
            refused(storage_command("backup", str(db_path), "--to", str(destination), *force), reason)
    assert contents(db_path, wal) == kept
    assert os.path.samefile(links / "hard-wal.sqlite3", wal)
    assert os.path.samefile(links / "db.sqlite3", db_path)
    assert not Path(f"{db_path}-journal").exists() and not (tmp_path / "other.sqlite3-wal").exists()
    assert hidden(tmp_path) == []
    assert (await store.check()).ok and await store.get_person(29) is not None


async def test_force_replaces_an_older_paiju_backup_and_nothing_else(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    copy = tmp_path / "copy.sqlite3"
    assert storage_command("backup", str(db_path), "--to", str(copy)).returncode == 0
    await store.ensure_person(2, "Hong")

    refused(storage_command("backup", str(db_path), "--to", str(copy)), "--force replaces a Paiju backup")
    assert count_people(copy) == 1
    replaced = storage_command("backup", str(db_path), "--to", str(copy), "--force")
    assert replaced.returncode == 0, replaced.stderr
    assert count_people(copy) == 2
    assert hidden(tmp_path) == []

    # What --force does not replace: the database a bot left (WAL mode), a -wal-less SQLite file
    # that is not Paiju's.
    left = tmp_path / "left.sqlite3"
    # (each connection closed here: one the garbage collector closed later would checkpoint its WAL
    # into the file after the test read it, and the file would seem changed by the backup)
    with contextlib.closing(sqlite3.connect(left)) as other:
        other.execute("PRAGMA journal_mode = WAL")
        other.execute("CREATE TABLE people (id INTEGER)")
        other.commit()
    foreign = tmp_path / "foreign.sqlite3"
    with contextlib.closing(sqlite3.connect(foreign)) as other:
        other.execute("CREATE TABLE notes (text TEXT)")
        other.commit()
    kept = contents(left, foreign)
    for other in (left, foreign):
        refused(storage_command("backup", str(db_path), "--to", str(other), "--force"), "not a Paiju backup")
    assert contents(left, foreign) == kept


def _copy_with_small_files(limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python(), "-c", SMALL_FILES, str(limit), *args],
        cwd=ROOT,
        env=subprocess_env() | {"PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_a_copy_that_fails_while_written_leaves_nothing_at_the_destination(store, db_path, tmp_path):
    await asyncio.gather(*(store.ensure_person(person, f"person {person:060}") for person in range(1, 600)))
    folder = tmp_path / "backups"
    folder.mkdir()
    older = folder / "older.sqlite3"
    backup_database(db_path, folder / "first.sqlite3")
    os.replace(folder / "first.sqlite3", older)  # a Paiju backup, --force may replace it
    assert db_path.stat().st_size + Path(f"{db_path}-wal").stat().st_size > 64 * 1024
    kept = contents(older)

    new = _copy_with_small_files(16 * 1024, "backup", str(db_path), "--to", str(folder / "new.sqlite3"))
    assert new.returncode == 1 and "FAILED: no backup made" in new.stderr, new.stderr
    over = _copy_with_small_files(16 * 1024, "backup", str(db_path), "--to", str(older), "--force")
    assert over.returncode == 1 and "FAILED: no backup made" in over.stderr, over.stderr

    assert sorted(path.name for path in folder.iterdir()) == ["older.sqlite3"]
    assert contents(older) == kept


async def test_a_restore_refuses_its_backup_a_file_beside_a_database_and_a_file_not_a_database(
    store, db_path, tmp_path
):
    await store.ensure_person(1, "Ming")
    copy, _ = backup_database(db_path, tmp_path / "copy.sqlite3")
    await store.ensure_person(2, "Hong")  # in the -wal of the bot still running
    wal = Path(f"{db_path}-wal")
    notes = tmp_path / "notes.txt"
    notes.write_bytes(NOTES)
    os.link(copy, tmp_path / "same-copy.sqlite3")
    os.link(wal, tmp_path / "hard-wal.sqlite3")
    kept = contents(copy, wal, notes)
    destinations = {
        copy: "it is the backup itself",
        tmp_path / "same-copy.sqlite3": "it is the backup itself, by another name",
        wal: "-wal names a file kept beside a database",
        Path(f"{db_path}-shm"): "-shm names a file kept beside a database",
        tmp_path / "hard-wal.sqlite3": "a file is there that is not a SQLite database",
        notes: "a file is there that is not a SQLite database",
    }
    for destination, reason in destinations.items():
        refused(storage_command("restore", str(copy), "--to", str(destination)), reason)
    assert contents(copy, wal, notes) == kept
    assert not list(tmp_path.glob("*-replaced-*")) and hidden(tmp_path) == []
    assert (await store.check()).ok and await store.get_person(2) is not None


async def test_pruning_deletes_only_paiju_backups(store, db_path, tmp_path):
    await store.ensure_person(1, "Ming")
    old = tmp_path / "paiju-20250101T000000Z.sqlite3"  # named like an old automatic backup
    with contextlib.closing(sqlite3.connect(old)) as other:  # but a database some bot runs on (WAL)
        other.execute("PRAGMA journal_mode = WAL")
        other.execute("CREATE TABLE people (id INTEGER)")
        other.commit()
    kept = contents(old)
    for day in range(3):  # three daily backups beside it
        backup_database(db_path, tmp_path, NOW + timedelta(days=day))
    removed = prune(db_path, tmp_path, keep_days=1, now=NOW + timedelta(days=2))
    assert [path.name for path in removed] == ["paiju-20250301T040000Z.sqlite3"]
    assert contents(old) == kept


def test_pruning_deletes_the_copies_a_killed_backup_left_once_a_day_old(db_path, tmp_path):
    backups = tmp_path / "backups"
    backups.mkdir()
    stale = backups / ".paiju-20250301T040000Z.sqlite3.k2j4h1.partial"
    fresh = backups / ".paiju-20250302T040000Z.sqlite3.x9a8b7.partial"
    other = backups / ".notes.partial"  # not a backup's
    for path in (stale, fresh, other):
        path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    two_days_ago = (NOW - timedelta(days=2)).timestamp()
    os.utime(stale, (two_days_ago, two_days_ago))
    os.utime(other, (two_days_ago, two_days_ago))
    os.utime(fresh, (NOW.timestamp(), NOW.timestamp()))
    removed = prune(db_path, backups, keep_days=7, now=NOW)
    assert removed == [stale]
    assert not stale.exists() and fresh.exists() and other.exists()
