"""``python -m storage backup`` while the bot plays: the copy passes the check and holds the last
committed action of the game under way."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

from faketg.harness import GROUP
from tests.component.scenarios import open_and_start
from tests.process.e2e.process import ROOT, storage_check


def saved_table(database):
    """The open table's version and saved state, as committed."""
    with sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True) as db:
        version, state = db.execute("SELECT version, state FROM tables WHERE closed = 0").fetchone()
    return version, json.loads(state)


def backup(database, destination):
    return subprocess.run(
        [sys.executable, "-m", "storage", "backup", str(database), "--to", str(destination)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_a_backup_in_the_middle_of_a_round_holds_its_last_action(stage, tmp_path):
    people = [1, 2, 3]
    await open_and_start(stage, people, "muxi")
    await stage.driver.press(1, GROUP, "当庄")
    choosers = [person for person in people[1:] if stage.driver.labels(person)]
    if choosers:  # (the deal is random: both may hold naturals, and the round is over)
        await stage.driver.press(choosers[0], choosers[0], stage.driver.labels(choosers[0])[0])
    live = saved_table(stage.bot.database)

    made = backup(stage.bot.database, tmp_path / "copy.sqlite3")
    assert made.returncode == 0, made.stdout + made.stderr
    check = storage_check(tmp_path / "copy.sqlite3")
    assert check.returncode == 0, check.stdout + check.stderr
    assert saved_table(tmp_path / "copy.sqlite3") == live == saved_table(stage.bot.database)
    assert not list(tmp_path.glob("copy.sqlite3-*")), "one self-contained file"

    await stage.driver.finish_muxi_round(GROUP, people)  # the bot played on while it was copied
