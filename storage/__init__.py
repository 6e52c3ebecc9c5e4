"""Paiju's storage: people, chats, coins (a double-entry ledger) and tables, in one SQLite file
or (``PAIJU_DATABASE_URL``) a PostgreSQL database.

The only package with SQL. Open it with ``await open_store(path_or_url)``; check it with
``python -m storage check PATH``; back it up while the bot runs with ``python -m storage backup``.
"""

from storage.backup import backup_database, backup_if_due, prune, restore_database
from storage.check import CheckReport, check_database
from storage.errors import (
    BackupFailed,
    DatabaseInUse,
    DatabaseUnreachable,
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
    UpdateTaken,
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
    RoundMove,
    RoundMoves,
    RoundRecord,
    RoundResult,
    SavedRound,
    SavedTable,
    SummaryHand,
    SummaryNet,
    SummaryRound,
    TableSummary,
)
from storage.partitions import NotOwner
from storage.postgres import PostgresLock, is_postgres_url
from storage.schema import LATEST as SCHEMA_VERSION
from storage.store import Store, default_path, hold, open_store

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
    "DatabaseUnreachable",
    "EscrowMismatch",
    "GameStats",
    "IdempotencyConflict",
    "InsufficientFunds",
    "LeaderRow",
    "LedgerEntry",
    "NotOwner",
    "Person",
    "PersonStats",
    "PostgresLock",
    "RoundMove",
    "RoundMoves",
    "RoundRecord",
    "RoundResult",
    "SavedRound",
    "SavedTable",
    "SchemaTooNew",
    "SeatRefused",
    "StaleVersion",
    "StorageError",
    "Store",
    "SummaryHand",
    "SummaryNet",
    "SummaryRound",
    "TableAlreadyOpen",
    "TableNotOpen",
    "TableSummary",
    "UnknownPerson",
    "UnknownTable",
    "UpdateTaken",
    "backup_database",
    "backup_if_due",
    "check_database",
    "default_path",
    "hold",
    "hold_database",
    "is_postgres_url",
    "open_store",
    "prune",
    "restore_database",
]
