"""What the bot's health check and metrics ask of the database."""

from __future__ import annotations

from storage.schema import schema_version, set_version
from storage.sql import Query, rows


def touch() -> Query[None]:
    """A real write that changes nothing: the schema version written back as it is. SQLite skips
    an UPDATE that leaves a row's bytes as they were; its pragma always writes the header page
    (PostgreSQL writes a new row version all the same), so the write fails wherever any write
    would (a disk that is full or read-only, the lock held)."""
    yield from set_version((yield from schema_version()))


def finished_rounds(after: int) -> Query[tuple[int, dict[str, int]]]:
    """The rounds settled with results (not those cancelled or that nobody banked) since round id
    ``after``, per game, and the last round id read (the next call's ``after``: each is read once;
    a round and its results are saved in one transaction)."""
    found = yield from rows(
        "SELECT r.id, r.game, EXISTS (SELECT 1 FROM round_results x WHERE x.round_id = r.id)"
        " FROM rounds r WHERE r.id > ? ORDER BY r.id",
        (after,),
    )
    counts: dict[str, int] = {}
    for _, game, settled in found:
        if settled:
            counts[game] = counts.get(game, 0) + 1
    return (found[-1][0] if found else after), counts
