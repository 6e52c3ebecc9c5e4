"""The real bot process while Telegram misbehaves (issue 30): a start that fails (getMe refused at
every try) ends the process with status 1 and its HTTP sessions closed.

What Telegram's faults do to a bot that runs (the menu refused, a failed membership check, failing
or quick polls, a turn while the bot cannot hear) is tested with the bot served in process, faults
injected the same way: ``tests/component/test_telegram_faults.py``."""

from __future__ import annotations

import pytest

from faketg.harness import make_world
from faketg.server import Faults
from tests.process.e2e.process import make_stage


@pytest.fixture
async def staged(tmp_path):
    """A stage whose bot is not started yet (the test starts it under its faults)."""
    stage = await make_stage(make_world(), tmp_path)
    yield stage
    stage.emulator.faults = Faults()
    if stage.bot.process is not None:
        await stage.bot.stop()
    await stage.emulator.stop()


async def test_a_start_that_fails_closes_its_http_sessions(staged):
    staged.emulator.faults = Faults(always={"getMe": "internal_error"})  # needed to play: no start
    with pytest.raises(RuntimeError, match="did not start"):
        await staged.bot.start()
    assert staged.bot.process is not None
    assert await staged.bot.process.wait() == 1
    log = staged.bot.log.read_text()
    assert "the bot stopped" in log and "Unclosed" not in log, log[-3000:]
