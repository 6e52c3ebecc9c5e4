"""``python -m storage``: verify a database, back it up while the bot runs, put a backup back, move
it to PostgreSQL.

- ``check [PATH or URL]``: exit 0 when the books balance, else 1 (an SQLite file, or a
  ``postgresql://`` URL; default ``$PAIJU_DATABASE_URL``, else ``$PAIJU_DB``).
- ``backup [PATH] [--to DEST] [--force]``: a consistent copy (DEST a file, or a folder: a file named
  after the time in it; default: beside the database), verified; exit 1 (and no copy left) if it
  fails. Exit 2, nothing done, if DEST is the database or a file beside it (``-wal``, ``-shm``,
  ``-journal``, ``-lock``), by any name, or if a file is there (``--force``: unless it is a Paiju
  backup, which the copy then replaces).
- ``restore BACKUP [--to PATH]``: the backup in place of the database, once verified; exit 2 while a
  bot runs on the database, or if PATH is the backup itself, a name kept beside a database, or a
  file that is not a database; 1 if the backup fails its verification. The database it replaces is
  kept beside it as ``<name>-replaced-<time>.sqlite3``.
- ``migrate-to URL [--from PATH]``: everything in the SQLite file moved into an empty PostgreSQL
  database (``storage/transfer.py``); exit 2, nothing done, while a bot runs on either, or if the
  database is not empty; 1 if the copy does not check out. Backups and restores of PostgreSQL are
  the server's own tools' (``pg_dump``, ``pg_restore``): ``backup`` and ``restore`` say so (exit 2).

A refusal is one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from storage.backup import backup_database, restore_database
from storage.check import check_database
from storage.errors import BackupFailed, DatabaseInUse, DatabaseUnreachable, DestinationRefused
from storage.postgres import check_postgres, is_postgres_url, without_password
from storage.store import default_path
from storage.transfer import TransferRefused, migrate_to

PG_BACKUP = (
    "{command}: a PostgreSQL database is backed up with the server's own tools, for example"
    ' pg_dump --format=custom --file=paiju.dump "$PAIJU_DATABASE_URL" (and put back with pg_restore);'
    " see the README."
)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.command == "check":
        report = (
            asyncio.run(check_postgres(args.path))
            if is_postgres_url(args.path)
            else check_database(args.path)
        )
        print(report.render())
        return 0 if report.ok else 1
    if args.command == "migrate-to":
        return move(args.source, args.url)
    if is_postgres_url(args.path if args.command == "backup" else args.to):
        print(PG_BACKUP.format(command=args.command), file=sys.stderr)
        return 2
    if args.command == "backup":
        return backup(args.path, args.to or str(Path(args.path).parent), force=args.force)
    return restore(args.backup, args.to)


def move(source: str, url: str) -> int:
    shown = without_password(url)
    if not is_postgres_url(url):
        print(f"Not moved: {url!r} is not a postgresql:// URL.", file=sys.stderr)
        return 2
    try:
        report = asyncio.run(migrate_to(source, url))
    except DatabaseInUse as error:
        print(
            f"Not moved: the database {error.path} is in use by {error.holder}. Stop the bot first.",
            file=sys.stderr,
        )
        return 2
    except DatabaseUnreachable as error:
        print(f"Not moved: {error}.", file=sys.stderr)
        return 2
    except TransferRefused as refused:
        print(f"Not moved: {refused.reason}.", file=sys.stderr)
        return 1 if refused.reason.startswith("the copy does not check out") else 2
    print(
        f"moved {source} into {shown}\n{report.render()}\n"
        f"Start the bot with PAIJU_DATABASE_URL set to that database; keep {source} as a backup."
    )
    return 0


def backup(path: str, destination: str, *, force: bool = False) -> int:
    try:
        copy, report = backup_database(path, destination, force=force)
    except DestinationRefused as refused:
        print(f"Not backed up to {refused.path}: {refused.reason}.", file=sys.stderr)
        return 2
    except BackupFailed as failed:
        print(f"FAILED: no backup made of {path}", file=sys.stderr)
        print("\n".join(f"- {problem}" for problem in failed.problems), file=sys.stderr)
        return 1
    print(f"backed up {path} to {copy}\n{report.render()}")
    return 0


def restore(backup: str, path: str) -> int:
    try:
        aside = restore_database(backup, path)
    except DatabaseInUse as error:
        print(
            f"Not restored: the database {error.path} is in use by {error.holder}. Stop the bot first.",
            file=sys.stderr,
        )
        return 2
    except DestinationRefused as refused:
        print(f"Not restored to {refused.path}: {refused.reason}.", file=sys.stderr)
        return 2
    except BackupFailed as failed:
        print(f"Not restored: the backup {backup} fails its check", file=sys.stderr)
        print("\n".join(f"- {problem}" for problem in failed.problems), file=sys.stderr)
        return 1
    except OSError as error:  # e.g. no such folder: nothing was replaced
        print(f"Not restored to {path}: {error.strerror} ({error.filename}).", file=sys.stderr)
        return 1
    kept = f"; the database it replaced is kept at {aside}" if aside else ""
    print(f"restored {backup} to {path}{kept}")
    return 0


def parse(argv: list[str] | None) -> argparse.Namespace:
    database = os.environ.get("PAIJU_DB", "paiju.sqlite3")  # the SQLite file
    parser = argparse.ArgumentParser(prog="python -m storage", description="Paiju storage tools")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="verify balances, ledger, grants and escrow (read-only)")
    check.add_argument(
        "path",
        nargs="?",
        default=default_path(),
        help="the SQLite file or a postgresql:// URL"
        " (default: $PAIJU_DATABASE_URL, else $PAIJU_DB or paiju.sqlite3)",
    )
    backup = commands.add_parser("backup", help="copy the database while the bot runs, and verify the copy")
    backup.add_argument("path", nargs="?", default=database, help="the SQLite file (default: $PAIJU_DB)")
    backup.add_argument(
        "--to", help="the copy: a new file, or a folder to put it in (default: the database's folder)"
    )
    backup.add_argument(
        "--force", action="store_true", help="replace the file at --to if it is a Paiju backup"
    )
    restore = commands.add_parser(
        "restore", help="put a verified backup in place of a stopped bot's database"
    )
    restore.add_argument("backup", help="the backup file")
    restore.add_argument("--to", default=database, help="the database to replace (default: $PAIJU_DB)")
    move = commands.add_parser(
        "migrate-to", help="move everything in the SQLite file into an empty PostgreSQL database"
    )
    move.add_argument("url", help="the PostgreSQL database: postgresql://user:password@host/name")
    move.add_argument("--from", dest="source", default=database, help="the SQLite file (default: $PAIJU_DB)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
