"""A button's answer Telegram does not take (a 5xx or a timeout, after the request layer's tries):
the press still acts, and the log says so in one line, never "an update failed" with a traceback
(issue 47, point 10)."""

from __future__ import annotations

import logging

from faketg.harness import GROUP
from faketg.world import ApiError


async def test_a_press_whose_answer_fails_still_acts_and_logs_one_line(bot, monkeypatch, caplog):
    real = bot.world.call

    def call(method, params):
        if method == "answerCallbackQuery":
            raise ApiError(502, "Bad Gateway")
        return real(method, params)

    monkeypatch.setattr(bot.world, "call", call)
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    with caplog.at_level(logging.WARNING):
        await d.press(2, GROUP, "加入")
    assert "小红" in d.table(GROUP), "the press acted"
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR], caplog.text
    assert "Traceback" not in caplog.text
    assert any("answer" in record.getMessage() for record in caplog.records), "one line says so"
