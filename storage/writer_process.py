"""SQLite's writer in a process of its own, so that a busy bot's writes never wait for its GIL.

Under load the bot's event loop holds the interpreter's lock nearly all the time. A writer on a
thread of the same process then waited for that lock at every statement (SQLite releases it while
it works): a write cost 0.9 ms of wall time for 0.2 ms of CPU, and a press's answer waited for
its write (bench/RESULTS.md, issue 26). Here the group commit's batches run in a child process
with its own interpreter and its own connection to the file: the event loop sends each batch's
writes there (their storage functions and arguments, pickled) and awaits their outcomes.

- The child is one worker of a ``ProcessPoolExecutor`` started from a *forkserver*: a clean process
  (never a fork of the bot, whose threads and locks it must not inherit: the database's own
  ``flock`` among them, ``storage/exclusive.py``), forked from one that has this module loaded
  already, so a store opens in milliseconds.
- It ignores SIGINT and SIGTERM (a Ctrl-C or a service manager's stop reaches the whole process
  group): the bot stops it once its last writes are committed. It ends by itself if the bot dies.
- A write is begun when it is sent: its caller's cancel no longer undoes it (``storage/commits.py``).
  One that cannot be sent, that the child cannot take (a function it cannot import), or whose
  result cannot be sent back fails alone, and nothing of it is kept.
- A program that opens a store must do its work under ``if __name__ == "__main__":``: the child
  imports the program's main module again (multiprocessing's rule; ``python -m bot`` does).
- If the child dies (killed, out of memory), the writes of the batch it held get
  :class:`WriterStopped` (committed or not: SQLite kept the transaction whole either way), and the
  next batch starts a new child.
- Migrations and backups stay on the bot's own connection (``storage/sqlite.py``), before the child
  starts.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.util import Finalize
from typing import Any, TypeVar

from storage.commits import SKIPPED, Job, Outcome, begin, transactions
from storage.errors import StorageError
from storage.on_sqlite import run_query
from storage.sql import Query

T = TypeVar("T")
BUSY_TIMEOUT_MS = 5000


class WriterStopped(StorageError):
    """The writer process ended while it held this write: whether it was committed is not known."""


def configure(conn: sqlite3.Connection, writer: bool) -> None:
    """A connection of the bot's to its database file, as each of them is set up."""
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a commit survives a power cut too, not just a crash of the process.
        conn.execute("PRAGMA synchronous = FULL")
    else:
        conn.execute("PRAGMA query_only = ON")


# -- in the child ------------------------------------------------------------------------------

_connection: sqlite3.Connection | None = None


def _start(path: str, code: str) -> None:
    """The child's start: its connection to the file, closed when the child ends; and its end when
    the bot's ends, however it ends (its writes then stop where they are: SQLite undoes a
    transaction left unfinished).

    ``code`` is where the bot found this module: the forkserver imported it before it was given
    the bot's ``sys.path`` (its own starts with the folder it was started in), and a writer
    running another copy of the storage code must not start."""
    global _connection
    if os.path.realpath(__file__) != os.path.realpath(code):
        raise StorageError(f"the writer found the storage code at {__file__}, the bot at {code}")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _connection = sqlite3.connect(path, isolation_level=None)
    configure(_connection, writer=True)
    Finalize(None, _connection.close, exitpriority=10)
    bot = multiprocessing.parent_process()
    if bot is not None:
        threading.Thread(target=_end_with, args=(bot.sentinel,), daemon=True).start()


def _end_with(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])  # (readable once the bot's end of it is closed)
    os._exit(1)


def _commit(batch: Sequence[bytes]) -> list[bytes]:
    """One batch, in the child: each write's outcome (``storage/commits.py``), pickled here.

    Each write comes pickled on its own, so one the child cannot take (a function it cannot
    import) fails alone; a write whose result cannot be sent back fails too, before the commit,
    so nothing of it is kept; an error that cannot be sent back is sent as a ``StorageError``."""
    assert _connection is not None, "the writer process was not started"
    outcomes: list[Outcome | None] = []
    jobs = []
    for sent in batch:
        try:
            fn, args, kwargs = pickle.loads(sent)
        except Exception as error:
            outcomes.append((False, StorageError(f"the writer cannot take this write: {error!r}")))
            continue
        jobs.append(Job.sent(_returning_what_can_be_sent, (fn, args, kwargs), {}))
        outcomes.append(None)
    ran = iter(run_query(_connection, transactions(jobs)))
    return [_pickled(outcome or next(ran)) for outcome in outcomes]


def _returning_what_can_be_sent(
    fn: Callable[..., Query[T]], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Query[T]:
    result = yield from fn(*args, **kwargs)
    if not _sendable(result):
        raise StorageError(f"{fn.__qualname__} gave what cannot be sent back: {type(result).__name__}")
    return result


def _pickled(outcome: Outcome) -> bytes:
    ok, value = outcome
    if not ok and not _sendable(value):
        value = StorageError(f"{type(value).__name__}: {value}")
    return pickle.dumps((ok, value))


def _sendable(value: object) -> bool:
    """Whether ``value`` comes out of pickle as itself (an exception whose constructor takes
    other arguments than it keeps does not)."""
    try:
        pickle.loads(pickle.dumps(value))
    except Exception:
        return False
    return True


def _on_connection(fn: Callable[..., T], *args: Any) -> T:
    assert _connection is not None, "the writer process was not started"
    return fn(_connection, *args)


# -- in the bot --------------------------------------------------------------------------------

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload([__name__])


class WriterProcess:
    """The writer process of one database file, as the bot sees it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.closing = False  # no call is taken any more
        self.closed = False  # and the child has ended, its connection closed
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(1, mp_context=_CONTEXT, initializer=_start, initargs=(self.path, __file__))

    @classmethod
    async def start(cls, path: str) -> WriterProcess:
        """The writer of ``path``, started (raises if it cannot open the file)."""
        writer = cls(path)
        try:
            await writer.pid()
        except BaseException:
            await writer.close()
            raise
        return writer

    async def run_batch(self, jobs: Sequence[Job]) -> list[Outcome]:
        """``GroupCommit``'s batch: the jobs not cancelled yet are begun and sent, each pickled on
        its own (one that cannot be fails alone, unsent)."""
        outcomes: list[Outcome] = [(True, SKIPPED)] * len(jobs)
        sent: dict[int, bytes] = {}
        for index, job in enumerate(jobs):
            if not begin(job):
                continue
            try:
                sent[index] = pickle.dumps(job.call())
            except Exception as error:
                outcomes[index] = (False, StorageError(f"a write that cannot be sent: {error!r}"))
        if sent:
            ran = await self._call(_commit, list(sent.values()))
            for index, outcome in zip(sent, ran, strict=True):
                outcomes[index] = pickle.loads(outcome)
        return outcomes

    async def on_connection(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` in the writer process, on its connection (``fn`` a module's
        own function, its arguments and result plain data)."""
        result: T = await self._call(_on_connection, fn, *args)
        return result

    async def pid(self) -> int:
        """The writer process's id (it may be a new one after the last died)."""
        return await self._call(os.getpid)

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        if self.closing:
            raise ValueError("the store is closed")  # (as a read on a closed connection)
        loop = asyncio.get_running_loop()
        pool = self._pool
        try:
            sent = loop.run_in_executor(pool, fn, *args)
        except BrokenProcessPool:  # it ended while it had nothing: a new one takes this call
            pool = self._replace(pool)
            sent = loop.run_in_executor(pool, fn, *args)
        try:
            return await sent
        except BrokenProcessPool as error:
            self._replace(pool)
            raise WriterStopped(f"the writer process of {self.path} stopped: {error}") from None

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        """A new child for the next call (its process starts with that call)."""
        if broken is self._pool and not self.closing:
            self._pool = self._new_pool()
            broken.shutdown(wait=False)
        return self._pool

    async def close(self) -> None:
        """Stop the child once what it was sent is done (its connection closed); again: no-op."""
        self.closing = True
        await asyncio.to_thread(self._pool.shutdown)
        self.closed = True
