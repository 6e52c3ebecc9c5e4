"""``python -m bot``'s ``main``, in this process, on a database another holds (issues 14 and 24): it
refuses to start with status 2, naming the file as it was given, the holder's process and what to
do, before it opens the file; through a hard link too (each bot kept its own -wal of one file, and
an acknowledged /daily was lost); the sandbox says to start with ``--fresh``.

Here the holder is this process (``storage.hold_database``: the lock ``tests/unit/storage/
test_storage_exclusive.py`` tests between processes, by any name, and after a SIGKILL). A second
``python -m bot`` refused while a running bot holds the file, which plays on and lets it go when
stopped: ``tests/process/e2e/test_one_bot_per_database.py``."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

import pytest

from bot.__main__ import main
from bot.web.sandbox.server import DATABASE as SANDBOX_DATABASE
from storage import hold_database
from storage.files import create_private
from tests.process.e2e.process import TOKEN

UNREACHABLE = "http://127.0.0.1:9"  # nothing answers: a bot that got as far as Telegram would fail there


@pytest.fixture
def environment(monkeypatch, tmp_path):
    """A bot's settings in the environment only (no .env here), and logging put back afterwards
    (``main`` configures the root logger)."""
    for key in list(os.environ):
        if key.startswith(("PAIJU_", "TELEGRAM_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("PAIJU_BOT_API_URL", UNREACHABLE)
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield monkeypatch
    root.handlers[:] = handlers
    root.setLevel(level)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_bot_on_a_database_held_through_a_hard_link_refuses_to_start(environment, tmp_path, capsys):
    database, linked = tmp_path / "paiju.sqlite3", tmp_path / "linked.sqlite3"
    create_private(str(database))
    os.link(database, linked)
    environment.setenv("PAIJU_DB", str(linked))
    with hold_database(database):
        assert main([]) == 2
    message = capsys.readouterr().err
    assert f"the database {linked} is in use by process {os.getpid()}" in message, message
    assert "PAIJU_DB" in message and "Traceback" not in message
    assert not Path(f"{linked}-wal").exists(), "the second bot never opened the file"


def test_a_sandbox_on_a_database_held_refuses_to_start_and_says_to_start_fresh(environment, tmp_path, capsys):
    database = Path(os.path.realpath(tmp_path)) / SANDBOX_DATABASE
    with hold_database(database):
        assert main(["sandbox", "--port", str(free_port())]) == 2
    message = capsys.readouterr().err
    assert f"the database {database} is in use by process {os.getpid()}" in message, message
    assert "--fresh" in message and "Traceback" not in message
