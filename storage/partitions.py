"""Partitions: how several workers share the chats, each chat handled by one worker at a time.

A chat belongs to partition ``chat_id mod count`` (``count`` fixed when the first worker starts;
the rows of ``partitions``). A worker takes a partition by an advisory lock of PostgreSQL's (held
while its session lives: ``bot/cluster/workers.py``) and then :func:`claim`: the partition's ``epoch`` goes
up and names it the owner. Every write to a table of the partition is *fenced*: it checks, in its
own transaction, that its worker is the owner at the epoch it claimed (``FOR SHARE``, so a claim by
another waits for it to end, and any write after that claim is refused with :class:`NotOwner`). A
worker that lost its partition unawares (its session cut, then a pause) can therefore change
nothing of it: what it was doing is the new owner's to do again.

A worker is alive while it renews its *lease* (:func:`renew`, every second, for ``seconds`` ahead
by the database's clock): a session alive is not enough (a stopped or hung process keeps its
connection open). Another worker finds a lease that lapsed (:func:`lapsed`) and ends that worker's
session (:func:`end_session`): its advisory locks go with it, and its partitions to the others.

The advisory locks are session locks, taken on the worker's own connection (the one holding the
bot's shared lock, ``PostgresLock``): a worker's own (:func:`join`: it is counted among the workers
alive, :func:`live_workers`), the receiver's (:func:`take_receiving`: the worker that polls
Telegram), and one a partition (:func:`try_partition`, :func:`let_partition_go`, :func:`held`).
They and :func:`notify` are PostgreSQL's only (on SQLite one process holds every chat).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from storage.errors import StorageError
from storage.jsontext import compact_json
from storage.sql import Query, first, many, marks, rows, run, value


class NotOwner(StorageError):
    """A write to a table of a partition this worker does not own (any longer)."""

    def __init__(self, partition: int, owner: str) -> None:
        super().__init__(f"partition {partition} is not owned by {owner} at the epoch it claimed")
        self.partition = partition


def partition_of(chat_id: int, count: int) -> int:
    """The partition of a chat (Python's ``%`` is never negative; SQL's :data:`PARTITION_SQL` agrees)."""
    return chat_id % count


ENSURE_LOCK = 0x7061_6965  # "paie": PostgreSQL's transaction lock while the partitions are made
WORKER_LOCKS = 0x7061_6977  # "paiw": the advisory locks that say a worker is alive (one each)
RECEIVER = 0  # (of WORKER_LOCKS; a worker's own is never 0) held by the worker that polls Telegram
PARTITION_LOCKS = 0x7061_6970  # "paip": one advisory lock a partition
# The advisory locks of one class granted in this database (objsubid 2: taken with two keys).
GRANTED = (
    "FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = ? AND objsubid = 2"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)
PARTITION_SQL = "(((chat_id % ?) + ?) % ?)"  # partition_of in SQL (SQL's % keeps the dividend's sign)


@dataclass
class Fence:
    """What a worker owns: the epoch at which it claimed each of its partitions (changed as it takes
    and lets go of them; a write reads it when it runs)."""

    owner: str
    count: int
    epochs: dict[int, int] = field(default_factory=dict)

    def partition(self, chat_id: int) -> int:
        return partition_of(chat_id, self.count)


def fenced(fence: Fence | None, chat_id: int) -> Query[None]:
    """Refuse (``NotOwner``) unless ``fence``'s worker owns ``chat_id``'s partition at its epoch, and
    keep it so until this transaction ends (no fence: a single process, nothing to check)."""
    if fence is not None:
        yield from fenced_partition(fence, fence.partition(chat_id))


def fenced_partition(fence: Fence, partition: int) -> Query[None]:
    """:func:`fenced`, for a partition."""
    epoch = fence.epochs.get(partition)
    if epoch is None:
        raise NotOwner(partition, fence.owner)
    held = yield from first(
        "SELECT 1 FROM partitions WHERE partition = ? AND owner = ? AND epoch = ?",
        (partition, fence.owner, epoch),
        postgres="SELECT 1 FROM partitions WHERE partition = ? AND owner = ? AND epoch = ? FOR SHARE",
    )
    if held is None:
        raise NotOwner(partition, fence.owner)


def ensure(count: int) -> Query[int]:
    """The number of partitions: ``count`` made if there are none yet, else those there are (two
    first workers starting at once make them once: the second waits for the first's commit)."""
    yield from run("", postgres=f"SELECT pg_advisory_xact_lock({ENSURE_LOCK})")
    known = yield from value("SELECT COUNT(*) FROM partitions")
    if known:
        return int(known)
    yield from run(
        "WITH RECURSIVE n (value) AS (SELECT 0 UNION ALL SELECT value + 1 FROM n WHERE value + 1 < ?)"
        " INSERT INTO partitions (partition) SELECT value FROM n WHERE true ON CONFLICT DO NOTHING",
        (count,),
    )
    return int((yield from value("SELECT COUNT(*) FROM partitions")))


def claim(partition: int, owner: str, address: str | None, now_text: str) -> Query[int]:
    """``owner`` (reached at ``address``) takes ``partition`` (it holds its lock): its new epoch."""
    epoch = yield from value(
        "UPDATE partitions SET owner = ?, address = ?, epoch = epoch + 1, taken_at = ?, handed_over = 0"
        " WHERE partition = ? RETURNING epoch",
        (owner, address, now_text, partition),
    )
    if epoch is None:
        raise StorageError(f"there is no partition {partition}")
    return int(epoch)


def address_of_table(table_id: int, count: int) -> Query[tuple[str | None, str | None]]:
    """The owner of a table's partition and where it is reached ((None, None): no such table)."""
    row = yield from first(
        "SELECT p.owner, p.address FROM tables t JOIN partitions p"
        " ON p.partition = (((t.chat_id % ?) + ?) % ?) WHERE t.id = ?",
        (count, count, count, table_id),
    )
    return (None, None) if row is None else (row[0], row[1])


def owners() -> Query[Mapping[int, tuple[str | None, int]]]:
    """Each partition's last owner and epoch."""
    found = yield from rows("SELECT partition, owner, epoch FROM partitions ORDER BY partition")
    return {row[0]: (row[1], row[2]) for row in found}


def renew(name: str, pid: int, seconds: float) -> Query[None]:
    """``name`` (its own connection is the server's process ``pid``) is alive ``seconds`` more."""
    yield from run(
        "",
        (name, pid, seconds),
        postgres="INSERT INTO workers (name, pid, alive_until) VALUES (?, ?, clock_timestamp()"
        " + make_interval(secs => ?)) ON CONFLICT (name) DO UPDATE"
        " SET pid = excluded.pid, alive_until = excluded.alive_until",
    )


def lapsed(name: str) -> Query[list[tuple[str, int]]]:
    """The other workers whose leases lapsed, with their connections' processes; each is named
    once (forgotten here: back, it renews a lease anew)."""
    found = yield from rows(
        "SELECT name, pid FROM workers WHERE 0 AND name <> ?",
        (name,),
        postgres="DELETE FROM workers WHERE alive_until < clock_timestamp() AND name <> ?"
        " RETURNING name, pid",
    )
    return [(row[0], int(row[1])) for row in found]


def end_session(pid: int) -> Query[bool]:
    """End the server's process ``pid`` (a lapsed worker's connection), if it is still there:
    whether it was."""
    ended = yield from value(
        "SELECT ? * 0",
        (pid,),
        postgres="SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE pid = ? AND datname = current_database() AND pid <> pg_backend_pid()",
    )
    return bool(ended)


def forget(name: str) -> Query[None]:
    """``name`` stops (a clean stop: no lease left to lapse)."""
    yield from run("DELETE FROM workers WHERE name = ?", (name,))


def keep_budgets(sent: Mapping[int, list[tuple[float, int]]]) -> Query[None]:
    """What each group got in its last minute (``[time, share]``, by the wall clock), for the next
    worker to hold its table."""
    yield from many(
        "INSERT INTO chat_budgets (chat_id, sent) VALUES (?, ?)"
        " ON CONFLICT (chat_id) DO UPDATE SET sent = excluded.sent",
        [(chat_id, compact_json(requests)) for chat_id, requests in sent.items()],
    )


def budgets(chats: Collection[int]) -> Query[dict[int, list[tuple[float, int]]]]:
    """What :func:`keep_budgets` kept for these groups."""
    if not chats:
        return {}
    found = yield from rows(
        f"SELECT chat_id, sent FROM chat_budgets WHERE chat_id IN ({marks(len(chats))})", tuple(chats)
    )
    return {int(row[0]): [(float(at), int(share)) for at, share in json.loads(row[1])] for row in found}


def handed_over(partition: int) -> Query[bool]:
    """Whether ``partition``'s last owner let it go cleanly (:func:`hand_over`)."""
    return bool((yield from value("SELECT handed_over FROM partitions WHERE partition = ?", (partition,))))


def hand_over(fence: Fence, partition: int) -> Query[None]:
    """``fence``'s worker lets ``partition`` go with everything of it sent and saved: the next owner
    has nothing to look for in its DMs."""
    yield from fenced_partition(fence, partition)
    yield from run("UPDATE partitions SET handed_over = 1 WHERE partition = ?", (partition,))


def join(number: int) -> Query[bool]:
    """Be counted among the workers alive: the worker lock ``number`` (never :data:`RECEIVER`)
    taken, unless another worker holds it (it drew the same number)."""
    return (yield from _try_lock(WORKER_LOCKS, number))


def take_receiving() -> Query[bool]:
    """Become the worker that takes the updates from Telegram (polling), unless another one is."""
    return (yield from _try_lock(WORKER_LOCKS, RECEIVER))


def try_partition(partition: int) -> Query[bool]:
    """Take ``partition``'s lock, unless another worker holds it."""
    return (yield from _try_lock(PARTITION_LOCKS, partition))


def let_partition_go(partition: int) -> Query[None]:
    """Let ``partition``'s lock go: the next worker may take it."""
    yield from value("", (PARTITION_LOCKS, partition), postgres="SELECT pg_advisory_unlock(?, ?)")


def _try_lock(kind: int, number: int) -> Query[bool]:
    """Take an advisory lock for this session, unless another session holds it; whether taken."""
    return bool((yield from value("", (kind, number), postgres="SELECT pg_try_advisory_lock(?, ?)")))


def live_workers() -> Query[int]:
    """How many workers are alive (each holds a worker lock; the receiver's is held by one of them)."""
    alive = yield from value("", (WORKER_LOCKS,), postgres=f"SELECT count(DISTINCT pid) {GRANTED}")
    return int(alive or 0)


def held() -> Query[set[int]]:
    """The partitions whose locks some worker holds."""
    found = yield from rows("", (PARTITION_LOCKS,), postgres=f"SELECT objid::int {GRANTED}")
    return {int(row[0]) for row in found}


def notify(channel: str, payload: str) -> Query[None]:
    """Tell every worker listening on ``channel`` (at once outside a transaction, else at its commit)."""
    yield from value("", (channel, payload), postgres="SELECT pg_notify(?, ?)")
