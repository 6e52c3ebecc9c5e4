"""Logging for the running bot: one line per event, never the token.

python-telegram-bot logs its API URL at DEBUG, httpx (if anything uses it) every request URL at
INFO; both hold the token, so every line is redacted (``RedactToken``: the token, its secret half,
and the webhook's secret token). A line written while an update is handled names its update, chat,
person and table (``log_context``, set for each update before any handler runs): as
``key=value`` at the end of a text line, as fields of a JSON line (``PAIJU_LOG_FORMAT=json``, one
object per line, a traceback inside it, for log collectors).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TextIO

REDACTED = "<token>"
FIELDS = ("update_id", "chat_id", "user_id", "table_id")  # what an event is about, when known
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(about)s"
_FORMATTER = logging.Formatter()
_CONTEXT: ContextVar[dict[str, int] | None] = ContextVar("log_context", default=None)


def log_context(**ids: int | None) -> None:
    """Name these ids in every line logged from now on by this task (and the tasks it starts)."""
    _CONTEXT.set({name: value for name, value in ids.items() if value is not None})


class RedactToken(logging.Filter):
    """Replaces the token (and its secret half, and any other secret given) in a record."""

    def __init__(self, token: str, others: Iterable[str] = ()) -> None:
        super().__init__()
        secret = token.partition(":")[2]
        self.secrets = [part for part in (token, secret, *others) if len(part) >= 8]  # nothing to hide in ""

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if (redacted := self.redact(message)) != message:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:  # a traceback may quote the token (InvalidToken does)
            record.exc_text = self.redact(_FORMATTER.formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class AddContext(logging.Filter):
    """Puts the ids of ``log_context`` on the record (those given with ``extra`` win), and
    ``about``: them as text."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in (_CONTEXT.get() or {}).items():
            if getattr(record, name, None) is None:
                setattr(record, name, value)
        known = [(name, getattr(record, name, None)) for name in FIELDS]
        record.about = "".join(f" {name}={value}" for name, value in known if value is not None)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, message, the ids, the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in FIELDS:
            if (value := getattr(record, name, None)) is not None:
                line[name] = value
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, ensure_ascii=False)


def configure_logging(
    token: str,
    level: int = logging.INFO,
    stream: TextIO | None = None,
    *,
    json_lines: bool = False,
    secrets: Iterable[str] = (),
) -> None:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if json_lines else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(AddContext())
    handler.addFilter(RedactToken(token, secrets))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # a line for every deadline re-armed
