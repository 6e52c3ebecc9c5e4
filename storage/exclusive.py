"""One process at a time on a database file: OS locks that die with their process.

Two bots on one database would both deal, time out and pay the same tables. ``hold_database``
takes two exclusive ``flock`` locks, and is refused if either is held:

- on ``<database>-lock`` beside the file (symbolic links followed), where it writes its PID for
  the message of whoever is refused by that name;
- on the database file itself (created empty, ``0600``, if it does not exist yet: SQLite takes an
  empty file for a new database). A lock keyed by a name misses the same file reached by another
  one: through a hard link, two bots each kept their own ``-wal`` of one file and each saw their
  own database. The file's lock is the file's, whatever its name. Who holds it is found in
  ``/proc/locks`` (by device and inode) where the kernel tells; else the message says "another
  process".

The kernel drops the locks when the process ends, however it ends (SIGKILL included), so a crash
never blocks the next start; the lock file itself stays, and a PID left in it means nothing unless
the lock is held.

``flock`` belongs to an open file description, not to a process: a second ``hold_database`` on
the same file in the same process is refused too (naming this process), until the first is
released.

On Linux ``flock`` and SQLite's POSIX (``fcntl``) locks are independent, so the bot's own SQLite
connections are not hindered by the lock on the database file. But closing *any* descriptor of a
file drops every POSIX lock the process holds on it, SQLite's included: a lock is released (its
descriptor closed) only after this process's SQLite connections to the file are closed.
(On NFS, ``flock`` is emulated with POSIX locks; SQLite on NFS is unsafe anyway.)
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from storage.errors import DatabaseInUse
from storage.files import IN_MEMORY, open_private

SUFFIX = "-lock"  # beside -wal and -shm (a name SQLite itself never uses); *.sqlite3-* ignores it
KERNEL_LOCKS = "/proc/locks"  # Linux: every lock held, with its holder's PID, device and inode


def lock_path(database: str | os.PathLike[str]) -> str:
    """The lock file of ``database``: beside the file itself (symbolic links followed)."""
    return os.path.realpath(os.fspath(database)) + SUFFIX


class DatabaseLock:
    """The held locks on one database file; ``release()`` (or leaving the ``with``) lets them go,
    once this process's SQLite connections to the file are closed (see the module's docstring)."""

    def __init__(self, database: str, fd: int, file_fd: int | None) -> None:
        self.database = database
        self._fd: int | None = fd
        self._file_fd = file_fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let another process have the database; releasing twice does nothing."""
        fd, self._fd = self._fd, None
        file_fd, self._file_fd = self._file_fd, None
        if file_fd is not None:
            os.close(file_fd)
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
    """Take ``database`` for this process, or raise :class:`DatabaseInUse` naming the holder's PID
    (when it can be known).

    Never waits: a database held by a running process is refused at once, by whatever name.
    """
    name = os.fspath(database)
    path = os.path.abspath(name)
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
        # Taken second: a second hold by the same name is refused before it opens (and closes)
        # the database file, which would drop the locks of this process's SQLite connections.
        file_fd = None if name in IN_MEMORY else _hold_file(path)
    except BaseException:
        os.close(fd)
        raise
    try:
        mine = f"{os.getpid()}\n".encode()
        os.pwrite(fd, mine, 0)  # then cut: a reader sees a whole PID, never an empty file
        os.ftruncate(fd, len(mine))
    except BaseException:
        DatabaseLock(path, fd, file_fd).release()
        raise
    return DatabaseLock(path, fd, file_fd)


def _hold_file(path: str) -> int:
    """The database file itself, locked (``DatabaseInUse`` if another open of it holds it)."""
    fd = open_private(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        held = os.fstat(fd)
        os.close(fd)
        raise DatabaseInUse(path, _file_holder(held.st_dev, held.st_ino)) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _holder(fd: int) -> int | None:
    """The PID written in the lock file, if any (a holder writes it just after taking the lock)."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def _file_holder(device: int, inode: int) -> int | None:
    """The PID of the process holding a ``flock`` on the file, as the kernel lists it.

    A line of ``/proc/locks``: ``12: FLOCK  ADVISORY  WRITE 4242 fe:00:2148612 0 EOF`` (a lock
    waited for has ``->`` after its number, and is passed over). The device is the file system's,
    in hex; where that is not the one ``stat`` gives (btrfs subvolumes, overlayfs), or the holder
    is in another PID namespace (shown as 0 or -1), nobody is named.
    """
    wanted = f"{os.major(device):02x}:{os.minor(device):02x}:{inode}"
    try:
        lines = Path(KERNEL_LOCKS).read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[5] == wanted:
            pid = fields[4]
            return int(pid) if pid.isdigit() and int(pid) > 0 else None
    return None
