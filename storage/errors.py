"""What storage refuses, as domain exceptions the bot can turn into a message."""

from __future__ import annotations

import os
from collections.abc import Sequence


class StorageError(Exception):
    """Base of every error raised on purpose by ``storage``."""


class SchemaTooNew(StorageError):
    """The database was written by a newer version of the code than this one."""

    def __init__(self, found: int, latest: int) -> None:
        super().__init__(f"database schema version {found} is newer than this code knows ({latest})")
        self.found = found
        self.latest = latest


class UnknownPerson(StorageError):
    """A person was referred to before ``ensure_person`` created them."""

    def __init__(self, person_id: int) -> None:
        super().__init__(f"unknown person {person_id}")
        self.person_id = person_id


class UnknownTable(StorageError):
    def __init__(self, table_id: int) -> None:
        super().__init__(f"unknown table {table_id}")
        self.table_id = table_id


class TableAlreadyOpen(StorageError):
    """A chat has at most one open table."""

    def __init__(self, chat_id: int, table_id: int) -> None:
        super().__init__(f"chat {chat_id} already has open table {table_id}")
        self.chat_id = chat_id
        self.table_id = table_id


class TableNotOpen(StorageError):
    """An action was committed to a table that is already closed."""

    def __init__(self, table_id: int) -> None:
        super().__init__(f"table {table_id} is closed")
        self.table_id = table_id


class StaleVersion(StorageError):
    """A new action carries a version the saved table has already reached."""

    def __init__(self, table_id: int, saved: int, given: int) -> None:
        super().__init__(f"table {table_id} is at version {saved}; action version {given} is stale")
        self.table_id = table_id
        self.saved = saved
        self.given = given


class IdempotencyConflict(StorageError):
    """Some keys of a batch are booked already but not all, or with other amounts: not a replay."""


class EscrowMismatch(StorageError):
    """The escrow a caller declares differs from what the booked movements put there."""


class InsufficientFunds(StorageError):
    """A booking would make a balance negative; nothing of it was booked."""

    def __init__(self, account: int | str, balance: int, delta: int) -> None:
        super().__init__(f"account {account} has {balance} coins; a change of {delta} would go below 0")
        self.account = account
        self.balance = balance
        self.delta = delta


class UpdateTaken(StorageError):
    """An action's update was taken already (by another worker): the action is not saved."""

    def __init__(self, update_ids: Sequence[int]) -> None:
        super().__init__(f"updates {list(update_ids)} were taken already")


class SeatRefused(StorageError):
    """A table states a seat the wallets do not back: someone seated with coins other than their
    wallet's, holding more than their wallet, or seated at two open tables at once."""

    def __init__(self, table_id: int, person_id: int, reason: str) -> None:
        super().__init__(f"table {table_id} cannot seat person {person_id}: {reason}")
        self.table_id = table_id
        self.person_id = person_id


class DatabaseInUse(StorageError):
    """Another process holds the database (a second bot on one file would deal and pay twice)."""

    def __init__(self, path: str, pid: int | None, holder: str | None = None) -> None:
        self.path = path
        self.pid = pid
        self.holder = holder or (f"process {pid}" if pid is not None else "another process")
        super().__init__(f"database {path} is in use by {self.holder}")


class DatabaseUnreachable(StorageError):
    """The database server cannot be reached, or refuses this bot (the reason is the server's)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot reach the database {path}: {reason}")


class BackupFailed(StorageError):
    """A copy did not pass its verification (or could not be made); nothing was put in place."""

    def __init__(self, path: str | os.PathLike[str], problems: tuple[str, ...]) -> None:
        super().__init__(f"{path}: " + "; ".join(problems))
        self.path = os.fspath(path)
        self.problems = problems


class DestinationRefused(BackupFailed):
    """A copy (or a restore) put nothing where it was to go: it would have destroyed what is there
    (a file, the database itself, or a file SQLite or Paiju keeps beside one)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(path, (reason,))
        self.reason = reason
