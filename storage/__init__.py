"""Paiju's storage: one SQLite file for people, chats, coins (a double-entry ledger) and tables.

The only package with SQL. Open it with ``await open_store(path)``; check it with
``python -m storage check PATH``; back it up while the bot runs with ``python -m storage backup``.
"""

from storage.backup import BackupFailed, backup_database, backup_if_due, prune, restore_database
from storage.check import CheckReport, check_database
from storage.errors import (
    DatabaseInUse,
    EscrowMismatch,
    IdempotencyConflict,
    InsufficientFunds,
    SchemaTooNew,
    SeatRefused,
    StaleVersion,
    StorageError,
    TableAlreadyOpen,
    TableNotOpen,
    UnknownPerson,
    UnknownTable,
)
from storage.exclusive import DatabaseLock, hold_database
from storage.models import (
    GAMES,
    MINT,
    ChatSettings,
    DailyClaim,
    GameStats,
    LeaderRow,
    LedgerEntry,
    Person,
    PersonStats,
    RoundRecord,
    RoundResult,
    SavedRound,
    SavedTable,
)
from storage.schema import LATEST as SCHEMA_VERSION
from storage.store import Store, default_path, open_store

__all__ = [
    "GAMES",
    "MINT",
    "SCHEMA_VERSION",
    "BackupFailed",
    "ChatSettings",
    "CheckReport",
    "DailyClaim",
    "DatabaseInUse",
    "DatabaseLock",
    "EscrowMismatch",
    "GameStats",
    "IdempotencyConflict",
    "InsufficientFunds",
    "LeaderRow",
    "LedgerEntry",
    "Person",
    "PersonStats",
    "RoundRecord",
    "RoundResult",
    "SavedRound",
    "SavedTable",
    "SchemaTooNew",
    "SeatRefused",
    "StaleVersion",
    "StorageError",
    "Store",
    "TableAlreadyOpen",
    "TableNotOpen",
    "UnknownPerson",
    "UnknownTable",
    "backup_database",
    "backup_if_due",
    "check_database",
    "default_path",
    "hold_database",
    "open_store",
    "prune",
    "restore_database",
]
