"""An older database, for the tests of upgrades and of backups taken before one: the schema at a
given version and rows every version since 1 can hold (two people, a chat, a table, its ledger).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from storage import schema
from storage.on_sqlite import run_query

V1_ROWS = [
    "INSERT INTO people VALUES (1, 'Ming', 'zh-hans', 9900, 't0', 't0')",
    "INSERT INTO people VALUES (2, 'Hong', NULL, 10000, 't0', 't0')",
    "INSERT INTO chats (id, language, turn_seconds, lobby_seconds, created_at, updated_at)"
    " VALUES (-10, 'en', 45, 600, 't0', 't0')",
    "UPDATE accounts SET balance = -20000 WHERE name = 'mint'",
    "UPDATE accounts SET balance = 100 WHERE name = 'escrow'",
    "INSERT INTO tables (id, chat_id, game, state, version, escrow, created_at, updated_at)"
    " VALUES (7, -10, 'showhand', '{\"v\":1}', 3, 100, 't0', 't0')",
    "INSERT INTO ledger (person_id, account, delta, reason, counterparty, entry, idem_key, created_at) VALUES"
    " (NULL, 'mint', -10000, 'grant', '1', 'grant:1', 'grant:1:mint', 't0'),"
    " (1, NULL, 10000, 'grant', 'mint', 'grant:1', 'grant:1:1', 't0'),"
    " (NULL, 'mint', -10000, 'grant', '2', 'grant:2', 'grant:2:mint', 't0'),"
    " (2, NULL, 10000, 'grant', 'mint', 'grant:2', 'grant:2:2', 't0')",
    "INSERT INTO ledger (person_id, account, delta, reason, counterparty, entry, idem_key, table_id,"
    " round_no, created_at) VALUES"
    " (1, NULL, -100, 'ante', 'escrow', '7:1:3:0', '7:1:3:0:1', 7, 1, 't0'),"
    " (NULL, 'escrow', 100, 'ante', '1', '7:1:3:0', '7:1:3:0:escrow', 7, 1, 't0')",
]
T0 = "'2024-01-01T00:00:00.000000+00:00'"  # replaces 't0' above


def make_old_database(path: Path, version: int) -> None:
    """A database at schema ``version`` (an older one), holding the rows of ``V1_ROWS``."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        assert run_query(db, schema.migrate(target=version)) == version
        for statement in V1_ROWS:
            db.execute(statement.replace("'t0'", T0))
    finally:
        db.close()
