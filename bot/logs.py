"""Logging for the running bot: never the token (python-telegram-bot logs its API URL at DEBUG,
httpx, if anything uses it, every request URL at INFO; both hold the token)."""

from __future__ import annotations

import logging
from typing import TextIO

REDACTED = "<token>"
_FORMATTER = logging.Formatter()


class RedactToken(logging.Filter):
    """Replaces the token (and its secret half) wherever it appears in a record's message."""

    def __init__(self, token: str) -> None:
        super().__init__()
        secret = token.partition(":")[2]
        self.secrets = [part for part in (token, secret) if len(part) >= 8]  # nothing to hide in ""

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


def configure_logging(token: str, level: int = logging.INFO, stream: TextIO | None = None) -> None:
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=level, stream=stream, force=True
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # a line for every deadline re-armed
    redact = RedactToken(token)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redact)
