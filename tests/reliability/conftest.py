"""Two profiles: a short one that CI runs, and ``PAIJU_RELIABILITY=long`` for the figures of
docs/RELIABILITY.md. Every loop is bounded in count and time; traffic stays on 127.0.0.1."""

import os

import pytest

from faketg.harness import GROUP, make_world
from faketg.server import Faults
from tests.bot.decks import stack
from tests.bot.scenarios import open_and_start
from tests.e2e.process import make_stage

LONG = os.environ.get("PAIJU_RELIABILITY") == "long"
PROFILE = {
    "crash_games": 50 if LONG else 6,
    "fault_games": 20 if LONG else 3,
    "fuzz_games": 10_000 if LONG else 300,
}
# People play many games without going broke; the table messages keep to their default share of
# Telegram's 20 requests a minute per group (the e2e tests lift it to read every edit at once).
SETTINGS = {
    "PAIJU_START_GRANT": "1000000",
    "PAIJU_TABLE_REQUESTS_PER_MINUTE": "15",
}


@pytest.fixture
async def stages(tmp_path):
    """Make a stage (emulator + bot process) with ``await stages(faults)``; all are stopped after."""
    made = []

    async def make(faults: Faults | None = None):
        folder = tmp_path / f"stage{len(made)}"
        folder.mkdir()
        stage = await make_stage(make_world(), folder, faults)
        stage.bot.extra_env.update(SETTINGS)
        await stage.bot.start()
        made.append(stage)
        return stage

    yield make
    for stage in made:
        stage.emulator.faults = Faults()
        await stage.bot.stop()
        await stage.emulator.stop()


ESCAPE_DEAL = {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"}


@pytest.fixture
async def playing(bot):
    """A muxi round in its draw: 1 is banker, 2 and 3 play."""
    stack(bot, [2, 3, 1], ESCAPE_DEAL)
    await open_and_start(bot, [1, 2, 3])
    await bot.driver.press(1, GROUP, "当庄")
    return bot
