import pytest

from tests.bot.harness import make_world
from tests.e2e.process import make_stage


@pytest.fixture
async def stage(tmp_path):
    staged = await make_stage(make_world(), tmp_path)
    await staged.bot.start()
    yield staged
    await staged.bot.stop()
    await staged.emulator.stop()


@pytest.fixture
async def by_webhook(tmp_path):
    """The bot by webhook: the emulator posts the updates to it, as Telegram does."""
    staged = await make_stage(make_world(), tmp_path)
    staged.bot.webhook = True
    await staged.bot.start()
    yield staged
    await staged.bot.stop()
    await staged.emulator.stop()
