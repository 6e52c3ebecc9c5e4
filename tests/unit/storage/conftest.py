"""Fixtures for the storage tests: a store with a settable clock, on a real SQLite file in tmp_path
and on a real PostgreSQL database (a throwaway server: ``tests/postgres_server.py``).

Every test of the Store runs on both databases, except those that look at SQLite's file itself:
the tests that ask for ``db_path`` too, or are marked ``sqlite_only``; and those about how
PostgreSQL runs writes side by side, marked ``postgresql_only``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import Store, open_store
from tests.unit.storage.storage_helpers import FakeClock

BACKENDS = ("sqlite", "postgresql")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: a Store test about SQLite's file (not run on PostgreSQL)"
    )
    config.addinivalue_line(
        "markers", "postgresql_only: a Store test about PostgreSQL's writes side by side (not run on SQLite)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" not in metafunc.fixturenames:
        return
    sqlite_only = "db_path" in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only")
    postgresql_only = metafunc.definition.get_closest_marker("postgresql_only")
    metafunc.parametrize(
        "backend", BACKENDS[:1] if sqlite_only else BACKENDS[1:] if postgresql_only else BACKENDS
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "paiju.sqlite3"


@pytest.fixture
def database_target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the store of this test lives: an SQLite file, or a fresh PostgreSQL database's URL."""
    if backend == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "paiju.sqlite3")


@pytest.fixture
async def store(database_target: str, clock: FakeClock):
    opened: Store = await open_store(database_target, now=clock)
    try:
        yield opened
    finally:
        await opened.close()
