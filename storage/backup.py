"""Copies of the database made while the bot runs, verified before they count, and putting one back.

``backup_database`` copies with SQLite's online backup API (``sqlite3.Connection.backup``) in one
step, under one read transaction: the copy is the database as of one commit, whatever the bot
writes meanwhile (in WAL mode a reader never holds a writer back). The copy is made in a hidden
file beside its destination, turned into a single file (no ``-wal`` beside it), verified (SQLite's
``integrity_check``, then the books: ``check_database``) and only then given its name: a copy that
fails is deleted, and the error lists why. A copy destroys nothing (``storage.destinations``): never
written over the database or a file beside it, whatever the name, nor over any existing file but
an older Paiju backup when asked to (``force``); the name is given without overwriting what may
have appeared there meanwhile.

``restore_database`` puts a backup in place of the database, only while no bot holds it (and holds
it itself meanwhile, so none starts halfway), and only a backup that passes the same verification.
The database it replaces is moved aside with its ``-wal`` (SQLite would otherwise replay that log
onto the restored file), never deleted; a restore onto the backup itself, onto a name SQLite keeps
beside a database, or in place of a file that is not a database is refused.

Automatic backups are named ``<stem>-<UTC time>.sqlite3`` in one folder (``backup_if_due``,
``prune``); the copy taken before a schema migration ``<stem>-v<version>-<UTC time>.sqlite3``
beside the database, never pruned.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from storage.check import SHOWN, CheckReport, check_database
from storage.destinations import JOURNAL, is_backup, refuse_existing, refuse_files_of, refuse_replacing
from storage.errors import BackupFailed, DestinationRefused
from storage.exclusive import hold_database
from storage.files import IN_MEMORY, SIDE_FILES
from storage.schema import LATEST, file_version

STAMP = "%Y%m%dT%H%M%SZ"
SUFFIX = ".sqlite3"
DAY = timedelta(days=1)
# A file system without hard links (vfat, some network shares) refuses os.link with one of these.
NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP})


def backup_database(
    database: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    now: datetime | None = None,
    *,
    force: bool = False,
) -> tuple[Path, CheckReport]:
    """Copy ``database`` to ``destination`` (a folder: a file named after the time in it) while it
    may be in use, verify the copy, and return its path and the check's report; ``BackupFailed``
    (no file left) if the copy fails its verification, ``DestinationRefused`` (nothing done) if the
    destination is the database or a file beside it, or a file is there (``force``: unless it is a
    Paiju backup)."""
    source = Path(database)
    if not source.is_file():
        raise BackupFailed(source, ("no database there",))
    target = Path(destination)
    if target.is_dir():
        target = target / backup_name(source, now or datetime.now(UTC))
    refuse_files_of(source, target, "the database")
    refuse_existing(target, force=force)
    try:
        reader = _reader(source)
    except sqlite3.Error as error:
        raise BackupFailed(source, (f"cannot open it: {error}",)) from None
    try:
        return _copy_verified(reader, target, books=True, replace=force)
    finally:
        reader.close()


def backup_before_migrating(
    conn: sqlite3.Connection, database: str, now: datetime | None = None
) -> Path | None:
    """Before ``schema.migrate`` upgrades an existing database: a verified copy of it beside it, at
    the version it has (None when there is nothing to migrate, or no file)."""
    version = file_version(conn)
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
    ``BackupFailed`` if the backup fails its verification, ``DestinationRefused`` (nothing done)
    if ``database`` is the backup, a name kept beside a database, or a file that is not a
    database. Returns where the database it replaced was moved (None if there was none)."""
    source, target = Path(backup), Path(database)
    refuse_files_of(source, target, "the backup")  # before the hold, which would create the file
    refuse_replacing(target)
    existed = os.path.lexists(target)
    with hold_database(target):
        try:
            aside = _put_in_place(source, target, now or datetime.now(UTC))
        except BaseException:
            if not existed and _size(target) == 0:
                target.unlink(missing_ok=True)  # the empty file the hold created: as it was
            raise
    return aside


def _put_in_place(source: Path, target: Path, moment: datetime) -> Path | None:
    report = verify(source)
    if not report.ok:
        raise BackupFailed(source, report.problems)
    partial = _hidden_beside(target, ".restoring")
    try:
        # Read as SQLite reads it: a database kept aside by a restore has its last commits in its
        # -wal, which a copy of the file's bytes would leave behind (and verify() had read).
        try:
            with contextlib.closing(_reader(source)) as reader:
                _copy_pages(reader, partial)
        except sqlite3.Error as error:
            raise BackupFailed(source, (f"cannot copy it: {error}",)) from None
        aside = _move_aside(target, moment)
        os.replace(partial, target)
    finally:
        _remove_with_side_files(partial)
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
    """Delete the automatic backups older than ``keep_days`` days, never the newest one (a file
    named like one that is not a Paiju backup is not one: it stays)."""
    taken = [path for path in automatic_backups(database, folder) if is_backup(path)]
    old = [path for path in taken[:-1] if now - taken_at(path) > timedelta(days=keep_days)]
    for path in old:
        path.unlink(missing_ok=True)
    return old + _leftovers(database, folder, now)


def _leftovers(database: str | os.PathLike[str], folder: str | os.PathLike[str], now: datetime) -> list[Path]:
    """Delete the copies a backup killed while it wrote left under their hidden names (each a whole
    copy of the database, open decks included), once a day old: no backup takes that long."""
    gone = []
    for path in Path(folder).glob(f".{Path(database).stem}-*{SUFFIX}.*.partial"):
        written = datetime.fromtimestamp(path.lstat().st_mtime, UTC)
        if path.is_file() and not path.is_symlink() and now - written > DAY:
            _remove_with_side_files(path)
            gone.append(path)
    return gone


# -- the copying itself ---------------------------------------------------------------------------


def _copy_verified(
    source: sqlite3.Connection, target: Path, *, books: bool, replace: bool = False
) -> tuple[Path, CheckReport]:
    """The copy made under a hidden name of its own beside ``target``, verified, then named
    ``target`` (over a file there only if ``replace``); nothing of it left if it fails."""
    partial: Path | None = None
    try:
        partial = _hidden_beside(target, ".partial")
        _copy_pages(source, partial)
        report = verify(partial, books=books)
        if not report.ok:
            raise BackupFailed(target, report.problems)
        _give_name(partial, target, replace=replace)
        _sync_folder(target.parent)
    except (sqlite3.Error, OSError) as error:
        raise BackupFailed(target, (f"copy failed: {error}",)) from None
    finally:
        if partial is not None:
            _remove_with_side_files(partial)
    return target, report


def _reader(database: Path) -> sqlite3.Connection:
    """A read-only connection to ``database`` (its -wal read too, as by the bot)."""
    reader = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    reader.execute("PRAGMA busy_timeout = 5000")
    return reader


def _copy_pages(source: sqlite3.Connection, partial: Path) -> None:
    copy = sqlite3.connect(partial, isolation_level=None)
    try:
        source.backup(copy)  # every page in one step: one read transaction, one commit's state
        copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, no -wal
    finally:
        copy.close()


def _hidden_beside(target: Path, suffix: str) -> Path:
    """A new empty file of this process's own beside ``target`` (on its file system: renamed
    into place in one step), ``0600`` from the start as the database: it holds the open decks."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    os.close(fd)
    return Path(name)


def _give_name(partial: Path, target: Path, *, replace: bool) -> None:
    """Name the finished copy ``target``: over what is there only if ``replace``. Otherwise a hard
    link, which fails if a file appeared there since it was checked (a rename would replace it)."""
    if replace:
        os.replace(partial, target)
        return
    try:
        os.link(partial, target, follow_symlinks=False)
    except FileExistsError:
        raise DestinationRefused(target, "a file appeared there while the copy was made") from None
    except OSError as error:
        if error.errno not in NO_HARD_LINKS:
            raise
        if os.path.lexists(target):  # no hard links here: this check is the last word
            raise DestinationRefused(target, "a file appeared there while the copy was made") from None
        os.replace(partial, target)


def _move_aside(database: Path, moment: datetime) -> Path | None:
    """Move the database (with its -wal, which may hold its last commits) out of the way, under a
    name nothing has yet. An empty file with no -wal (a new database, or the one ``hold_database``
    created) holds nothing to keep."""
    wal = Path(f"{database}-wal")
    if not database.exists() or (database.stat().st_size == 0 and not _size(wal)):
        for file in (database, *(Path(f"{database}{suffix}") for suffix in SIDE_FILES)):
            file.unlink(missing_ok=True)
        return None
    stem = f"{database.stem}-replaced-{moment.astimezone(UTC).strftime(STAMP)}"
    aside = database.with_name(f"{stem}{SUFFIX}")
    more = 1
    while any(os.path.lexists(f"{aside}{suffix}") for suffix in ("", *SIDE_FILES)):
        more += 1  # a restore in the same second as another: never over what that one kept
        aside = database.with_name(f"{stem}-{more}{SUFFIX}")
    os.replace(database, aside)
    if wal.exists():
        os.replace(wal, f"{aside}-wal")
    Path(f"{database}-shm").unlink(missing_ok=True)  # rebuilt from the -wal by whoever opens it
    return aside


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _remove_with_side_files(path: Path) -> None:
    for file in (path, *(Path(f"{path}{suffix}") for suffix in (*SIDE_FILES, JOURNAL))):
        file.unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """A rename is durable once its folder is synced."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
