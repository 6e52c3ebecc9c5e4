"""The Store: one SQLite file, a writer connection and a reader connection, each on its own thread.

The storage functions (``people``, ``wallet``, ``tables``, ``queries``, ``schema``) are plain
synchronous code on a ``sqlite3.Connection``. The Store is the only async layer: each read, and
each whole write transaction, is one call on the connection's aiosqlite thread (``on_thread``),
not one round trip per statement.

Every write runs whole on the writer's thread inside a ``BEGIN IMMEDIATE ... COMMIT``; the writes
made while one transaction is on the thread are committed together in the next (group commit,
each in its own savepoint). The thread takes calls one at a time in order: writes are serialized
in this process, and across processes by SQLite's write lock (the busy timeout waits for another). Reads go to
their own connection: in WAL mode they see the last committed state and never wait for a write
in progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar, cast
from zoneinfo import ZoneInfo

import aiosqlite

from games.events import Paid
from storage import monitoring, people, queries, tables, updates, wallet
from storage.backup import backup_before_migrating
from storage.check import CheckReport, check_database
from storage.errors import StorageError, UnknownPerson
from storage.files import create_private, make_private
from storage.models import (
    ChatSettings,
    DailyClaim,
    LeaderRow,
    LedgerEntry,
    Person,
    PersonStats,
    RoundRecord,
    SavedRound,
    SavedTable,
)
from storage.schema import migrate
from storage.thread import on_thread
from storage.timeutil import Clock, to_db, utc_now

log = logging.getLogger(__name__)
BUSY_TIMEOUT_MS = 5000
_UNSET: Any = object()
T = TypeVar("T")


def default_path() -> str:
    """``$PAIJU_DB``, else ``paiju.sqlite3`` in the working directory."""
    return os.environ.get("PAIJU_DB") or "paiju.sqlite3"


def _configure(conn: sqlite3.Connection, writer: bool) -> None:
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a commit survives a power cut too, not just a crash of the process.
        conn.execute("PRAGMA synchronous = FULL")
    else:
        conn.execute("PRAGMA query_only = ON")


async def _connect(path: str, *, writer: bool) -> aiosqlite.Connection:
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        await on_thread(db, _configure, writer)
    except BaseException:
        await db.close()  # its thread would otherwise keep the process alive
        raise
    return db


async def open_store(
    path: str | os.PathLike[str] | None = None,
    *,
    start_grant: int = 10_000,
    daily_bonus: int = 2_000,
    tz: str = "Asia/Shanghai",
    now: Clock | None = None,
) -> Store:
    """Open (creating or upgrading in place) the database at ``path`` (default ``$PAIJU_DB``)."""
    if start_grant < 0 or daily_bonus <= 0:
        raise ValueError("start_grant must be >= 0 and daily_bonus > 0")
    zone = ZoneInfo(tz)
    file = os.fspath(path) if path is not None else default_path()
    create_private(file)  # 0600 from the start: it will hold every open round's deck
    writer = await _connect(file, writer=True)
    try:
        if (copy := await on_thread(writer, backup_before_migrating, file)) is not None:
            log.info("the database is backed up at %s before its schema is upgraded", copy)
        await on_thread(writer, migrate)  # every step in its own BEGIN IMMEDIATE, all in one call
        make_private(file)  # the -wal and -shm now exist; and a database made 0644 earlier
        reader = await _connect(file, writer=False)
    except BaseException:
        await writer.close()
        raise
    return Store(file, writer, reader, start_grant=start_grant, daily_bonus=daily_bonus, zone=zone, now=now)


class _Abandoned(Exception):
    """The caller of a running write was cancelled (nobody sees this: the caller is gone)."""


class _Ticket:
    """What a write's caller and the writer thread tell each other about cancelling the caller.

    The caller's task is cancelled once ``task.cancelling()`` grows past what it was when the
    write was made (``Task.cancel`` counts it at once, before the task even wakes up) or once the
    caller has said so (``abandoned``, which stays set even if the task is uncancelled later, as
    ``asyncio.timeout`` does). Under ``lock`` the thread either sees that and skips the write, or
    marks it ``started``; the caller reads ``started`` under the same lock.
    """

    __slots__ = ("abandoned", "cancels", "lock", "started", "task")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.task = asyncio.current_task()
        self.cancels = self.task.cancelling() if self.task is not None else 0
        self.abandoned = False
        self.started = False

    def cancelled(self) -> bool:
        return self.abandoned or (self.task is not None and self.task.cancelling() > self.cancels)


MAX_BATCH = 64  # writes committed together at most (a batch waits for the one before it)


class _Job:
    """One write waiting for its batch: the function, its caller's ticket, and the outcome."""

    __slots__ = ("args", "fn", "kwargs", "outcome", "ticket")

    def __init__(self, fn: Callable[..., object], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.ticket = _Ticket()
        self.outcome: asyncio.Future[object] = asyncio.get_running_loop().create_future()


_SKIPPED = object()  # the outcome of a write whose caller was cancelled before it began


def _transactions(conn: sqlite3.Connection, jobs: Sequence[_Job]) -> list[tuple[bool, object]]:
    """On the writer's thread: the jobs in one ``BEGIN IMMEDIATE ... COMMIT`` (one fsync for all),
    each in its own savepoint, so one that raises leaves nothing and the others stand.
    (ok, result or error) for each; if the commit fails, or an error ends the whole transaction,
    it raises and none of them stands."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        outcomes = [_savepoint(conn, job) for job in jobs]
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    return outcomes


def _savepoint(conn: sqlite3.Connection, job: _Job) -> tuple[bool, object]:
    with job.ticket.lock:
        if job.ticket.cancelled():
            return True, _SKIPPED  # cancelled while queued: never begun
        job.ticket.started = True
    conn.execute("SAVEPOINT write")
    try:
        result = job.fn(conn, *job.args, **job.kwargs)
        if job.ticket.cancelled():
            # Cancelled while running: as for any failure before the commit, nothing is kept.
            raise _Abandoned
    except Exception as error:
        if not conn.in_transaction:  # SQLite ended the whole transaction (disk full, I/O error)
            raise  # so none of the batch stands: each caller gets this error
        conn.execute("ROLLBACK TO write")
        conn.execute("RELEASE write")
        return False, error
    conn.execute("RELEASE write")
    return True, result


# -- transactions made of several storage functions (each run whole by ``Store._write``) ----------


def _ensure_person(
    conn: sqlite3.Connection, user_id: int, name: str, language: str | None, grant: int, now_text: str
) -> tuple[Person, bool]:
    granted = people.get_person(conn, user_id) is None
    if granted:
        people.insert_person(conn, user_id, name, language, now_text)
        wallet.grant_start(conn, user_id, grant, now_text)
    else:
        people.rename_person(conn, user_id, name, language, now_text)
    person = people.get_person(conn, user_id)
    assert person is not None
    return person, granted


def _update_chat_settings(
    conn: sqlite3.Connection, chat_id: int, changes: dict[str, object], now_text: str
) -> ChatSettings:
    people.ensure_chat(conn, chat_id, now_text)
    people.update_chat(conn, chat_id, changes, now_text)
    settings = people.get_chat(conn, chat_id)
    assert settings is not None
    return settings


def _settle_batch(jobs: Sequence[_Job], call: asyncio.Future[list[tuple[bool, object]]]) -> None:
    """A batch has ended on the thread: each job's outcome, or the batch's error for all of them
    (BEGIN or COMMIT failed, the store was closed: none of them stands)."""
    if call.cancelled():
        outcomes: list[tuple[bool, object]] = [(False, asyncio.CancelledError())] * len(jobs)
    elif call.exception() is not None:
        outcomes = [(False, call.exception())] * len(jobs)
    else:
        outcomes = call.result()
    for job, (ok, value) in zip(jobs, outcomes, strict=True):
        _settle(job, ok, value)


def _settle(job: _Job, ok: bool, value: object) -> None:
    """Give a write's caller its outcome (a caller gone gets nothing, so no error is left unread)."""
    if job.outcome.done():
        return
    if ok or job.ticket.abandoned:
        job.outcome.set_result(None if value is _SKIPPED else value)
    else:
        job.outcome.set_exception(value)  # type: ignore[arg-type]


def _observe(on_batch: Callable[[float, bool], None], started: float, call: asyncio.Future[object]) -> None:
    on_batch(time.perf_counter() - started, not call.cancelled() and call.exception() is None)


class Store:
    """Paiju's coins, people, chats and saved tables. Make one with ``open_store``."""

    def __init__(
        self,
        path: str,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        *,
        start_grant: int,
        daily_bonus: int,
        zone: ZoneInfo,
        now: Clock | None,
    ) -> None:
        self.path = path
        self.start_grant = start_grant
        self.daily_bonus = daily_bonus
        self.zone = zone
        self._now = now or utc_now
        self._writer = writer
        self._reader = reader
        self._queue: list[_Job] = []  # writes waiting for the next batch
        self._committer: asyncio.Task[None] | None = None  # commits batches while there are any
        # Told each batch's seconds on the writer's thread (queue included) and whether it committed.
        self.on_batch: Callable[[float, bool], None] | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        """Let the writes and reads already made finish, then close both connections (again: no-op).

        The writes waiting for a batch are committed first; then each connection's thread takes
        aiosqlite's ``close`` as one more call at the end of its queue.
        """
        while self._committer is not None:
            await asyncio.wait([self._committer])
        await self._reader.close()
        await self._writer.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def _read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(conn, *args, **kwargs)`` on the reader (query-only; in WAL mode it sees the last
        committed state and never waits for a write), in one call."""
        return await on_thread(self._reader, fn, *args, **kwargs)

    async def _write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(conn, *args, **kwargs)`` in a ``BEGIN IMMEDIATE`` transaction on the writer's thread.

        Committed if ``fn`` returns, undone if it raises (the error is raised here). Writes made
        while a batch is on the thread are committed together in the next one (group commit: one
        round trip and one fsync for them all); each runs in its own savepoint, so one that raises
        leaves nothing and the others stand, unless the error ends the whole transaction or the
        commit itself fails: then none of them stands and each caller gets that error. The thread
        runs batches one at a time, so writes need no lock. A cancelled caller's
        write is all or nothing, and decided when the caller's ``CancelledError`` is raised: if it
        had not begun it never will; if it was running it is undone unless it had returned, and the
        caller waits for its batch to end, so what it reads next is final.
        """
        job = self._enqueue(fn, args, kwargs)
        try:
            result = await asyncio.shield(job.outcome)
        except asyncio.CancelledError:
            with job.ticket.lock:
                job.ticket.abandoned = True
                started = job.ticket.started
            if started:
                await asyncio.wait([job.outcome])  # its batch ends: committed or not, for good
            raise
        return cast(T, result)

    def _enqueue(self, fn: Callable[..., object], args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Job:
        """Queue a write now: it commits in the same batch as any write queued after it, or earlier."""
        job = _Job(fn, args, kwargs)
        self._queue.append(job)
        if self._committer is None:
            self._committer = asyncio.create_task(self._commit())
        return job

    async def _commit(self) -> None:
        """Commit the queued writes, a batch at a time, until none is left."""
        try:
            while self._queue:
                jobs, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
                call = asyncio.ensure_future(on_thread(self._writer, _transactions, jobs))
                # The batch's outcome reaches its callers whatever happens to this task: cancelled
                # (the loop is closing), it stops waiting, but the batch ends on the thread all the same.
                call.add_done_callback(functools.partial(_settle_batch, jobs))
                if self.on_batch is not None:
                    call.add_done_callback(functools.partial(_observe, self.on_batch, time.perf_counter()))
                await asyncio.wait([call])
        finally:
            self._committer = None
            stranded, self._queue = self._queue, []
            for job in stranded:  # this task was cancelled: these never began, and never will
                _settle(job, False, StorageError("the store stopped writing before this write began"))

    def _now_text(self) -> str:
        return to_db(self._now())

    async def probe_write(self) -> None:
        """A write that changes nothing, committed like any other (raises where any write would)."""
        await self._write(monitoring.touch)

    # -- updates taken from Telegram ----------------------------------------------------------

    def remember_update(self, update_id: int) -> asyncio.Future[object]:
        """This update was taken from Telegram (see ``storage/updates.py``): queued at once, without
        waiting, so it commits no later than any write its handling makes (the future says when)."""
        return self._enqueue(updates.remember, ((update_id,), self._now_text()), {}).outcome

    async def forget_old_updates(self, newest: int = updates.NEWEST) -> int:
        """Forget the updates Telegram will not send again (see ``storage/updates.py``); how many."""
        return await self._write(updates.forget, to_db(self._now() - updates.KEEP), newest)

    async def update_taken(self, update_id: int) -> bool:
        return await self._read(updates.taken, update_id)

    async def newest_update(self) -> int | None:
        return await self._read(updates.newest)

    async def finished_rounds(self, after: int = 0) -> tuple[int, dict[str, int]]:
        """Rounds settled since round id ``after``, per game, and the last id read (for metrics)."""
        return await self._read(monitoring.finished_rounds, after)

    async def check(self) -> CheckReport:
        """Run the integrity check on this store's file (read-only, in a worker thread)."""
        return await asyncio.to_thread(check_database, self.path)

    # -- people and chats ---------------------------------------------------------------------

    async def ensure_person(
        self, user_id: int, name: str, language: str | None = None
    ) -> tuple[Person, bool]:
        """The person, created with the starting grant on first sight; ``granted`` says if just now.

        A later call updates the name, and the language when one is given.
        """
        known = await self._read(people.get_person, user_id)
        if known is not None and known.name == name and language in (None, known.language):
            return known, False
        return await self._write(_ensure_person, user_id, name, language, self.start_grant, self._now_text())

    async def get_person(self, user_id: int) -> Person | None:
        return await self._read(people.get_person, user_id)

    async def balance(self, user_id: int) -> int:
        """A person's coins; ``UnknownPerson`` before ``ensure_person``."""
        person = await self._read(people.get_person, user_id)
        if person is None:
            raise UnknownPerson(user_id)
        return person.balance

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """A chat's settings (None for what it never chose: the caller's defaults apply)."""
        return await self._read(people.get_chat, chat_id) or ChatSettings(chat_id)

    async def update_chat_settings(
        self,
        chat_id: int,
        *,
        language: str | None = _UNSET,
        turn_seconds: int | None = _UNSET,
        lobby_seconds: int | None = _UNSET,
        allowed_games: Sequence[str] = _UNSET,
    ) -> ChatSettings:
        """Change only the settings given; None (language, seconds) goes back to the bot's default."""
        changes: dict[str, object] = {}
        if language is not _UNSET:
            changes["language"] = language
        for column, seconds in (("turn_seconds", turn_seconds), ("lobby_seconds", lobby_seconds)):
            if seconds is not _UNSET:
                if seconds is not None and (
                    isinstance(seconds, bool) or not isinstance(seconds, int) or seconds <= 0
                ):
                    raise ValueError(f"{column} must be a positive int or None, not {seconds!r}")
                changes[column] = seconds
        if allowed_games is not _UNSET:
            changes["allowed_games"] = people.games_json(allowed_games)
        return await self._write(_update_chat_settings, chat_id, changes, self._now_text())

    async def migrate_chat(self, old: int, new: int) -> None:
        """A group was upgraded to a supergroup: its settings, tables (with their escrow) and history
        move to the new chat id, in one transaction."""
        await self._write(people.migrate_chat, old, new, self._now_text())

    # -- wallet -------------------------------------------------------------------------------

    async def claim_daily(self, user_id: int) -> DailyClaim:
        """Pay the daily bonus unless this calendar day's (in the store's time zone) was paid."""
        moment = self._now()
        return await self._write(
            wallet.claim_daily, user_id, self.daily_bonus, moment, self.zone, to_db(moment)
        )

    async def ledger(self, user_id: int, limit: int = 20) -> list[LedgerEntry]:
        """A person's last ``limit`` ledger rows, newest first."""
        return await self._read(wallet.ledger_of, user_id, limit)

    # -- tables -------------------------------------------------------------------------------

    async def create_table(
        self,
        chat_id: int,
        game: str,
        state: Mapping[str, Any],
        *,
        version: int = 0,
        deadline: datetime | None = None,
        message_id: int | None = None,
    ) -> SavedTable:
        """Open a table in a chat; ``TableAlreadyOpen`` while the chat has one open."""
        return await self._write(
            tables.create_table,
            chat_id,
            game,
            state,
            version=version,
            deadline=deadline,
            message_id=message_id,
            now_text=self._now_text(),
        )

    async def commit_action(
        self,
        table_id: int,
        *,
        round_no: int,
        action_seq: int,
        payments: Sequence[Paid] = (),
        state: Mapping[str, Any],
        deadline: datetime | None,
        escrow: int | None = None,
        closed: bool = False,
        round_record: RoundRecord | None = None,
        seats: Mapping[int, int] | None = None,
        joined: Collection[int] = (),
    ) -> bool:
        """Book one engine action's ``Paid`` events and save the table, in one transaction.

        Returns False, changing nothing, for a replayed batch. Ledger keys are
        ``<table_id>:<round_no>:<action_seq>:<index>:<account>``; ``action_seq`` becomes the
        table's version and must exceed the saved one. ``escrow`` (None: derived) must equal the
        saved escrow plus the movements into it minus those out, and be 0 when ``closed``. Raises
        ``InsufficientFunds`` (nothing booked) if a balance would go negative. ``seats`` (person ->
        the coins the table states they hold after the action; None: unchanged) must be backed by
        the wallets (exactly, for those who sat down with it: ``joined``), one open table a person:
        else ``SeatRefused`` and nothing is booked.
        """
        return await self._write(
            tables.commit_action,
            table_id,
            round_no=round_no,
            action_seq=action_seq,
            payments=payments,
            state=state,
            deadline=deadline,
            escrow=escrow,
            closed=closed,
            round_record=round_record,
            now_text=self._now_text(),
            seats=seats,
            joined=joined,
        )

    async def update_messages(
        self,
        table_id: int,
        *,
        message_id: int | None = _UNSET,
        dm_message_ids: Mapping[int, int | None] | None = None,
        shown: Mapping[str, str | None] | None = None,
        turn: Mapping[str, object] | None = None,
        view: Mapping[str, object] | None = None,
    ) -> None:
        """Set the table message id and/or merge DM message ids and what each kept message shows
        (None forgets a person's DM, or a hash); ``turn``: the turn's clock moved (``bot.live.Turn``);
        ``view``: what the table shows besides changed with no action (``bot.live.ViewState``)."""
        set_message = message_id is not _UNSET
        await self._write(
            tables.update_messages,
            table_id,
            message_id=message_id if set_message else None,
            set_message=set_message,
            dm_updates=dm_message_ids,
            now_text=self._now_text(),
            shown=shown,
            turn=turn,
            view=view,
        )

    async def load_table(self, table_id: int) -> SavedTable | None:
        return await self._read(tables.load_table, table_id)

    async def open_table(self, chat_id: int) -> SavedTable | None:
        """The chat's open table, if it has one."""
        return await self._read(tables.open_table_of, chat_id)

    async def open_tables(self) -> list[SavedTable]:
        """Every open table (to reload and re-arm timers at start-up)."""
        return await self._read(tables.open_tables)

    # -- history and statistics ---------------------------------------------------------------

    async def chat_leaderboard(self, chat_id: int, limit: int = 10) -> list[LeaderRow]:
        return await self._read(queries.chat_leaderboard, chat_id, limit)

    async def global_leaderboard(self, limit: int = 10) -> list[LeaderRow]:
        return await self._read(queries.global_leaderboard, limit)

    async def person_stats(self, user_id: int) -> PersonStats:
        return await self._read(queries.person_stats, user_id)

    async def hands_held(self, user_id: int) -> dict[str, tuple[str, ...]]:
        """Every hand a person has shown in a recorded round, per game (for the best hand in /stats)."""
        return await self._read(queries.hands_held, user_id)

    async def last_rounds(
        self, *, chat_id: int | None = None, table_id: int | None = None, limit: int = 10
    ) -> list[SavedRound]:
        """The last rounds of a chat or a table (give one), newest first, with fairness proofs."""
        return await self._read(queries.last_rounds, chat_id=chat_id, table_id=table_id, limit=limit)

    async def get_round(self, table_id: int, round_no: int) -> SavedRound | None:
        return await self._read(queries.get_round, table_id, round_no)
