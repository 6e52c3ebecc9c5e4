"""The reliability tests' stages (the emulator and the bot process, faults injected) and a muxi round
in its draw. How many games they play is ``tests/process/reliability/profile.py``'s; every loop is bounded in
count and time; traffic stays on 127.0.0.1."""

import pytest

from faketg.harness import GROUP, make_world
from faketg.server import Faults
from tests.component.decks import ESCAPE_DEAL, stack
from tests.component.scenarios import open_and_start
from tests.process.e2e import spares
from tests.process.e2e.process import make_stage

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


@pytest.fixture
async def playing(bot):
    """A muxi round in its draw: 1 is banker, 2 and 3 play."""
    stack(bot, [2, 3, 1], ESCAPE_DEAL)
    await open_and_start(bot, [1, 2, 3])
    await bot.driver.press(1, GROUP, "当庄")
    return bot


@pytest.fixture(scope="session", autouse=True)
def spare_bots():
    """Bot processes ready to start warm before the first test here needs one
    (tests/process/e2e/spares.py)."""
    spares.warm()
