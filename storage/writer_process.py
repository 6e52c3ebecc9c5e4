"""SQLite's writer in a process of its own, so that a busy bot's writes never wait for its GIL.

Under load the bot's event loop holds the interpreter's lock nearly all the time. A writer on a
thread of the same process then waited for that lock at every statement (SQLite releases it while
it works): a write cost 0.9 ms of wall time for 0.2 ms of CPU, and a press's answer waited for
its write (bench/RESULTS.md, issue 26). Here the group commit's batches run in a child process
with its own interpreter and its own connection to the file: the event loop sends each batch's
writes there (their storage functions and arguments, pickled) and awaits their outcomes.

- The child is started from a *forkserver*: a clean process (never a fork of the bot, whose threads
  and locks it must not inherit: the database's own ``flock`` among them, ``storage/exclusive.py``),
  forked from one that has this module loaded already, so a store opens in milliseconds.
- The bot and the child talk over a socket pair, one pickled frame a call, answered in the order
  sent; the event loop reads the answers as they come (no thread of the bot's takes part: a
  ``ProcessPoolExecutor`` cost 0.45 ms of the bot's CPU a call in its two threads, this 0.07 ms).
  An idle writer is sent a batch in the step that makes its first write, and the answer is taken
  where the event loop reads it: the fewer passes of the event loop a write waits for, the sooner
  a press's answer (a busy loop runs every other ready task at each pass).
- It ignores SIGINT and SIGTERM (a Ctrl-C or a service manager's stop reaches the whole process
  group): the bot stops it once its last writes are committed, by closing its end of the socket;
  so does the bot's end, however it ends.
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
import atexit
import collections
import contextlib
import multiprocessing
import os
import pickle
import signal
import socket
import sqlite3
import struct
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, BinaryIO, TypeVar, cast

from storage.commits import SKIPPED, Job, Outcome, begin, transactions
from storage.errors import StorageError, WriterNotStarted
from storage.on_sqlite import run_query
from storage.sql import Query

T = TypeVar("T")
BUSY_TIMEOUT_MS = 5000
_LENGTH = struct.Struct("!I")  # each frame: its length, then a pickle


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


def _serve(link: socket.socket, path: str, code: str) -> None:
    """The child: started (:func:`_start`), it says so, then answers each call it reads, in
    order, until the bot's end of ``link`` is closed."""
    with link, link.makefile("rb") as frames:
        try:
            try:
                _start(path, code)
            except Exception as error:
                _send(link, _pickled((False, error)))
                return
            _send(link, _pickled((True, os.getpid())))
            while (call := _received(frames)) is not None:
                _send(link, _pickled(_answer(call)))
        except (BrokenPipeError, ConnectionResetError):  # the bot ended while this call ran
            pass
        finally:
            if _connection is not None:
                _connection.close()


def _start(path: str, code: str) -> None:
    """The child's start: its connection to the file.

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


def _received(frames: BinaryIO) -> bytes | None:
    """The next frame, or None once the bot's end is closed."""
    head = frames.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    return frames.read(size)


def _send(link: socket.socket, frame: bytes) -> None:
    try:
        framed = _framed(frame)
    except StorageError as error:  # (an answer too large: its caller gets why)
        framed = _framed(_pickled((False, error)))
    link.sendall(framed)


def _framed(frame: bytes) -> bytes:
    """``frame`` with its length before it (a frame of 4 GiB or more cannot be sent)."""
    try:
        return _LENGTH.pack(len(frame)) + frame
    except struct.error:
        raise StorageError(f"a call or an answer too large to send: {len(frame)} bytes") from None


def _answer(call: bytes) -> Outcome:
    try:
        fn, args = pickle.loads(call)
        return True, fn(*args)
    except Exception as error:
        return False, error


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
        jobs.append(Job.sent(_pickling_what_it_returns, (fn, args, kwargs), {}))
        outcomes.append(None)
    ran = iter(run_query(_connection, transactions(jobs)))
    return [_pickled(outcome) if outcome is not None else _pickled_already(next(ran)) for outcome in outcomes]


def _pickling_what_it_returns(
    fn: Callable[..., Query[T]], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Query[bytes]:
    """The write, its outcome pickled as it will be sent (raises if it does not come back as itself)."""
    result = yield from fn(*args, **kwargs)
    sent = _as_sent((True, result))
    if sent is None:
        raise StorageError(f"{fn.__qualname__} gave what cannot be sent back: {type(result).__name__}")
    return sent


def _pickled_already(outcome: Outcome) -> bytes:
    """A write's outcome: its result as :func:`_pickling_what_it_returns` pickled it, or its error."""
    ok, value = outcome
    return cast(bytes, value) if ok else _pickled(outcome)


def _pickled(outcome: Outcome) -> bytes:
    """``outcome`` as it is sent; one that would not come back as itself is sent as a
    ``StorageError`` saying what it was."""
    sent = _as_sent(outcome)
    if sent is not None:
        return sent
    ok, value = outcome
    said = f"{type(value).__name__}: {value}" if not ok else f"cannot be sent back: {type(value).__name__}"
    return pickle.dumps((False, StorageError(said)))


def _as_sent(value: object) -> bytes | None:
    """``value`` pickled, if it comes out of pickle as itself (an exception whose constructor
    takes other arguments than it keeps does not, a database row does not pickle); else None."""
    if _plain(value):  # (most outcomes, and each batch's)
        return pickle.dumps(value)
    try:
        sent = pickle.dumps(value)
        pickle.loads(sent)
    except Exception:
        return None
    return sent


_PLAIN = frozenset({type(None), bool, int, float, str, bytes})  # (always come out of pickle as themselves)


def _plain(value: object) -> bool:
    """Is ``value`` such data, or tuples and lists of it?"""
    kind = type(value)
    return kind in _PLAIN or (kind in (tuple, list) and all(map(_plain, cast(Sequence[object], value))))


def _on_connection(fn: Callable[..., T], *args: Any) -> T:
    assert _connection is not None, "the writer process was not started"
    return fn(_connection, *args)


# -- in the bot --------------------------------------------------------------------------------

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload([__name__])


class _Link(asyncio.Protocol):
    """One child and the bot's end of its socket: calls sent, answered in the order sent. Each answer
    is taken as it is read (``data_received``, in the event loop's own reading of the socket: no task
    stands between the socket and the caller)."""

    def __init__(self, path: str, process: Any, end: socket.socket) -> None:
        self.path, self.process, self.end = path, process, end
        self.waiting: collections.deque[asyncio.Future[Outcome]] = collections.deque()
        self.loop = asyncio.get_running_loop()  # (the event loop its answers are read on)
        self.transport: asyncio.Transport | None = None
        self.lost = self.loop.create_future()  # done once the socket is closed
        self._received = bytearray()  # what is read of the next answers
        _LINKS.add(self)

    @classmethod
    async def started(cls, path: str) -> _Link:
        """A new child for ``path``, started (raises what stopped it from opening the file)."""
        end, child_end = socket.socketpair()
        process = _CONTEXT.Process(target=_serve, args=(child_end, path, __file__), name="paiju-writer")
        link: _Link | None = None
        try:
            try:
                await asyncio.to_thread(_start_child, process, child_end)
            except OSError as error:  # (e.g. a temporary folder too deep for the forkserver's socket)
                where = f"it is started through a socket under the temporary folder {tempfile.gettempdir()}"
                raise WriterNotStarted(path, f"{error} ({where}: a shorter TMPDIR may be needed)") from error
            link = cls(path, process, end)
            hello = link.loop.create_future()  # its first answer: started, or why not
            link.waiting.append(hello)
            await link.loop.create_unix_connection(lambda: link, sock=end)
            try:
                ok, said = await hello
            except WriterStopped:  # (it ended before its first answer: joined below, as any refusal)
                ok, said = False, WriterStopped(f"the writer process of {path} stopped as it started")
        except BaseException:
            if link is not None and link.transport is not None:
                link.transport.close()  # (a child started ends on it)
            else:
                end.close()
            raise
        if not ok:
            await link.close()
            raise said
        return link

    @property
    def stopped(self) -> bool:
        """Ended, or ending (the socket read to its end, or closed): nothing more is sent to it."""
        return self.lost.done() or (self.transport is not None and self.transport.is_closing())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._received += data
        while len(self._received) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(self._received)
            if len(self._received) < _LENGTH.size + size:
                return
            frame = bytes(self._received[_LENGTH.size : _LENGTH.size + size])
            del self._received[: _LENGTH.size + size]
            self._answer(frame)

    def _answer(self, frame: bytes) -> None:
        """The answer to the oldest call waiting (a cancelled caller's is read and dropped)."""
        answered = self.waiting.popleft()
        if not answered.done():
            try:
                answered.set_result(pickle.loads(frame))
            except Exception as error:  # (the child sends errors that unpickle)
                answered.set_exception(StorageError(f"an answer that does not unpickle: {error!r}"))

    def connection_lost(self, error: Exception | None) -> None:
        """The child ended (or the reading failed, or the bot closed it): :class:`WriterStopped` to
        every call still waiting."""
        while self.waiting:
            if not (answered := self.waiting.popleft()).done():
                said = f"the writer process of {self.path} stopped" + (f": {error!r}" if error else "")
                answered.set_exception(WriterStopped(said))
        self.lost.set_result(None)

    def send(self, fn: Callable[..., T], args: tuple[Any, ...]) -> asyncio.Future[Outcome]:
        """Send a call now; its answer, to be awaited (:func:`_result`)."""
        if asyncio.get_running_loop() is not self.loop:
            raise RuntimeError("the store was opened on another event loop")
        if self.stopped:  # (seen ended since it was taken: nothing is sent to it)
            raise WriterStopped(f"the writer process of {self.path} stopped")
        frame = _framed(pickle.dumps((fn, args)))
        answered: asyncio.Future[Outcome] = self.loop.create_future()
        self.waiting.append(answered)
        cast(asyncio.Transport, self.transport).write(frame)
        return answered

    async def close(self) -> None:
        """Once every call sent is answered, close the bot's end: the child closes its connection
        and ends; wait for that."""
        if self.waiting:
            await asyncio.wait(list(self.waiting))
        if self.transport is not None:
            self.transport.close()
            await asyncio.wait([self.lost])
        else:
            self.end.close()
        await asyncio.to_thread(self.process.join)
        self.process.close()


async def _result(answered: asyncio.Future[Outcome]) -> Any:
    """A call's result, once answered (or the error it raised in the child)."""
    ok, value = await answered
    if not ok:
        raise cast(BaseException, value)  # not ok: ``value`` is the error the call raised
    return value


def _start_child(process: Any, child_end: socket.socket) -> None:
    """Start ``process`` (on a thread: a forkserver's answer is waited for), then close the bot's
    copy of the child's end, whatever becomes of the caller meanwhile."""
    try:
        process.start()
    finally:
        child_end.close()


_LINKS: weakref.WeakSet[_Link] = weakref.WeakSet()


@atexit.register
def _unlink() -> None:
    """At the interpreter's exit (before multiprocessing's own, which waits for its children):
    the bot's end of each child's socket closed, so that a store left open does not keep its child,
    nor the exit, waiting."""
    for link in list(_LINKS):
        link.end.close()


class WriterProcess:
    """The writer process of one database file, as the bot sees it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.closing = False  # no call is taken any more
        self.closed = False  # and the child has ended, its connection closed
        self._link: _Link | None = None
        self._start: asyncio.Future[_Link] | None = None  # a new child starting
        self._starting = asyncio.Lock()

    @classmethod
    async def start(cls, path: str) -> WriterProcess:
        """The writer of ``path``, started (raises if it cannot open the file)."""
        writer = cls(path)
        await writer._linked()
        return writer

    @property
    def running(self) -> bool:
        """Whether the child is running (after it ended, the next call starts a new one)."""
        return self._link is not None and not self._link.stopped

    def run_batch(self, jobs: Sequence[Job]) -> Awaitable[list[Outcome]]:
        """``GroupCommit``'s batch: the jobs not cancelled yet are begun and sent, each pickled on
        its own (one that cannot be fails alone, unsent). A running child is sent them at once, in
        the caller's step: it commits them while the event loop goes on (the awaitable returned
        starts a new child first if none runs)."""
        outcomes: list[Outcome] = [(True, SKIPPED)] * len(jobs)
        sent: dict[int, bytes] = {}
        for index, job in enumerate(jobs):
            if not begin(job):
                continue
            try:
                sent[index] = pickle.dumps(job.call())
            except Exception as error:
                outcomes[index] = (False, StorageError(f"a write that cannot be sent: {error!r}"))
        link = self._link
        if sent and link is not None and not link.stopped and not self.closing:
            return self._outcomes(outcomes, sent, link.send(_commit, (list(sent.values()),)))
        return self._outcomes(outcomes, sent, None)

    async def _outcomes(
        self, outcomes: list[Outcome], sent: dict[int, bytes], answered: asyncio.Future[Outcome] | None
    ) -> list[Outcome]:
        """A batch's outcomes: those decided before it was sent, and the child's for those sent
        (``answered``: its answer, if it was sent at once; else it is sent now, a new child started
        first, or refused if the store is closing)."""
        if sent:
            ran = await (
                _result(answered) if answered is not None else self._call(_commit, list(sent.values()))
            )
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
        link = await self._linked()
        return cast(T, await _result(link.send(fn, args)))

    async def _linked(self) -> _Link:
        """The running child; a new one if none is (the last ended, or none started yet). A new
        one is started as a task of its own: a caller cancelled meanwhile leaves it to the next."""
        async with self._starting:
            if self._link is None or self._link.stopped:
                if self._link is not None:
                    await self._link.close()  # (its calls have their answers: WriterStopped)
                    self._link = None
                if self._start is None:
                    self._start = asyncio.ensure_future(_Link.started(self.path))
                try:
                    self._link = await asyncio.shield(self._start)
                finally:
                    if self._start.done():
                        self._start = None
            return self._link

    async def close(self) -> None:
        """Stop the child once what it was sent is done (its connection closed); again: no-op."""
        self.closing = True
        async with self._starting:
            if self._start is not None:  # (started for a caller who stopped waiting)
                with contextlib.suppress(Exception):
                    self._link = await asyncio.shield(self._start)  # (a cancelled close leaves it)
                self._start = None
            if self._link is not None:
                await self._link.close()
                self._link = None
        self.closed = True
