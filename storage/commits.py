"""Group commit: the writes made while one transaction runs are committed together in the next.

SQLite's writes (``storage/sqlite.py``): every write is a storage function (a
:data:`~storage.sql.Query`) run whole inside one transaction; one that raises leaves nothing and
the others stand (:func:`transactions`). One batch runs at a time, on the writer connection's
thread, so writes need no lock between them in this process and are committed in the order they
were made; a batch costs one commit (one fsync) however many writes it holds. (PostgreSQL commits
each write in a transaction of its own, side by side: ``storage/postgres.py``.)

The batch itself is a storage function (:func:`transactions`); ``GroupCommit`` is told how to run
one (``run_batch``) by the backend.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from storage.errors import StorageError
from storage.sql import Query, in_transaction, run, transaction

T = TypeVar("T")
MAX_BATCH = 64  # writes committed together at most (a batch waits for the one before it)
Outcome = tuple[bool, object]  # (ok, the write's result or its error)
Slot = tuple[Callable[..., Any], int]  # a joinable write's storage function and key


class _Abandoned(Exception):
    """The caller of a running write was cancelled (nobody sees this: the caller is gone)."""


class Ticket:
    """What a write's caller and the batch tell each other about cancelling the caller.

    The caller's task is cancelled once ``task.cancelling()`` grows past what it was when the
    write was made (``Task.cancel`` counts it at once, before the task even wakes up) or once the
    caller has said so (``abandoned``, which stays set even if the task is uncancelled later, as
    ``asyncio.timeout`` does). Under ``lock`` the batch either sees that and skips the write, or
    marks it ``started``; the caller reads ``started`` under the same lock (the batch runs on the
    writer's thread).
    """

    __slots__ = ("abandoned", "cancels", "lock", "started", "task")

    def __init__(self, detached: bool = False) -> None:
        self.lock = threading.Lock()
        self.task = None if detached else asyncio.current_task()  # (detached: no caller's to cancel it)
        self.cancels = self.task.cancelling() if self.task is not None else 0
        self.abandoned = False
        self.started = False

    def cancelled(self) -> bool:
        return self.abandoned or (self.task is not None and self.task.cancelling() > self.cancels)


class Job:
    """One write waiting for its batch: the storage function, its caller's ticket, the outcome."""

    __slots__ = ("args", "fn", "kwargs", "outcome", "ticket")

    def __init__(
        self,
        fn: Callable[..., Query[object]],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        detached: bool = False,
    ) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.ticket = Ticket(detached)
        self.outcome: asyncio.Future[object] = asyncio.get_running_loop().create_future()

    def join(self, fold: Callable[[dict[str, Any], dict[str, Any]], None], later: dict[str, Any]) -> bool:
        """Fold a later write's arguments into this one's (``fold(these, later)``), unless its batch
        has begun it (read under the ticket's lock, as the batch marks it begun): did it?"""
        with self.ticket.lock:
            if self.ticket.started or self.ticket.cancelled():
                return False
            fold(self.kwargs, later)
            return True


_SKIPPED = object()  # the outcome of a write whose caller was cancelled before it began


def transactions(jobs: Sequence[Job]) -> Query[list[Outcome]]:
    """The jobs in one transaction (one commit for all); a job that raises leaves nothing and the
    others stand.

    (ok, result or error) for each; if the commit fails, or an error ends the whole transaction,
    it raises and none of them stands. The jobs run one after the other as they are; one that
    raises undoes the transaction, which runs once more without it, each job then in a savepoint
    of its own, so that any other that raises is undone alone: the jobs before the first failure
    find what they found the first time, and every job what it would have found had each failure
    been undone alone. (A savepoint around each job in every batch would cost two statements a job;
    a failure is rare, and the statements run on the writer are what a busy bot's presses wait
    for: bench/RESULTS.md.)
    """
    decided: dict[int, Outcome] = {}  # failed or skipped: final, whatever the run
    returned: set[int] = set()  # returned in a run: no longer undone by a cancel (see ``_each``)
    try:
        ran = yield from transaction(_each(jobs, decided, returned, alone=False))
    except _Failed as failed:
        decided[failed.index] = (False, failed.error)
        ran = {}
        if len(decided) < len(jobs):
            ran = yield from transaction(_each(jobs, decided, returned, alone=True))
    decided.update(ran)
    return [decided[index] for index in range(len(jobs))]


class _Failed(Exception):
    """A job raised in a run without savepoints: the transaction is undone."""

    def __init__(self, index: int, error: Exception) -> None:
        super().__init__(index, error)
        self.index, self.error = index, error


def _each(
    jobs: Sequence[Job], decided: dict[int, Outcome], returned: set[int], alone: bool
) -> Query[dict[int, Outcome]]:
    """Run the jobs not ``decided`` yet; ``alone``: each in a savepoint (one that raises is undone
    and the others go on), else the first that raises ends the run (``_Failed``)."""
    ran: dict[int, Outcome] = {}
    for index, job in enumerate(jobs):
        if index in decided:
            continue
        if index not in returned and not _begin(job):
            decided[index] = (True, _SKIPPED)  # cancelled while queued: never begun, in no run
            continue
        if alone:
            yield from run("SAVEPOINT write")
        failure: Exception | None = None
        try:
            result = yield from job.fn(*job.args, **job.kwargs)
            if index not in returned and job.ticket.cancelled():
                # Cancelled while running: as for any failure before the commit, nothing is kept.
                raise _Abandoned
        except Exception as error:
            failure = error
        if not (yield from in_transaction()):  # the database ended the transaction (disk full)
            # None of the batch stands (and no later job runs outside a transaction): each caller
            # gets this error, or this, for a job that went on after such an error.
            raise failure or StorageError("a write went on after its transaction had ended")
        if failure is not None:
            if not alone:
                raise _Failed(index, failure) from failure
            yield from run("ROLLBACK TO write")
            yield from run("RELEASE write")
            ran[index] = (False, failure)
            continue
        if alone:
            yield from run("RELEASE write")
        returned.add(index)  # (had returned: its caller's cancel now waits for the commit)
        ran[index] = (True, result)
    return ran


def _begin(job: Job) -> bool:
    """Mark a job begun, unless its caller was cancelled before: may it run?"""
    with job.ticket.lock:
        if job.ticket.cancelled():
            return False
        job.ticket.started = True
        return True


def _settle_batch(jobs: Sequence[Job], call: asyncio.Future[list[Outcome]]) -> None:
    """A batch has ended: each job's outcome, or the batch's error for all of them (BEGIN or
    COMMIT failed, the store was closed: none of them stands)."""
    if call.cancelled():
        outcomes: list[Outcome] = [(False, asyncio.CancelledError())] * len(jobs)
    elif call.exception() is not None:
        outcomes = [(False, call.exception())] * len(jobs)
    else:
        outcomes = call.result()
    for job, (ok, value) in zip(jobs, outcomes, strict=True):
        _settle(job, ok, value)


def _settle(job: Job, ok: bool, value: object) -> None:
    """Give a write's caller its outcome (a caller gone gets nothing, so no error is left unread)."""
    if job.outcome.done():
        return
    if ok or job.ticket.abandoned:
        job.outcome.set_result(None if value is _SKIPPED else value)
    else:
        job.outcome.set_exception(value)  # type: ignore[arg-type]  # not ok: ``value`` is the error


def _observe(on_batch: Callable[[float, bool], None], started: float, call: asyncio.Future[object]) -> None:
    on_batch(time.perf_counter() - started, not call.cancelled() and call.exception() is None)


def _nothing() -> Query[None]:
    """A write that writes nothing (``GroupCommit.drain``)."""
    return
    yield


class GroupCommit:
    """Queues writes and commits them in batches with ``run_batch``, one batch at a time, in the
    order they were made."""

    def __init__(self, run_batch: Callable[[Sequence[Job]], Awaitable[list[Outcome]]]) -> None:
        """``run_batch(jobs)``: the jobs run as :func:`transactions` runs them, on the writer."""
        self.run_batch = run_batch
        self.queue: list[Job] = []  # writes waiting for the next batch
        self.committer: asyncio.Task[None] | None = None  # commits batches while there are any
        self._joinable: dict[Slot, Job] = {}  # (``write_joined``)
        self.loop = asyncio.get_running_loop()  # (its task and futures are this loop's)
        # Told each batch's seconds (queue included) and whether it committed.
        self.on_batch: Callable[[float, bool], None] | None = None

    async def write(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a transaction, committed if it returns, undone if it raises
        (the error is raised here); committed together with the writes made while the batch
        before it ran, unless the error ends the whole transaction or the commit itself fails:
        then none of them stands and each caller gets that error. ``fn`` may run twice in its
        batch (:func:`transactions`): what it does must follow from the database's state and its
        arguments alone (no effect outside the database, its arguments neither changed nor read
        only once); it runs on the writer's thread. A cancelled caller's write is all or nothing,
        and decided when the caller's ``CancelledError`` is raised: if it had not begun it never
        will; if it was running it is undone unless it had returned, and the caller waits for its
        batch to end, so what it reads next is final.
        """
        job = self.enqueue(fn, args, kwargs)
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

    async def write_in(self, key: int | None, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T:
        """:meth:`write` (``key``: what the write is about, a table; here every write keeps its order)."""
        return await self.write(fn, *args, **kwargs)

    def write_later(
        self, key: int | None, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any
    ) -> asyncio.Future[T]:
        """:meth:`write`, queued now and not waited for: its outcome, which no caller's cancel undoes."""
        return cast("asyncio.Future[T]", self.enqueue(fn, args, kwargs, detached=True).outcome)

    async def write_joined(
        self,
        key: int,
        fold: Callable[[dict[str, Any], dict[str, Any]], None],
        fn: Callable[..., Query[T]],
        *args: Any,
        **kwargs: Any,
    ) -> T:
        """:meth:`write` for a write whose effect commutes with every other write about ``key`` but
        those of ``fn`` (and whose ``args`` are the same for one ``key``): while one waits for its
        batch, a later one of the same ``fn`` and ``key`` joins it (``fold(its kwargs, the later's)``
        makes them one write with the effect of both in turn) instead of queuing one more write.
        Made by several callers, it is each one's: a cancelled caller stops waiting, the write goes on."""
        slot = (fn, key)
        queued = self._joinable.get(slot)
        if queued is None or not queued.join(fold, kwargs):
            queued = self.enqueue(fn, args, kwargs, detached=True)
            self._joinable[slot] = queued
            queued.outcome.add_done_callback(functools.partial(self._unjoinable, slot, queued))
        return cast(T, await asyncio.shield(queued.outcome))

    def seal(self, key: int, fn: Callable[..., Any]) -> None:
        """A write of ``fn`` about ``key`` made from now on joins none queued before: one queued
        meanwhile changes what they change (``write_joined``'s writes no longer commute with it)."""
        self._joinable.pop((fn, key), None)

    def _unjoinable(self, slot: Slot, job: Job, outcome: asyncio.Future[object]) -> None:
        if self._joinable.get(slot) is job:
            del self._joinable[slot]
        if not outcome.cancelled():
            outcome.exception()  # (read: its callers may all have stopped waiting)

    def enqueue(
        self,
        fn: Callable[..., Query[object]],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        detached: bool = False,
    ) -> Job:
        """Queue a write now: it commits in the same batch as any write queued after it, or earlier
        (``detached``: whoever made it, no caller's cancel undoes it)."""
        if asyncio.get_running_loop() is not self.loop:
            raise RuntimeError("the store was opened on another event loop")
        job = Job(fn, args, kwargs, detached)
        self.queue.append(job)
        if self.committer is None:
            # An idle writer is handed its batch at once, in the caller's step; writes made
            # meanwhile go in the next.
            self.committer = asyncio.create_task(self._commit(self._next_batch()))
            self.committer.add_done_callback(self._ended)
        return job

    async def drain(self) -> None:
        """Wait until every write queued so far has ended (not those queued meanwhile: a busy
        process's queue may never be empty): a write that does nothing, at the end of the queue."""
        await asyncio.wait([self.enqueue(_nothing, (), {}).outcome])

    def _ended(self, committer: asyncio.Task[None]) -> None:
        """The committer was cancelled before its first step (the loop is closing): what its
        ``finally`` would have done."""
        if self.committer is committer:
            self._let_go()

    def _let_go(self) -> None:
        self.committer = None
        stranded, self.queue = self.queue, []
        for job in stranded:  # the committer was cancelled: these never began, and never will
            _settle(job, False, StorageError("the store stopped writing before this write began"))

    def _next_batch(self) -> asyncio.Future[list[Outcome]]:
        """The next batch, begun: the first writes of the queue. Its outcome reaches its callers
        whatever happens to the committer: cancelled (the loop is closing), it stops waiting, but
        the batch ends all the same."""
        jobs, self.queue = self.queue[:MAX_BATCH], self.queue[MAX_BATCH:]
        try:
            call: asyncio.Future[list[Outcome]] = asyncio.ensure_future(self.run_batch(jobs))
        except Exception as error:  # (refused before it began, the store closed: each write says why)
            call = self.loop.create_future()
            call.set_exception(error)
        call.add_done_callback(functools.partial(_settle_batch, jobs))
        if self.on_batch is not None:
            call.add_done_callback(functools.partial(_observe, self.on_batch, time.perf_counter()))
        return call

    async def _commit(self, call: asyncio.Future[list[Outcome]]) -> None:
        """Wait for the batch begun, then commit the queued writes a batch at a time until none is left."""
        try:
            await asyncio.wait([call])
            while self.queue:
                await asyncio.wait([self._next_batch()])
        finally:
            self._let_go()
