"""Fixtures every test folder may use: the fake Telegram world and the bot in process."""

import pytest

from faketg.harness import make_world, start_bot, stop_bot

pytest_plugins = ["tests.postgres_server"]  # postgres_server, postgres_url


@pytest.fixture
def world():
    return make_world()


@pytest.fixture
def database(tmp_path):
    return str(tmp_path / "paiju.sqlite3")


@pytest.fixture
async def bot(world, database):
    running = await start_bot(world, database)
    yield running
    await stop_bot(running)
