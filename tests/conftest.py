"""Fixtures every test folder may use: the fake Telegram world, the bot in process, and the bot
served in process over HTTP (``serving``)."""

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from faketg.harness import make_world, start_bot, stop_bot
from faketg.server import Faults
from tests.component.serving import Serving, serve_bot

pytest_plugins = ["tests.postgres_server"]  # postgres_server, postgres_url


@pytest.fixture(scope="session", autouse=True)
def children_temp() -> Iterator[None]:
    """The processes the tests start keep their temporary files in one folder, removed at the end
    (a bot killed with SIGKILL leaves what it had open behind)."""
    folder = tempfile.mkdtemp(prefix="paiju-tests-")
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = folder
    try:
        yield
    finally:
        if before is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = before
        shutil.rmtree(folder, ignore_errors=True)


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


@pytest.fixture
async def serving(tmp_path):
    """Serve the bot in process over HTTP (``tests/component/serving.py``) with
    ``await serving(faults, **settings)``; stopped after the test."""
    made: list[Serving] = []

    async def make(faults: Faults | None = None, **options: object) -> Serving:
        made.append(await serve_bot(make_world(), tmp_path, faults, **options))
        return made[-1]

    yield make
    for stage in made:
        stage.emulator.faults = Faults()
        await stage.stop()
        await stage.emulator.stop()
