"""``bot.app.set_menu`` in the background: a refusal Telegram will repeat (a bad request, the bot
blocked, a revoked token, any other Telegram error) ends it with one log line, never a task that
dies silently and shows its traceback only at shutdown."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
from telegram.error import BadRequest, Conflict, Forbidden, InvalidToken

from bot import app as botapp
from bot.botdata import BotData
from bot.settings import Settings


@pytest.mark.parametrize("error", [BadRequest("bad"), Forbidden("no"), InvalidToken(), Conflict("other")])
async def test_a_refused_menu_ends_with_one_line(error, caplog):
    calls = []

    async def set_my_commands(*args, **kwargs):
        calls.append(args)
        raise error

    data = BotData()
    data.settings = Settings(token="1:x")
    application = SimpleNamespace(bot=SimpleNamespace(set_my_commands=set_my_commands), bot_data=data)
    caplog.set_level(logging.INFO)
    await botapp.set_menu(application)
    assert len(calls) == 1
    lines = [record for record in caplog.records if record.name == "bot.app"]
    assert len(lines) == 1 and lines[0].levelno == logging.ERROR and not lines[0].exc_info
