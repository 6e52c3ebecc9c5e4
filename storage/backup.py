"""Copies of the database made while the bot runs, verified before they count, and putting one back.

``backup_database`` copies with SQLite's online backup API (``sqlite3.Connection.backup``) in one
step, under one read transaction: the copy is the database as of one commit, whatever the bot
writes meanwhile (in WAL mode a reader never holds a writer back). The copy is made in a hidden
file beside its destination, turned into a single file (no ``-wal`` beside it), verified (SQLite's
``integrity_check``, then the books: ``check_database``) and only then given its name: a copy that
fails is deleted, and the error lists why.

``restore_database`` puts a backup in place of the database, only while no bot holds it (and holds
it itself meanwhile, so none starts halfway), and only a backup that passes the same verification.
The database it replaces is moved aside with its ``-wal`` (SQLite would otherwise replay that log
onto the restored file), never deleted.

Automatic backups are named ``<stem>-<UTC time>.sqlite3`` in one folder (``backup_if_due``,
``prune``); the copy taken before a schema migration ``<stem>-v<version>-<UTC time>.sqlite3``
beside the database, never pruned.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from storage.check import SHOWN, CheckReport, check_database
from storage.errors import StorageError
from storage.exclusive import hold_database
from storage.files import IN_MEMORY, SIDE_FILES, create_private
from storage.schema import LATEST, schema_version

STAMP = "%Y%m%dT%H%M%SZ"
SUFFIX = ".sqlite3"
DAY = timedelta(days=1)


class BackupFailed(StorageError):
    """A copy did not pass its verification (or could not be made); nothing was put in place."""

    def __init__(self, path: str | os.PathLike[str], problems: tuple[str, ...]) -> None:
        super().__init__(f"{path}: " + "; ".join(problems))
        self.path = os.fspath(path)
        self.problems = problems


def backup_database(
    database: str | os.PathLike[str], destination: str | os.PathLike[str], now: datetime | None = None
) -> tuple[Path, CheckReport]:
    """Copy ``database`` to ``destination`` (a folder: a file named after the time in it) while it
    may be in use, verify the copy, and return its path and the check's report; ``BackupFailed``
    (no file left) if the copy fails its verification."""
    source = Path(database)
    if not source.is_file():
        raise BackupFailed(source, ("no database there",))
    target = Path(destination)
    if target.is_dir():
        target = target / backup_name(source, now or datetime.now(UTC))
    try:
        reader = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as error:
        raise BackupFailed(source, (f"cannot open it: {error}",)) from None
    try:
        reader.execute("PRAGMA busy_timeout = 5000")
        return _copy_verified(reader, target, books=True)
    finally:
        reader.close()


def backup_before_migrating(
    conn: sqlite3.Connection, database: str, now: datetime | None = None
) -> Path | None:
    """Before ``schema.migrate`` upgrades an existing database: a verified copy of it beside it, at
    the version it has (None when there is nothing to migrate, or no file)."""
    version = schema_version(conn)
    if database in IN_MEMORY or not 0 < version < LATEST:
        return None
    source = Path(database)
    moment = now or datetime.now(UTC)
    target = source.with_name(f"{source.stem}-v{version}-{moment.strftime(STAMP)}{SUFFIX}")
    # The books are the database's own business: its integrity is what the copy must keep.
    return _copy_verified(conn, target, books=False)[0]


def restore_database(
    backup: str | os.PathLike[str], database: str | os.PathLike[str], now: datetime | None = None
) -> Path | None:
    """Put ``backup`` in place of ``database``: ``DatabaseInUse`` while a bot runs on it,
    ``BackupFailed`` if the backup fails its verification. Returns where the database it replaced
    was moved (None if there was none)."""
    source, target = Path(backup), Path(database)
    with hold_database(target):
        report = verify(source)
        if not report.ok:
            raise BackupFailed(source, report.problems)
        partial = target.with_name(f".{target.name}.restoring")
        try:
            _copy_file(source, partial)
            aside = _move_aside(target, now or datetime.now(UTC))
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        _sync_folder(target.parent)
    return aside


def verify(path: str | os.PathLike[str], *, books: bool = True) -> CheckReport:
    """SQLite's ``integrity_check`` of the file, then (``books``) ``check_database``."""
    file = Path(path)
    if not file.is_file():
        return CheckReport(False, (f"no database at {file}",))
    try:
        db = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            lines = [str(row[0]) for row in db.execute("PRAGMA integrity_check")]
        finally:
            db.close()
    except sqlite3.Error as error:
        return CheckReport(False, (f"cannot read {file}: {error}",))
    if lines != ["ok"]:
        return CheckReport(False, tuple(f"sqlite integrity_check: {line}" for line in lines[:SHOWN]))
    return check_database(file) if books else CheckReport(True, summary="integrity_check ok")


# -- automatic backups ----------------------------------------------------------------------------


def backup_name(database: Path, moment: datetime) -> str:
    return f"{database.stem}-{moment.astimezone(UTC).strftime(STAMP)}{SUFFIX}"


def automatic_backups(database: str | os.PathLike[str], folder: str | os.PathLike[str]) -> list[Path]:
    """The automatic backups of ``database`` in ``folder``, oldest first."""
    pattern = re.compile(rf"{re.escape(Path(database).stem)}-(\d{{8}}T\d{{6}}Z){re.escape(SUFFIX)}")
    found = [path for path in Path(folder).glob(f"*{SUFFIX}") if pattern.fullmatch(path.name)]
    return sorted(found, key=lambda path: path.name)


def taken_at(backup: Path) -> datetime:
    return datetime.strptime(backup.stem.rsplit("-", 1)[1], STAMP).replace(tzinfo=UTC)


def backup_if_due(
    database: str | os.PathLike[str], folder: str | os.PathLike[str], now: datetime
) -> Path | None:
    """A backup in ``folder`` unless its newest is less than a day old (a bot restarted often still
    takes one a day, and a bot down for a while takes one as soon as it is back)."""
    taken = automatic_backups(database, folder)
    if taken and now - taken_at(taken[-1]) < DAY:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return backup_database(database, Path(folder) / backup_name(Path(database), now))[0]


def prune(
    database: str | os.PathLike[str], folder: str | os.PathLike[str], keep_days: int, now: datetime
) -> list[Path]:
    """Delete the automatic backups older than ``keep_days`` days, never the newest one."""
    taken = automatic_backups(database, folder)
    old = [path for path in taken[:-1] if now - taken_at(path) > timedelta(days=keep_days)]
    for path in old:
        path.unlink(missing_ok=True)
    return old


# -- the copying itself ---------------------------------------------------------------------------


def _copy_verified(source: sqlite3.Connection, target: Path, *, books: bool) -> tuple[Path, CheckReport]:
    partial = target.with_name(f".{target.name}.partial")
    try:
        _remove_with_side_files(partial)
        create_private(str(partial))  # 0600 from the start, as the database: it holds the open decks
        copy = sqlite3.connect(partial, isolation_level=None)
        try:
            source.backup(copy)  # every page in one step: one read transaction, one commit's state
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, no -wal
        finally:
            copy.close()
        report = verify(partial, books=books)
        if not report.ok:
            raise BackupFailed(target, report.problems)
        os.replace(partial, target)
        _sync_folder(target.parent)
    except (sqlite3.Error, OSError) as error:
        raise BackupFailed(target, (f"copy failed: {error}",)) from None
    finally:
        _remove_with_side_files(partial)
    return target, report


def _copy_file(source: Path, target: Path) -> None:
    create_private(str(target))
    with source.open("rb") as reading, target.open("wb") as writing:
        while chunk := reading.read(1 << 20):
            writing.write(chunk)
        writing.flush()
        os.fsync(writing.fileno())


def _move_aside(database: Path, moment: datetime) -> Path | None:
    """Move the database (with its -wal, which may hold its last commits) out of the way."""
    if not database.exists():
        for suffix in SIDE_FILES:
            Path(f"{database}{suffix}").unlink(missing_ok=True)
        return None
    aside = database.with_name(f"{database.stem}-replaced-{moment.astimezone(UTC).strftime(STAMP)}{SUFFIX}")
    os.replace(database, aside)
    wal = Path(f"{database}-wal")
    if wal.exists():
        os.replace(wal, f"{aside}-wal")
    Path(f"{database}-shm").unlink(missing_ok=True)  # rebuilt from the -wal by whoever opens it
    return aside


def _remove_with_side_files(path: Path) -> None:
    for file in (path, *(Path(f"{path}{suffix}") for suffix in (*SIDE_FILES, "-journal"))):
        file.unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """A rename is durable once its folder is synced."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
