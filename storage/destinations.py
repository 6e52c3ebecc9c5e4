"""What a backup may be written over, and what a restore may replace: nothing that would be lost.

A copy is never written over the database, nor over a file SQLite or Paiju keeps beside it (its
``-wal``: overwritten, a crash lost every commit it held, and the books still balanced), by whatever
name: symbolic links are resolved, and an existing file is compared by device and inode (a hard
link). Nor over any existing file, unless asked to (``force``), and then only over a Paiju backup.
A restore never puts a database where its backup is, nor at a name SQLite or Paiju uses for a file
beside a database, nor in place of a file that is not a SQLite database.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from storage.errors import DestinationRefused
from storage.exclusive import SUFFIX as LOCK
from storage.files import SIDE_FILES

JOURNAL = "-journal"  # SQLite's rollback journal, beside a database not in WAL mode
BESIDE = (*SIDE_FILES, JOURNAL, LOCK)  # what SQLite and hold_database keep beside a database
# The first bytes of every SQLite database file, and where its header says WAL mode (2) rather
# than a rollback journal (1): https://www.sqlite.org/fileformat.html#the_database_header
HEADER = b"SQLite format 3\x00"
HEADER_SIZE = 100
WAL_MODE = slice(18, 20), b"\x02\x02"
PAIJU_TABLES = frozenset({"people", "ledger", "tables"})


def refuse_files_of(database: Path, destination: Path, whose: str) -> None:
    """``DestinationRefused`` if ``destination`` is ``database`` or one of the files beside it
    (``whose`` names it in the message), or bears the name of a file kept beside a database."""
    files = _files_of(database, whose)
    for name in {os.path.abspath(destination), os.path.realpath(destination)}:
        if name in files:
            raise DestinationRefused(destination, f"it is {files[name]}")
    target = identity(destination)
    if target is not None:
        for name, label in files.items():
            if identity(name) == target:
                raise DestinationRefused(destination, f"it is {label}, by another name")
    for name in (os.fspath(destination), os.path.realpath(destination)):
        if name.endswith(BESIDE):
            suffix = next(suffix for suffix in BESIDE if name.endswith(suffix))
            raise DestinationRefused(destination, f"{suffix} names a file kept beside a database")


def refuse_existing(destination: Path, *, force: bool) -> None:
    """``DestinationRefused`` if a file is at ``destination``, unless ``force`` and it is a Paiju
    backup (a dangling symbolic link counts as a file: writing there would follow it)."""
    if not os.path.lexists(destination):
        return
    if not force:
        raise DestinationRefused(destination, "a file is there already (--force replaces a Paiju backup)")
    if not is_backup(destination):
        reason = "a file is there that is not a Paiju backup (--force replaces only those)"
        raise DestinationRefused(destination, reason)


def refuse_replacing(database: Path) -> None:
    """``DestinationRefused`` if a restore would replace something that is not a database: a
    file with something in it other than SQLite's header."""
    try:
        with database.open("rb") as file:
            start = file.read(len(HEADER))
    except FileNotFoundError:
        return
    except OSError as error:
        raise DestinationRefused(database, f"cannot read it: {error.strerror}") from None
    if start and start != HEADER:
        raise DestinationRefused(database, "a file is there that is not a SQLite database")


def is_backup(path: str | os.PathLike[str]) -> bool:
    """A Paiju backup: a whole SQLite file in rollback-journal mode (a bot's database is in WAL
    mode), with no ``-wal`` beside it, holding Paiju's tables."""
    file = Path(path)
    if not file.is_file() or Path(f"{os.path.realpath(file)}-wal").exists():
        return False
    try:
        with file.open("rb") as reading:
            header = reading.read(HEADER_SIZE)
    except OSError:
        return False
    where, wal = WAL_MODE
    if len(header) < HEADER_SIZE or not header.startswith(HEADER) or header[where] == wal:
        return False
    try:
        db = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return names >= PAIJU_TABLES


def identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The file's device and inode (symbolic links followed), None if there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _files_of(database: Path, whose: str) -> dict[str, str]:
    """The names of ``database`` and of the files beside it (as given, and with symbolic links
    resolved: SQLite keeps its ``-wal`` beside the file the links lead to), each with its label."""
    files: dict[str, str] = {}
    for base in (os.path.abspath(database), os.path.realpath(database)):
        files[base] = f"{whose} itself"
        files.update({base + suffix: f"the {suffix} file of {whose}" for suffix in BESIDE})
    return files
