"""``python -m bot`` on SQLite that cannot start its writer process says why in one line, no
traceback, and stops (exit status 2, as for a database it cannot reach or another bot holds)."""

from __future__ import annotations

import pytest

from faketg.harness import make_world
from tests.e2e.process import make_stage


async def test_a_temporary_folder_too_deep_for_the_writers_socket_is_named_and_the_bot_stops(tmp_path):
    deep = tmp_path / ("d" * 100)  # the forkserver's socket path in it is over AF_UNIX's 108 bytes
    deep.mkdir()
    stage = await make_stage(make_world(), tmp_path)
    stage.bot.extra_env["TMPDIR"] = str(deep)
    try:
        with pytest.raises(RuntimeError, match="did not start"):
            await stage.bot.start()
        assert stage.bot.process is not None and await stage.bot.process.wait() == 2
        said = stage.bot.log.read_text()
        assert said.startswith("Not started: cannot start the writer process of the database "), said
        assert f"under the temporary folder {deep}: a shorter TMPDIR may be needed" in said
        assert "Traceback" not in said
    finally:
        await stage.emulator.stop()
