"""The throwaway PostgreSQL server of tests/postgres_server.py: each test gets its own empty database on
it, reachable over the cluster's socket with asyncpg, and the server runs as the postgres OS user when
the tests run as root (PostgreSQL refuses root)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import asyncpg
import pytest

from tests.postgres_server import OWNER_FILE, PostgresServer, server_user_id

SEEN_DATABASES: set[str] = set()  # what the runs of test_each_test_has_its_own_empty_database got


async def test_a_test_connects_to_its_database(postgres_url: str) -> None:
    connection = await asyncpg.connect(postgres_url)
    try:
        assert await connection.fetchval("SELECT 1") == 1
    finally:
        await connection.close()


@pytest.mark.parametrize("run", [1, 2])
async def test_each_test_has_its_own_empty_database(postgres_url: str, run: int) -> None:
    """Whichever run comes second would see the first one's database or its table if they were
    shared."""
    connection = await asyncpg.connect(postgres_url)
    try:
        name = await connection.fetchval("SELECT current_database()")
        assert name not in SEEN_DATABASES
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        assert tables == []
        await connection.execute("CREATE TABLE marker (run integer)")
        await connection.execute("INSERT INTO marker VALUES ($1)", run)
    finally:
        await connection.close()
    SEEN_DATABASES.add(name)


async def test_the_server_runs_as_the_postgres_user_when_we_are_root(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    postmaster = int((postgres_server.data / "postmaster.pid").read_text().split()[0])
    assert os.stat(f"/proc/{postmaster}").st_uid == server_user_id()
    connection = await asyncpg.connect(postgres_url)
    try:
        backend = await connection.fetchval("SELECT pg_backend_pid()")
        assert os.stat(f"/proc/{backend}").st_uid == server_user_id()  # read while the backend lives
        assert await connection.fetchval("SHOW listen_addresses") == ""  # the socket only, no TCP
    finally:
        await connection.close()


async def test_a_dropped_database_is_gone_even_with_a_connection_left_open(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database()
    left_open = await asyncpg.connect(url)
    name = await left_open.fetchval("SELECT current_database()")
    postgres_server.drop_database(url)
    with pytest.raises(asyncpg.ConnectionDoesNotExistError):  # the drop ended it
        await left_open.fetchval("SELECT 1")
    await left_open.close()
    assert name not in postgres_server.sql("SELECT datname FROM pg_database").split()


def test_stopping_a_server_ends_its_process_and_removes_its_folder(postgres_server: PostgresServer) -> None:
    with PostgresServer(postgres_server.binaries) as server:
        folder = server.folder
        assert folder is not None
        postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
        assert server.sql("SELECT 1") == "1"
    assert not folder.exists()
    assert not running(postmaster)


def test_a_cluster_left_by_a_killed_session_is_removed_when_the_next_server_starts(
    postgres_server: PostgresServer,
) -> None:
    abandoned = PostgresServer(postgres_server.binaries).start()
    folder = abandoned.folder
    assert folder is not None
    postmaster = int((abandoned.data / "postmaster.pid").read_text().split()[0])
    with subprocess.Popen(["true"]) as ended:  # as if the session that started it had been killed
        ended.wait()
    (folder / OWNER_FILE).write_text(str(ended.pid))
    with PostgresServer(postgres_server.binaries):
        assert not folder.exists()
        assert not running(postmaster)
    assert postgres_server.sql("SELECT 1") == "1"  # the live session's server is left alone


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs: an exited one may linger a moment as a zombie until the
    init process reaps it (pg_ctl leaves the server to init), which is not running."""
    status = Path(f"/proc/{pid}/stat")
    try:
        return status.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
