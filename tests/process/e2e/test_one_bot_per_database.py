"""Two bots on one database (issue 14), as processes: the second ``python -m bot`` refuses to start,
naming the file and the running bot's process, and the first plays on; stopped, it lets the file go.

The lock itself, between processes, by any name of the file (a hard link included, issue 24) and
after a SIGKILL: ``tests/unit/storage/test_storage_exclusive.py``; ``main`` refusing by a hard link, and
the sandbox's refusal: ``tests/component/test_database_in_use.py``; a fresh sandbox beside a held
database: ``tests/process/e2e/test_sandbox_process.py``."""

from __future__ import annotations

import asyncio
import sys

from faketg.harness import GROUP

UNREACHABLE = "http://127.0.0.1:9"  # nothing answers: a bot that got as far as Telegram would fail there


async def test_a_second_bot_on_the_same_database_refuses_to_start(stage):
    first = stage.bot
    assert first.process is not None
    second = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=first.database.parent,
        env=first.env() | {"PAIJU_BOT_API_URL": UNREACHABLE},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, errors = await asyncio.wait_for(second.communicate(), 60)
    message = errors.decode()
    assert second.returncode == 2, message
    assert f"the database {first.database} is in use by process {first.process.pid}" in message
    assert "PAIJU_DB" in message and "Traceback" not in message

    await stage.driver.send(1, GROUP, "/newgame muxi")  # the first bot still plays
    await answered(stage, "等待开局")
    assert await first.stop() == 0
    await first.start()  # stopped, it let the file go


async def answered(stage, words: str, timeout: float = 30.0) -> None:
    """Wait until the bot's last message in the group says ``words`` (the emulator's "handled" is
    the bot falling quiet for a moment, which a loaded machine can stretch past)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while not any(words in message.text for message in stage.world.bot_messages(GROUP)[-1:]):
        assert loop.time() < give_up, f"the bot did not answer: {stage.world.bot_messages(GROUP)[-3:]}"
        await asyncio.sleep(0.05)
