"""The database, its -wal and its -shm are readable by their owner only (issue 14): they hold every
open round's whole shuffled deck."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage import open_store


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def modes(db_path: Path) -> dict[str, int]:
    files = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")]
    return {file.name: stat.S_IMODE(file.stat().st_mode) for file in files}


@pytest.mark.parametrize("mask", [0o022, 0o000], ids=["umask-022", "umask-000"])
async def test_a_new_database_and_its_wal_and_shm_are_0600_whatever_the_umask(db_path, mask):
    with umask(mask):
        store = await open_store(db_path)
        try:
            await store.ensure_person(1, "阿明")  # a write: the -wal holds it
            assert modes(db_path) == {
                "paiju.sqlite3": 0o600,
                "paiju.sqlite3-wal": 0o600,
                "paiju.sqlite3-shm": 0o600,
            }
        finally:
            await store.close()


async def test_a_database_made_0644_earlier_becomes_0600_when_opened(db_path):
    with umask(0o022), contextlib.closing(sqlite3.connect(db_path, isolation_level=None)) as earlier:
        earlier.execute("PRAGMA journal_mode = WAL")  # as an older version made it
        earlier.execute("CREATE TABLE early (x)")  # open, it keeps its -wal and -shm
        assert modes(db_path) == dict.fromkeys(modes(db_path), 0o644)
        store = await open_store(db_path)
        try:
            assert modes(db_path) == dict.fromkeys(modes(db_path), 0o600)
        finally:
            await store.close()
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
