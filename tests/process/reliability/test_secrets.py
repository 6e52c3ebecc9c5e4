"""Secrets: the token never appears in the logs or in an error message."""

import contextlib
import logging
import sys

from bot.ops.logs import RedactToken
from bot.settings import Settings
from faketg.harness import make_world
from faketg.server import Emulator
from tests.process.e2e.process import TOKEN, BotProcess

SECRET = TOKEN.split(":")[1]


async def test_a_rejected_token_stops_the_bot_without_showing_it(tmp_path):
    emulator = Emulator(make_world(), tokens=frozenset({"1:SOMETHING-ELSE"}))
    await emulator.start()
    bot = BotProcess(emulator, tmp_path / "paiju.sqlite3", tmp_path / "bot.log")
    with contextlib.suppress(RuntimeError):  # it never polls: Telegram refused the token
        await bot.start(timeout=5)
    assert bot.process is not None
    assert await bot.process.wait() == 1
    log = bot.log.read_text()
    assert "rejected" in log or "Unauthorized" in log or "InvalidToken" in log, log[-2000:]
    assert SECRET not in log and "<token>" in log
    await emulator.stop()


def test_the_settings_never_print_the_token():
    settings = Settings(token=TOKEN)
    assert SECRET not in repr(settings) and SECRET not in str(settings)


def test_tracebacks_are_redacted_too():
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed: %s", (TOKEN,), None)
    try:
        raise ValueError(f"The token `{TOKEN}` was rejected by the server.")
    except ValueError:
        record.exc_info = sys.exc_info()
    RedactToken(TOKEN).filter(record)
    formatted = logging.Formatter().format(record)
    assert SECRET not in formatted and formatted.count("<token>") == 2
