"""One process at a time on a database file: an OS lock that dies with its process.

Two bots on one database would both deal, time out and pay the same tables. ``hold_database``
takes an exclusive ``flock`` on ``<database>-lock`` beside the file and writes its PID there (for
the message of whoever is refused). The kernel drops the lock when the process ends, however it
ends (SIGKILL included), so a crash never blocks the next start; the lock file itself stays, and
a PID left in it means nothing unless the lock is held.

``flock`` belongs to an open file description, not to a process: a second ``hold_database`` on
the same file in the same process is refused too (naming this process), until the first is
released.
"""

from __future__ import annotations

import fcntl
import os
from types import TracebackType

from storage.errors import DatabaseInUse

SUFFIX = "-lock"  # beside -wal and -shm (a name SQLite itself never uses); *.sqlite3-* ignores it


def lock_path(database: str | os.PathLike[str]) -> str:
    """The lock file of ``database``: beside the file itself (symbolic links followed)."""
    return os.path.realpath(os.fspath(database)) + SUFFIX


class DatabaseLock:
    """The held lock on one database file; ``release()`` (or leaving the ``with``) lets it go."""

    def __init__(self, database: str, fd: int) -> None:
        self.database = database
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let another process have the database; releasing twice does nothing."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of the open file drops its flock

    def __enter__(self) -> DatabaseLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"DatabaseLock({self.database!r}, held={self.held})"


def hold_database(database: str | os.PathLike[str]) -> DatabaseLock:
    """Take ``database`` for this process, or raise :class:`DatabaseInUse` naming the holder's PID.

    Never waits: a database held by a running process is refused at once.
    """
    path = os.path.abspath(os.fspath(database))
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _holder(fd)
        os.close(fd)
        raise DatabaseInUse(path, pid) from None
    except BaseException:
        os.close(fd)
        raise
    try:
        pid = f"{os.getpid()}\n".encode()
        os.pwrite(fd, pid, 0)  # then cut: a reader sees a whole PID, never an empty file
        os.ftruncate(fd, len(pid))
    except BaseException:
        os.close(fd)
        raise
    return DatabaseLock(path, fd)


def _holder(fd: int) -> int | None:
    """The PID written in the lock file, if any (a holder writes it just after taking the lock)."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None
