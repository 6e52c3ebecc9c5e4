"""The inbox: every update Telegram delivers, kept until the worker owning its chat has taken it.

The webhook (any worker) puts an update here and answers Telegram only once that is committed; a
duplicate ``update_id`` (a redelivery, or one taken already: ``updates_taken``) is dropped. The put
notifies the channel ``paiju_inbox`` (PostgreSQL's ``NOTIFY``, sent at the commit) with the
update's partition, so its owner wakes at once. An update leaves the inbox in the transaction
that marks it taken (``storage/updates.py``): the one of the table action it makes
(``tables.commit_action``), or, making none, once it is handled (``bot/updates/seen.py``). A worker
lost before that commit leaves it here for the next owner, nothing of it saved.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from storage.sql import Query, marks, rows, run, value

CHANNEL = "paiju_inbox"


def put(update_id: int, partition: int, body: str, now_text: str) -> Query[bool]:
    """Keep an update for its partition's owner; False if it is here or was taken already."""
    added = yield from run(
        "INSERT INTO inbox (update_id, partition, body, received_at)"
        " SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM updates_taken WHERE update_id = ?)"
        " ON CONFLICT (update_id) DO NOTHING",
        (update_id, partition, body, now_text, update_id),
    )
    if added:
        yield from run("", (), postgres=f"SELECT pg_notify('{CHANNEL}', '{int(partition)}')")
    return added > 0


def put_all(updates: Sequence[tuple[int, int, str]], now_text: str) -> Query[int]:
    """:func:`put` for each (update_id, partition, body); how many were new."""
    added = 0
    for update_id, partition, body in updates:
        added += yield from put(update_id, partition, body, now_text)
    return added


def waiting(partitions: Collection[int], after: int, limit: int) -> Query[list[tuple[int, int, str]]]:
    """The updates waiting for these partitions with an id above ``after``, oldest first:
    (update_id, partition, body)."""
    if not partitions:
        return []
    found = yield from rows(
        "SELECT update_id, partition, body FROM inbox"
        f" WHERE partition IN ({marks(len(partitions))}) AND update_id > ? ORDER BY update_id LIMIT ?",
        (*sorted(partitions), after, limit),
    )
    return [(row[0], row[1], row[2]) for row in found]


def depth() -> Query[int]:
    """How many updates wait in the inbox."""
    return int((yield from value("SELECT COUNT(*) FROM inbox")) or 0)
