"""Log lines: one per event, naming the update, chat, person and table being handled; JSON for log
collectors; never the token nor the webhook's secret token, tracebacks included."""

from __future__ import annotations

import contextvars
import io
import json
import logging

import pytest

from bot.ops.logs import configure_logging, log_context
from tests.process.e2e.process import TOKEN

SECRET = TOKEN.split(":")[1]
WEBHOOK_SECRET = "the-webhook-secret-token-0123456789"


@pytest.fixture
def root_logging():
    """configure_logging replaces the root logger's handlers: put them back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def logged(json_lines: bool, emit) -> list[str]:
    stream = io.StringIO()
    configure_logging(TOKEN, stream=stream, json_lines=json_lines, secrets=[WEBHOOK_SECRET])
    contextvars.Context().run(emit)  # the ids set there stay there
    return stream.getvalue().splitlines()


def handling_an_update():
    log = logging.getLogger("bot.test")
    log.info("before any update")
    log_context(update_id=12, chat_id=-100123, user_id=2, table_id=None)
    log.warning("posted to %s with %s", f"https://api.telegram.org/bot{TOKEN}/x", WEBHOOK_SECRET)
    try:
        raise ValueError(f"The token `{TOKEN}` was rejected by the server.")
    except ValueError:
        log.exception("it failed", extra={"table_id": 7})


def test_a_json_line_per_event_with_its_ids_and_no_secret(root_logging):
    lines = logged(True, handling_an_update)
    assert len(lines) == 3, "a traceback stays inside its line"
    first, second, third = (json.loads(line) for line in lines)
    assert first["message"] == "before any update" and "chat_id" not in first
    assert (second["level"], second["logger"]) == ("WARNING", "bot.test")
    assert (second["update_id"], second["chat_id"], second["user_id"]) == (12, -100123, 2)
    assert "table_id" not in second
    assert second["message"] == "posted to https://api.telegram.org/bot<token>/x with <token>"
    assert third["table_id"] == 7 and third["chat_id"] == -100123
    assert "ValueError" in third["exception"] and "<token>" in third["exception"]
    text = "\n".join(lines)
    assert SECRET not in text and WEBHOOK_SECRET not in text
    assert second["time"].endswith("+00:00")


def test_a_text_line_names_the_ids_at_its_end(root_logging):
    lines = logged(False, handling_an_update)
    assert lines[0].endswith("INFO bot.test: before any update")
    assert lines[1].endswith(" update_id=12 chat_id=-100123 user_id=2")
    assert " update_id=12 chat_id=-100123 user_id=2 table_id=7" in lines[2]
    text = "\n".join(lines)
    assert SECRET not in text and WEBHOOK_SECRET not in text and "Traceback" in text
