import pytest

from faketg.harness import make_world
from tests.process.e2e import spares
from tests.process.e2e.process import make_stage


@pytest.fixture
async def stage(tmp_path):
    staged = await make_stage(make_world(), tmp_path)
    await staged.bot.start()
    yield staged
    await staged.bot.stop()
    await staged.emulator.stop()


@pytest.fixture
def webhook_env() -> dict[str, str]:
    """More settings for the ``by_webhook`` bot (a test module overrides this fixture)."""
    return {}


@pytest.fixture
async def by_webhook(tmp_path, webhook_env):
    """The bot by webhook: the emulator posts the updates to it, as Telegram does."""
    staged = await make_stage(make_world(), tmp_path)
    staged.bot.webhook = True
    staged.bot.extra_env.update(webhook_env)
    await staged.bot.start()
    yield staged
    await staged.bot.stop()
    await staged.emulator.stop()


@pytest.fixture(scope="session", autouse=True)
def spare_bots():
    """Bot processes ready to start warm before the first test here needs one
    (tests/process/e2e/spares.py)."""
    spares.warm()
