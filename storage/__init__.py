"""Paiju's storage: one SQLite file for people, chats, coins (a double-entry ledger) and tables.

The only package with SQL. Open it with ``await open_store(path)``; check it with
``python -m storage check PATH``.
"""

from storage.check import CheckReport, check_database
from storage.errors import (
    EscrowMismatch,
    IdempotencyConflict,
    InsufficientFunds,
    SchemaTooNew,
    StaleVersion,
    StorageError,
    TableAlreadyOpen,
    TableNotOpen,
    UnknownPerson,
    UnknownTable,
)
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
    "ChatSettings",
    "CheckReport",
    "DailyClaim",
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
    "StaleVersion",
    "StorageError",
    "Store",
    "TableAlreadyOpen",
    "TableNotOpen",
    "UnknownPerson",
    "UnknownTable",
    "check_database",
    "default_path",
    "open_store",
]
