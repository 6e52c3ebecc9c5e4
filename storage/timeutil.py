"""Time as storage keeps it: aware datetimes in, ISO-8601 UTC text in the database."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_db(moment: datetime) -> str:
    """UTC ISO text of fixed width, so that text order is time order."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: storage needs an aware one")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def from_db(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def from_db_required(text: str) -> datetime:
    return datetime.fromisoformat(text)
