"""Logging for the running bot: never the token (python-telegram-bot logs its API URL at DEBUG,
httpx every request URL at INFO; both hold the token)."""

from __future__ import annotations

import logging
from typing import TextIO

REDACTED = "<token>"


class RedactToken(logging.Filter):
    """Replaces the token (and its secret half) wherever it appears in a record's message."""

    def __init__(self, token: str) -> None:
        super().__init__()
        secret = token.partition(":")[2]
        self.secrets = [part for part in (token, secret) if len(part) >= 8]  # nothing to hide in ""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for secret in self.secrets:
            redacted = redacted.replace(secret, REDACTED)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


def configure_logging(token: str, level: int = logging.INFO, stream: TextIO | None = None) -> None:
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=level, stream=stream, force=True
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    redact = RedactToken(token)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redact)
