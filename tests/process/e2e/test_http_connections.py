"""The bot's HTTP server under a flood of connections that never send a request, the whole
process under a lowered limit of open files (``prlimit``): past its cap (``bot/web/open_files.py``) a
new connection is answered 503 and closed at once, so the flood never takes the files the bot
needs; it keeps playing, ``accept()`` never runs out of files, and the log stays short."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bot.web.open_files import KEPT_FOR_THE_BOT
from faketg.harness import GROUP, make_world
from tests.process.e2e.process import limited_python, make_stage, needs_prlimit
from tests.waiting import until

pytestmark = needs_prlimit

OPEN_FILES = KEPT_FOR_THE_BOT + 200  # the bot's limit: its server holds 200 connections
FLOOD = 400  # idle connections opened: twice what it holds, more than its open files


@pytest.fixture
async def limited(tmp_path, monkeypatch):
    """A polling bot with its HTTP server, started under ``prlimit --nofile=OPEN_FILES``."""
    staged = await make_stage(make_world(), tmp_path)
    staged.bot.extra_env["PAIJU_HTTP_PORT"] = str(staged.bot.http_port)
    with monkeypatch.context() as patched:
        patched.setattr(sys, "executable", str(limited_python(tmp_path, OPEN_FILES)))
        await staged.bot.start()
    yield staged
    await staged.bot.stop()
    await staged.emulator.stop()


async def first_line(reader: asyncio.StreamReader, timeout: float) -> bytes | None:
    """The first line the server says, or None if it says nothing in ``timeout`` (held idle)."""
    try:
        return await asyncio.wait_for(reader.readline(), timeout)
    except TimeoutError:
        return None


async def test_idle_connections_past_the_cap_are_refused_and_the_bot_plays_on(limited):
    stage = limited
    opened = []
    try:
        for _ in range(FLOOD):
            opened.append(await asyncio.open_connection("127.0.0.1", stage.bot.http_port))
        said = await asyncio.gather(*(first_line(reader, 3.0) for reader, _ in opened))
        refused = [line for line in said if line is not None]
        assert all(line.startswith(b"HTTP/1.1 503") for line in refused), set(refused)
        assert FLOOD - 200 <= len(refused) < FLOOD, "the server holds its cap, and refuses the rest"

        await stage.driver.send(1, GROUP, "/newgame muxi")  # the bot still reaches Telegram
        await until(
            lambda: any("木虱" in m.text for m in stage.world.bot_messages(GROUP)), "the table opens", 30.0
        )
    finally:
        for _, writer in opened:
            writer.close()
    log = stage.bot.log.read_text()
    assert "out of system resource" not in log and "Too many open files" not in log
    assert len([line for line in log.splitlines() if "refused" in line]) <= 3
