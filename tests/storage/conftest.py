"""Fixtures for the storage tests: a store on a real SQLite file in tmp_path, with a settable clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import Store, open_store
from tests.storage.storage_helpers import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "paiju.sqlite3"


@pytest.fixture
async def store(db_path: Path, clock: FakeClock):
    opened: Store = await open_store(db_path, now=clock)
    try:
        yield opened
    finally:
        await opened.close()
