"""One process at a time on a database file (issue 14): refused with the holder's PID, never blocked
by a holder that was SIGKILLed; by whatever name the file is reached, a hard link included (issue
24: through one, two bots each kept their own -wal of one file, and an acknowledged /daily was lost)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from storage import DatabaseInUse, hold_database, open_store
from storage.exclusive import lock_path
from storage.files import create_private
from tests.unit.storage.storage_helpers import HOLDER, holder, python, subprocess_env


def test_a_database_held_by_another_process_is_refused_naming_its_pid(db_path):
    with holder(db_path) as child:
        with pytest.raises(DatabaseInUse) as refused:
            hold_database(db_path)
        assert refused.value.pid == child.pid
        assert refused.value.path == str(db_path)
        assert str(child.pid) in str(refused.value) and str(db_path) in str(refused.value)

        child.stdin.close()  # the holder releases and ends
        assert child.stdout.readline() == "released\n"
        with hold_database(db_path) as lock:
            assert lock.held
        assert child.wait(timeout=10) == 0


def test_another_process_is_refused_while_this_one_holds(db_path):
    with hold_database(db_path):
        child = subprocess.run(
            [python(), "-c", HOLDER, str(db_path)],
            env=subprocess_env(),
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert child.returncode != 0
    assert "DatabaseInUse" in child.stderr and f"in use by process {os.getpid()}" in child.stderr


def test_a_holder_killed_with_sigkill_does_not_block_the_next_start(db_path):
    with holder(db_path) as child:
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
        with hold_database(db_path) as lock:  # the kernel dropped the dead process's lock
            assert lock.held
            assert Path(lock_path(db_path)).read_text() == f"{os.getpid()}\n"


def test_in_one_process_a_second_hold_is_refused_until_the_first_is_released(db_path):
    first = hold_database(db_path)
    with pytest.raises(DatabaseInUse) as refused:
        hold_database(db_path)
    assert refused.value.pid == os.getpid()
    first.release()
    first.release()  # twice: nothing happens
    assert not first.held
    with hold_database(db_path) as second:
        assert second.held
    assert not second.held
    hold_database(db_path).release()


def test_the_same_file_by_another_name_is_the_same_database(db_path, tmp_path, monkeypatch):
    link = tmp_path / "link.sqlite3"
    link.symlink_to(db_path)
    monkeypatch.chdir(tmp_path)
    with hold_database(db_path):
        for other in (link, "paiju.sqlite3", f"{tmp_path}/./paiju.sqlite3"):
            with pytest.raises(DatabaseInUse):
                hold_database(other)


def test_the_same_file_through_a_hard_link_is_refused_naming_its_holder(db_path, tmp_path):
    create_private(str(db_path))
    os.link(db_path, tmp_path / "linked.sqlite3")
    with holder(db_path) as child:
        with pytest.raises(DatabaseInUse) as refused:
            hold_database(tmp_path / "linked.sqlite3")
        assert refused.value.pid == child.pid
        assert refused.value.path == str(tmp_path / "linked.sqlite3")
    with holder(tmp_path / "linked.sqlite3") as child:  # and the other way round
        with pytest.raises(DatabaseInUse) as refused:
            hold_database(db_path)
        assert refused.value.pid == child.pid
    with hold_database(tmp_path / "linked.sqlite3"), pytest.raises(DatabaseInUse) as refused:
        hold_database(db_path)  # in one process too
    assert refused.value.pid == os.getpid()
    with hold_database(db_path) as lock:  # let go, by either name
        assert lock.held


def test_a_hard_linked_holder_killed_with_sigkill_does_not_block_the_next_start(db_path, tmp_path):
    create_private(str(db_path))
    os.link(db_path, tmp_path / "linked.sqlite3")
    with holder(tmp_path / "linked.sqlite3") as child:
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
        with hold_database(db_path) as lock:
            assert lock.held


async def test_the_held_file_is_a_new_database_for_sqlite_and_private(db_path):
    with hold_database(db_path):  # before the database exists: the lock creates it, empty
        assert db_path.stat().st_size == 0 and oct(db_path.stat().st_mode & 0o777) == "0o600"
        async with await open_store(db_path) as store:  # SQLite's locks live beside ours
            await store.ensure_person(1, "Ming")
            assert (await store.check()).ok
    async with await open_store(db_path) as store:
        assert await store.get_person(1) is not None
