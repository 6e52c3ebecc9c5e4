"""The updates the bot has taken, by ``update_id``: Telegram sends an update again when it did not
see its delivery acknowledged (a webhook post whose answer was lost, a crash between ``getUpdates``
calls), and the bot must handle each one once (``bot/deliveries.py`` asks here).

Kept for ``KEEP``: Telegram keeps an update it could not deliver for 24 hours, so no redelivery
comes later than that. After a week without updates Telegram may start its ids anywhere; by then
every id here is forgotten.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import timedelta

KEEP = timedelta(hours=48)


def remember(conn: sqlite3.Connection, update_ids: Iterable[int], now: str) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO updates_taken (update_id, taken_at) VALUES (?, ?)",
        ((update_id, now) for update_id in update_ids),
    )


def forget_before(conn: sqlite3.Connection, before: str) -> int:
    """Forget the updates taken before ``before``; how many were forgotten."""
    return conn.execute("DELETE FROM updates_taken WHERE taken_at < ?", (before,)).rowcount


def taken(conn: sqlite3.Connection, update_id: int) -> bool:
    row = conn.execute("SELECT 1 FROM updates_taken WHERE update_id = ?", (update_id,)).fetchone()
    return row is not None


def newest(conn: sqlite3.Connection) -> int | None:
    row = conn.execute("SELECT max(update_id) FROM updates_taken").fetchone()
    return None if row is None or row[0] is None else int(row[0])
