"""The updates the bot has taken, by ``update_id``: Telegram sends an update again when it did not
see its delivery acknowledged (a webhook post whose answer was lost, a crash between ``getUpdates``
calls), and the bot must handle each one once (``bot/updates/seen.py`` asks here).

An id is kept while it is among the newest ``NEWEST`` and younger than ``KEEP``. Telegram keeps an
update it could not deliver for 24 hours, so no redelivery comes later than that; one comes when
Telegram did not see the bot's answer (at once, or when a bot that crashed before answering is
back, within the day): the ids to know are the last ones taken, however long ago the bot stopped.
A busy bot's table stays small (the newest ``NEWEST``, a few MB). After a week without updates
Telegram may start its ids anywhere; by then every id here is forgotten.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import timedelta
from typing import Any

from storage.partitions import PARTITION_SQL, Fence, fenced_partition
from storage.sql import Query, marks, rows, run, value

KEEP = timedelta(hours=48)
NEWEST = 100_000


def remember(
    update_ids: Sequence[int], now: str, fence: Fence | None = None, owed: tuple[str, int] | None = None
) -> Query[int]:
    """These updates are taken: kept here, and out of the inbox (``storage/inbox.py``); how many
    were not taken before. With a ``fence``, refused (``NotOwner``) for an update of a partition the
    worker does not own: it stays in the inbox for the owner. ``owed``: the first is a press whose
    answer is still to come (its query's id, its table's chat): :func:`owed_answers`."""
    ids = list(update_ids)
    if fence is not None:
        waiting = yield from rows(
            f"SELECT DISTINCT partition FROM inbox WHERE update_id IN ({marks(len(ids))})", ids
        )
        for row in waiting:
            yield from fenced_partition(fence, row[0])
    taken = 0
    for update_id in ids:
        taken += yield from run(
            "INSERT INTO updates_taken (update_id, taken_at) VALUES (?, ?)"
            " ON CONFLICT (update_id) DO NOTHING",
            (update_id, now),
        )
    if owed is not None and ids:
        yield from run(
            "UPDATE updates_taken SET query_id = ?, chat_id = ? WHERE update_id = ?", (*owed, ids[0])
        )
    if fence is not None:  # (only workers, each fenced, take updates from the inbox)
        yield from run(f"DELETE FROM inbox WHERE update_id IN ({marks(len(ids))})", ids)
    return taken


def forget(before: str, newest: int = NEWEST) -> Query[int]:
    """Forget the updates taken before ``before``, and all but the ``newest``; how many."""
    forgotten = yield from run("DELETE FROM updates_taken WHERE taken_at < ?", (before,))
    return forgotten + (
        yield from run(
            "DELETE FROM updates_taken WHERE update_id <"
            " (SELECT update_id FROM updates_taken ORDER BY update_id DESC LIMIT 1 OFFSET ?)",
            (newest - 1,),
        )
    )


def taken(update_id: int) -> Query[bool]:
    return (yield from value("SELECT 1 FROM updates_taken WHERE update_id = ?", (update_id,))) is not None


def newest() -> Query[int | None]:
    found = yield from value("SELECT max(update_id) FROM updates_taken")
    return None if found is None else int(found)


def owed_answers(since: str, count: int, partitions: Collection[int] | None) -> Query[list[tuple[int, str]]]:
    """Presses saved since ``since`` whose answers are still owed (their worker ended between the
    save and the answer), of the chats in these ``partitions`` (of ``count``; None: all)."""
    where = ""
    args: list[Any] = [since]
    if partitions is not None:
        if not partitions:
            return []
        where = f" AND {PARTITION_SQL} IN ({marks(len(partitions))})"
        args += [count, count, count, *partitions]
    found = yield from rows(
        f"SELECT update_id, query_id FROM updates_taken WHERE query_id IS NOT NULL AND taken_at >= ?{where}",
        args,
    )
    return [(int(row[0]), str(row[1])) for row in found]


def answered(update_ids: Sequence[int]) -> Query[None]:
    """These presses are answered: no answer is owed for them any more."""
    if update_ids:
        yield from run(
            f"UPDATE updates_taken SET query_id = NULL WHERE update_id IN ({marks(len(update_ids))})",
            list(update_ids),
        )
