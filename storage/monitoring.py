"""What the bot's health check and metrics ask of the database."""

from __future__ import annotations

import sqlite3

from storage.schema import schema_version


def touch(conn: sqlite3.Connection) -> None:
    """A real write that changes nothing: the schema version written back as it is. SQLite skips
    an UPDATE that leaves a row's bytes as they were; this pragma always writes the header page,
    so the write fails wherever any write would (a disk that is full or read-only, the lock held)."""
    conn.execute(f"PRAGMA user_version = {schema_version(conn)}")


def finished_rounds(conn: sqlite3.Connection, after: int) -> tuple[int, dict[str, int]]:
    """The rounds settled with results (not those cancelled or that nobody banked) since round id
    ``after``, per game, and the last round id read (the next call's ``after``: each is read once;
    a round and its results are saved in one transaction)."""
    rows = conn.execute(
        "SELECT r.id, r.game, EXISTS (SELECT 1 FROM round_results x WHERE x.round_id = r.id)"
        " FROM rounds r WHERE r.id > ? ORDER BY r.id",
        (after,),
    ).fetchall()
    counts: dict[str, int] = {}
    for _, game, settled in rows:
        if settled:
            counts[game] = counts.get(game, 0) + 1
    return (rows[-1][0] if rows else after), counts
