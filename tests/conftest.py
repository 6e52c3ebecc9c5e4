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

# Three workers, even on two cores: most tests wait (on Telegram's pacing of a group, on processes
# starting and stopping) more than they compute; with two the cores were half idle (6 min 24 s to
# 6 min 40 s; with three 5 min 26 s). The order the files are handed out (--dist loadfile, and
# --no-loadscope-reorder keeps this order, where xdist would put the files with most tests first):
# the chaos test first, the longest file (its pauses and takeovers are judged) beside the lightest,
# the unit tests; then the process tests, each a few seconds; the component tests, many and short,
# last, so that the workers finish together.
FIRST = "tests/process/reliability/test_chaos.py"
LEVELS = ("tests/unit/", "tests/process/", "tests/component/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0]
        if path == FIRST:
            return 0
        return next((1 + i for i, level in enumerate(LEVELS) if path.startswith(level)), 1 + len(LEVELS))

    items.sort(key=rank)  # (stable: each file's tests keep their order)


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
