"""Two bots on one database (issue 14): the second ``python -m bot`` (or sandbox) refuses to start,
naming the file and the running process, and the first plays on; by whatever name the second is
given the file, a hard link included (issue 24: through one, each bot kept its own -wal of one file
and an acknowledged /daily was lost)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from faketg.harness import GROUP
from tests.e2e.process import ROOT

UNREACHABLE = "http://127.0.0.1:9"  # nothing answers: a bot that got as far as Telegram would fail there


async def test_a_second_bot_on_the_same_database_refuses_to_start(stage):
    first = stage.bot
    assert first.process is not None
    second = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=first.database.parent,
        env=first.env() | {"PAIJU_BOT_API_URL": UNREACHABLE},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, errors = await asyncio.wait_for(second.communicate(), 60)
    message = errors.decode()
    assert second.returncode == 2, message
    assert f"the database {first.database} is in use by process {first.process.pid}" in message
    assert "PAIJU_DB" in message and "Traceback" not in message

    await stage.driver.send(1, GROUP, "/newgame muxi")  # the first bot still plays
    await answered(stage, "等待开局")
    assert await first.stop() == 0
    await first.start()  # stopped, it let the file go


async def test_a_second_bot_through_a_hard_link_refuses_to_start(stage):
    first = stage.bot
    assert first.process is not None
    linked = first.database.with_name("linked.sqlite3")
    os.link(first.database, linked)
    second = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=first.database.parent,
        env=first.env() | {"PAIJU_DB": str(linked), "PAIJU_BOT_API_URL": UNREACHABLE},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, errors = await asyncio.wait_for(second.communicate(), 60)
    finally:
        if second.returncode is None:  # it started: the test fails below, not hangs
            second.kill()
            await second.wait()
    message = errors.decode()
    assert second.returncode == 2, message
    assert f"the database {linked} is in use by process {first.process.pid}" in message
    assert "Traceback" not in message
    assert not Path(f"{linked}-wal").exists(), "the second bot never opened the file"

    await stage.driver.send(1, GROUP, "/newgame muxi")  # the first bot still plays
    await answered(stage, "等待开局")
    assert await first.stop() == 0
    first.database = linked
    await first.start()  # stopped, it let the file go, by either name


async def answered(stage, words: str, timeout: float = 30.0) -> None:
    """Wait until the bot's last message in the group says ``words`` (the emulator's "handled" is
    the bot falling quiet for a moment, which a loaded machine can stretch past)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while not any(words in message.text for message in stage.world.bot_messages(GROUP)[-1:]):
        assert loop.time() < give_up, f"the bot did not answer: {stage.world.bot_messages(GROUP)[-3:]}"
        await asyncio.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def sandbox(folder: Path, *options: str) -> subprocess.Popen[str]:
    """``python -m bot sandbox`` in ``folder``, once it serves its page (it said so on stdout)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "--port", str(free_port()), *options],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    watchdog = threading.Timer(60, process.kill)  # a hung sandbox must not hang the suite
    watchdog.start()
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # returns at once if the sandbox dies: EOF
    finally:
        watchdog.cancel()
    if "open http://" not in line:
        process.kill()
        raise AssertionError(f"the sandbox did not start: {line}{process.communicate(timeout=30)[0]}")
    return process


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.communicate(timeout=30)


def test_a_second_sandbox_on_the_same_database_refuses_to_start(tmp_path):
    first = sandbox(tmp_path)
    try:
        second = subprocess.run(
            [sys.executable, "-m", "bot", "sandbox", "--port", str(free_port())],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        database = Path(os.path.realpath(tmp_path)) / "paiju-sandbox.sqlite3"
        assert second.returncode == 2, second.stderr
        assert f"the database {database} is in use by process {first.pid}" in second.stderr
        assert "--fresh" in second.stderr and "Traceback" not in second.stderr
        stop(sandbox(tmp_path, "--fresh"))  # a fresh one has a database of its own
    finally:
        stop(first)
    stop(sandbox(tmp_path))  # stopped, the first let the file go
