"""The database's files are readable by the bot's user only: they hold every open round's deck.

SQLite creates a new database file with ``0666`` less the umask (``0644`` usually), and its
``-wal`` and ``-shm`` with the database file's mode. So the database file is created ``0600``
before SQLite opens it, and the three files are made ``0600`` once open, whatever mode an older
version (or a copy) gave them.
"""

from __future__ import annotations

import os
import stat

SIDE_FILES = ("-wal", "-shm")
IN_MEMORY = ("", ":memory:")  # SQLite's names of a database with no file


def create_private(database: str) -> None:
    """Create ``database`` empty with mode ``0600`` if it does not exist (SQLite takes an empty
    file for a new database); an existing file is left as it is."""
    if database in IN_MEMORY:
        return
    os.close(open_private(database))


def open_private(database: str) -> int:
    """A read-only descriptor of ``database``, created empty with mode ``0600`` if it does not
    exist; an existing file is left as it is."""
    return os.open(database, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)


def make_private(database: str) -> None:
    """Make ``database`` and its ``-wal`` and ``-shm`` (those that exist) ``0600``."""
    if database in IN_MEMORY:
        return
    for path in (database, *(database + suffix for suffix in SIDE_FILES)):
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            continue
        if mode != 0o600:
            os.chmod(path, 0o600)
