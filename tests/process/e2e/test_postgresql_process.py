"""``python -m bot`` on PostgreSQL (``PAIJU_DATABASE_URL``), refused before it calls Telegram: while
a tool holds the database whole (``migrate-to``: naming it), and when the server cannot be reached
(saying why); one line each, never a traceback. (Workers share a database: ``test_workers*``.)"""

from __future__ import annotations

import subprocess
import sys

from storage.postgres import hold_postgres
from tests.process.e2e.process import ROOT, TOKEN

UNREACHABLE = "http://127.0.0.1:9"  # a bot that got as far as Telegram would fail there


def start(database_url: str) -> subprocess.CompletedProcess[str]:
    env = {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "PAIJU_DATABASE_URL": database_url,
        "PAIJU_BOT_API_URL": UNREACHABLE,
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-m", "bot"], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )


async def test_a_bot_on_a_database_held_whole_refuses_to_start_naming_the_holder(postgres_url):
    held = await hold_postgres(postgres_url)  # as migrate-to holds it (workers share it)
    try:
        result = start(postgres_url)
    finally:
        held.release()
    assert result.returncode == 2, result.stderr
    assert "is in use by paiju pid " in result.stderr and "PAIJU_DATABASE_URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bot_that_cannot_reach_postgresql_says_so_and_stops(tmp_path):
    result = start(f"postgresql://paiju:secret@/paiju?host={tmp_path}&port=5999")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("Not started: cannot reach the database postgresql://paiju:***@"), (
        result.stderr
    )
    assert "secret" not in result.stderr and "Traceback" not in result.stderr
