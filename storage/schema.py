"""The schema as numbered migration steps, each written for SQLite and for PostgreSQL.

A step is never edited once released: a new need is a new step appended to ``MIGRATIONS``, with
its text for each database. The version reached is SQLite's ``PRAGMA user_version``, or the one
row of ``paiju_schema`` on PostgreSQL. Each step runs in its own transaction together with the
version bump, so a crash leaves the database at the previous version, never half-migrated, and
two processes starting at once cannot both apply a step (SQLite's write lock; on PostgreSQL a
transaction-scoped advisory lock).

Both databases hold the same tables, columns and constraints with the same meaning. PostgreSQL
types what SQLite leaves dynamic: ids and coins are ``bigint`` (Telegram's ids need 52 bits),
JSON columns are ``json`` (checked on the way in, kept as written), times stay ISO-8601 text.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from storage.errors import SchemaTooNew
from storage.sql import Query, run, transaction, value

V1_BASE: tuple[str, ...] = (
    """CREATE TABLE people (
        id         INTEGER PRIMARY KEY,          -- Telegram user id
        name       TEXT    NOT NULL,
        language   TEXT,
        balance    INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
        created_at TEXT    NOT NULL,
        updated_at TEXT    NOT NULL
    )""",
    """CREATE TABLE chats (
        id            INTEGER PRIMARY KEY,       -- Telegram chat id
        language      TEXT,
        turn_seconds  INTEGER NOT NULL DEFAULT 30  CHECK (turn_seconds > 0),
        lobby_seconds INTEGER NOT NULL DEFAULT 300 CHECK (lobby_seconds > 0),
        created_at    TEXT    NOT NULL,
        updated_at    TEXT    NOT NULL
    )""",
    # mint: where grants come from (minus all coins ever granted); house: the house's takings;
    # escrow: coins held by open tables. Only the escrow is bounded, like a person.
    """CREATE TABLE accounts (
        name    TEXT    PRIMARY KEY CHECK (name IN ('mint', 'house', 'escrow')),
        balance INTEGER NOT NULL DEFAULT 0,
        CHECK (name <> 'escrow' OR balance >= 0)
    )""",
    "INSERT INTO accounts (name) VALUES ('mint'), ('house'), ('escrow')",
    """CREATE TABLE tables (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id    INTEGER NOT NULL REFERENCES chats (id),
        game       TEXT    NOT NULL CHECK (game IN ('muxi', 'showhand')),
        state      TEXT    NOT NULL CHECK (json_valid(state)),
        version    INTEGER NOT NULL DEFAULT 0,
        deadline   TEXT,
        message_id INTEGER,
        dm_ids     TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(dm_ids)),
        escrow     INTEGER NOT NULL DEFAULT 0 CHECK (escrow >= 0),
        closed     INTEGER NOT NULL DEFAULT 0 CHECK (closed IN (0, 1)),
        created_at TEXT    NOT NULL,
        updated_at TEXT    NOT NULL
    )""",
    "CREATE UNIQUE INDEX tables_one_open_per_chat ON tables (chat_id) WHERE closed = 0",
    # Double entry: a movement (``entry``) is two legs, one per account, that sum to zero.
    """CREATE TABLE ledger (
        id           INTEGER PRIMARY KEY,
        person_id    INTEGER REFERENCES people (id),
        account      TEXT    REFERENCES accounts (name),
        delta        INTEGER NOT NULL CHECK (delta <> 0),
        reason       TEXT    NOT NULL,
        counterparty TEXT    NOT NULL,
        entry        TEXT    NOT NULL,
        idem_key     TEXT    NOT NULL UNIQUE,
        table_id     INTEGER REFERENCES tables (id),
        round_no     INTEGER,
        created_at   TEXT    NOT NULL,
        CHECK ((person_id IS NULL) <> (account IS NULL))
    )""",
    "CREATE INDEX ledger_person ON ledger (person_id, id) WHERE person_id IS NOT NULL",
    """CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
        BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END""",
    """CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
        BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END""",
)

V2_ALLOWED_GAMES: tuple[str, ...] = (
    """ALTER TABLE chats ADD COLUMN allowed_games TEXT NOT NULL
        DEFAULT '["muxi","showhand"]' CHECK (json_valid(allowed_games))""",
)

V3_ROUNDS: tuple[str, ...] = (
    """CREATE TABLE rounds (
        id         INTEGER PRIMARY KEY,
        table_id   INTEGER NOT NULL REFERENCES tables (id),
        chat_id    INTEGER NOT NULL REFERENCES chats (id),
        game       TEXT    NOT NULL,
        round_no   INTEGER NOT NULL,
        commitment TEXT    NOT NULL,
        deck       TEXT    NOT NULL,
        salt       TEXT    NOT NULL,
        created_at TEXT    NOT NULL,
        UNIQUE (table_id, round_no)
    )""",
    "CREATE INDEX rounds_chat ON rounds (chat_id, id)",
    """CREATE TABLE round_results (
        round_id  INTEGER NOT NULL REFERENCES rounds (id),
        person_id INTEGER NOT NULL REFERENCES people (id),
        net       INTEGER NOT NULL,
        won       INTEGER NOT NULL CHECK (won IN (0, 1)),
        hand      TEXT,
        PRIMARY KEY (round_id, person_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX round_results_person ON round_results (person_id)",
    # For the chat leaderboard (ledger rows of a chat's tables) and the per-table escrow check.
    "CREATE INDEX ledger_table ON ledger (table_id, person_id) WHERE table_id IS NOT NULL",
    "CREATE INDEX tables_chat ON tables (chat_id, id)",
)

# Who sits where, with the coins their table states for them: a person sits at one open table at a
# time (the primary key), and a seat is backed by the wallet (``tables.save_seats``).
V4_SEATS: tuple[str, ...] = (
    """CREATE TABLE seats (
        person_id INTEGER PRIMARY KEY REFERENCES people (id),
        table_id  INTEGER NOT NULL REFERENCES tables (id),
        balance   INTEGER NOT NULL CHECK (balance >= 0)
    )""",
    "CREATE INDEX seats_table ON seats (table_id)",
)

# What each message a table keeps up shows (a hash per message: "table", or a person's id for their
# DM), so a restarted bot sends only what changed while it was down.
V5_SHOWN: tuple[str, ...] = (
    "ALTER TABLE tables ADD COLUMN shown TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(shown))",
)

# A chat's turn and lobby seconds become NULL until its admins choose them, so the operator's
# PAIJU_TURN_SECONDS / PAIJU_LOBBY_SECONDS apply to every other chat (the old defaults, 30 and 300,
# become NULL: nobody could tell them from a choice). SQLite cannot drop NOT NULL in place: the table
# is rebuilt. With foreign keys on, dropping it counts the tables and rounds pointing at it as
# violations, deferred to the commit; re-inserting every row under the same name counts them back,
# so a row left out still fails the commit.
V6_CHOSEN_SECONDS: tuple[str, ...] = (
    "PRAGMA defer_foreign_keys = ON",  # for this transaction only
    "CREATE TEMP TABLE chats_v5 AS SELECT * FROM chats",
    "DROP TABLE chats",
    """CREATE TABLE chats (
        id            INTEGER PRIMARY KEY,       -- Telegram chat id
        language      TEXT,
        turn_seconds  INTEGER CHECK (turn_seconds > 0),   -- NULL: the operator's default
        lobby_seconds INTEGER CHECK (lobby_seconds > 0),  -- NULL: the operator's default
        created_at    TEXT    NOT NULL,
        updated_at    TEXT    NOT NULL,
        allowed_games TEXT    NOT NULL DEFAULT '["muxi","showhand"]' CHECK (json_valid(allowed_games))
    )""",
    """INSERT INTO chats (id, language, turn_seconds, lobby_seconds, created_at, updated_at, allowed_games)
        SELECT id, language, NULLIF(turn_seconds, 30), NULLIF(lobby_seconds, 300), created_at, updated_at,
               allowed_games
        FROM temp.chats_v5""",
    "DROP TABLE temp.chats_v5",
)

# The updates taken from Telegram, so one delivered twice (a lost acknowledgement, a restart) is
# handled once (``storage/updates.py``).
V7_UPDATES_TAKEN: tuple[str, ...] = (
    """CREATE TABLE updates_taken (
        update_id INTEGER PRIMARY KEY,           -- Telegram's update_id
        taken_at  TEXT    NOT NULL
    )""",
    "CREATE INDEX updates_taken_at ON updates_taken (taken_at)",
)

# PostgreSQL's text of the same steps (its first release came with version 7: the steps are
# written as they would have been, so both databases share one numbered list).
PG_V1_BASE: tuple[str, ...] = (
    """CREATE TABLE people (
        id         bigint  PRIMARY KEY,          -- Telegram user id
        name       text    NOT NULL,
        language   text,
        balance    bigint  NOT NULL DEFAULT 0 CHECK (balance >= 0),
        created_at text    NOT NULL,
        updated_at text    NOT NULL
    )""",
    """CREATE TABLE chats (
        id            bigint  PRIMARY KEY,       -- Telegram chat id
        language      text,
        turn_seconds  integer NOT NULL DEFAULT 30  CHECK (turn_seconds > 0),
        lobby_seconds integer NOT NULL DEFAULT 300 CHECK (lobby_seconds > 0),
        created_at    text    NOT NULL,
        updated_at    text    NOT NULL
    )""",
    """CREATE TABLE accounts (
        name    text    PRIMARY KEY CHECK (name IN ('mint', 'house', 'escrow')),
        balance bigint  NOT NULL DEFAULT 0,
        CHECK (name <> 'escrow' OR balance >= 0)
    )""",
    "INSERT INTO accounts (name) VALUES ('mint'), ('house'), ('escrow')",
    """CREATE TABLE tables (
        id         bigint  GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        chat_id    bigint  NOT NULL REFERENCES chats (id),
        game       text    NOT NULL CHECK (game IN ('muxi', 'showhand')),
        state      json    NOT NULL,
        version    bigint  NOT NULL DEFAULT 0,
        deadline   text,
        message_id bigint,
        dm_ids     json    NOT NULL DEFAULT '{}',
        escrow     bigint  NOT NULL DEFAULT 0 CHECK (escrow >= 0),
        closed     integer NOT NULL DEFAULT 0 CHECK (closed IN (0, 1)),
        created_at text    NOT NULL,
        updated_at text    NOT NULL
    )""",
    "CREATE UNIQUE INDEX tables_one_open_per_chat ON tables (chat_id) WHERE closed = 0",
    """CREATE TABLE ledger (
        id           bigint  GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        person_id    bigint  REFERENCES people (id),
        account      text    REFERENCES accounts (name),
        delta        bigint  NOT NULL CHECK (delta <> 0),
        reason       text    NOT NULL,
        counterparty text    NOT NULL,
        entry        text    NOT NULL,
        idem_key     text    NOT NULL UNIQUE,
        table_id     bigint  REFERENCES tables (id),
        round_no     integer,
        created_at   text    NOT NULL,
        CHECK ((person_id IS NULL) <> (account IS NULL))
    )""",
    "CREATE INDEX ledger_person ON ledger (person_id, id) WHERE person_id IS NOT NULL",
    """CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'ledger is append-only' USING ERRCODE = 'integrity_constraint_violation';
        END $$""",
    """CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
        FOR EACH ROW EXECUTE FUNCTION ledger_append_only()""",
    """CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
        FOR EACH ROW EXECUTE FUNCTION ledger_append_only()""",
)
PG_V2_ALLOWED_GAMES: tuple[str, ...] = (
    """ALTER TABLE chats ADD COLUMN allowed_games json NOT NULL DEFAULT '["muxi","showhand"]'""",
)
PG_V3_ROUNDS: tuple[str, ...] = (
    """CREATE TABLE rounds (
        id         bigint  GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        table_id   bigint  NOT NULL REFERENCES tables (id),
        chat_id    bigint  NOT NULL REFERENCES chats (id),
        game       text    NOT NULL,
        round_no   integer NOT NULL,
        commitment text    NOT NULL,
        deck       text    NOT NULL,
        salt       text    NOT NULL,
        created_at text    NOT NULL,
        UNIQUE (table_id, round_no)
    )""",
    "CREATE INDEX rounds_chat ON rounds (chat_id, id)",
    """CREATE TABLE round_results (
        round_id  bigint  NOT NULL REFERENCES rounds (id),
        person_id bigint  NOT NULL REFERENCES people (id),
        net       bigint  NOT NULL,
        won       integer NOT NULL CHECK (won IN (0, 1)),
        hand      text,
        PRIMARY KEY (round_id, person_id)
    )""",
    "CREATE INDEX round_results_person ON round_results (person_id)",
    "CREATE INDEX ledger_table ON ledger (table_id, person_id) WHERE table_id IS NOT NULL",
    "CREATE INDEX tables_chat ON tables (chat_id, id)",
)
PG_V4_SEATS: tuple[str, ...] = (
    """CREATE TABLE seats (
        person_id bigint  PRIMARY KEY REFERENCES people (id),
        table_id  bigint  NOT NULL REFERENCES tables (id),
        balance   bigint  NOT NULL CHECK (balance >= 0)
    )""",
    "CREATE INDEX seats_table ON seats (table_id)",
)
PG_V5_SHOWN: tuple[str, ...] = ("ALTER TABLE tables ADD COLUMN shown json NOT NULL DEFAULT '{}'",)
PG_V6_CHOSEN_SECONDS: tuple[str, ...] = (
    """ALTER TABLE chats ALTER COLUMN turn_seconds DROP NOT NULL, ALTER COLUMN turn_seconds DROP DEFAULT,
        ALTER COLUMN lobby_seconds DROP NOT NULL, ALTER COLUMN lobby_seconds DROP DEFAULT""",
    "UPDATE chats SET turn_seconds = NULLIF(turn_seconds, 30), lobby_seconds = NULLIF(lobby_seconds, 300)",
)
PG_V7_UPDATES_TAKEN: tuple[str, ...] = (
    """CREATE TABLE updates_taken (
        update_id bigint  PRIMARY KEY,           -- Telegram's update_id
        taken_at  text    NOT NULL
    )""",
    "CREATE INDEX updates_taken_at ON updates_taken (taken_at)",
)


@dataclass(frozen=True, slots=True)
class Step:
    """One migration step: its statements on each database."""

    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


# Several workers on one PostgreSQL database (``storage/inbox.py``, ``storage/partitions.py``):
# each update waits in the inbox until the worker owning its chat's partition has taken it; a
# partition's owner and epoch fence every write to its tables. SQLite (one process) keeps the same
# tables, empty, so both databases share one schema.
V8_WORKERS: tuple[str, ...] = (
    """CREATE TABLE inbox (
        update_id   INTEGER PRIMARY KEY,         -- Telegram's update_id
        partition   INTEGER NOT NULL,
        body        TEXT    NOT NULL,            -- the update's JSON, as Telegram sent it
        received_at TEXT    NOT NULL
    )""",
    "CREATE INDEX inbox_partition ON inbox (partition, update_id)",
    """CREATE TABLE partitions (
        partition INTEGER PRIMARY KEY,
        owner     TEXT,                          -- the worker that took it last
        address   TEXT,                          -- where that worker's HTTP server is reached
        epoch     INTEGER NOT NULL DEFAULT 0,    -- how many times it was taken
        taken_at  TEXT
    )""",
)
PG_V8_WORKERS: tuple[str, ...] = (
    """CREATE TABLE inbox (
        update_id   bigint  PRIMARY KEY,
        partition   integer NOT NULL,
        body        text    NOT NULL,
        received_at text    NOT NULL
    )""",
    "CREATE INDEX inbox_partition ON inbox (partition, update_id)",
    """CREATE TABLE partitions (
        partition integer PRIMARY KEY,
        owner     text,
        address   text,
        epoch     bigint  NOT NULL DEFAULT 0,
        taken_at  text
    )""",
)

# A worker is alive while it renews its lease (``storage/partitions.py``): a stopped, hung or frozen
# worker keeps its connection (and its advisory locks) open, but not its lease; another worker then
# ends its sessions, and with them its locks (``bot/cluster/workers.py``). A group's requests of the last
# minute go with its table to the next worker (``chat_budgets``). Empty on SQLite, as above.
V9_WORKER_LEASES: tuple[str, ...] = (
    """CREATE TABLE workers (
        name        TEXT    PRIMARY KEY,         -- the worker's name (partitions.owner)
        pid         INTEGER NOT NULL,            -- the server's process of its own connection
        alive_until TEXT    NOT NULL             -- its lease, by the database's clock
    )""",
    # 1 once its last owner let it go cleanly (everything sent and saved): no orphan search then
    "ALTER TABLE partitions ADD COLUMN handed_over INTEGER NOT NULL DEFAULT 0",
    # A press saved with its action and not answered yet: its query, and its table's chat
    "ALTER TABLE updates_taken ADD COLUMN query_id TEXT",
    "ALTER TABLE updates_taken ADD COLUMN chat_id INTEGER",
    """CREATE TABLE chat_budgets (
        chat_id  INTEGER PRIMARY KEY,            -- a group whose table moved to another worker
        sent     TEXT    NOT NULL                -- JSON: its last minute's requests [[time, share]]
    )""",
)
PG_V9_WORKER_LEASES: tuple[str, ...] = (
    """CREATE TABLE workers (
        name        text        PRIMARY KEY,
        pid         integer     NOT NULL,
        alive_until timestamptz NOT NULL
    )""",
    "ALTER TABLE partitions ADD COLUMN handed_over integer NOT NULL DEFAULT 0",
    "ALTER TABLE updates_taken ADD COLUMN query_id text",
    "ALTER TABLE updates_taken ADD COLUMN chat_id bigint",
    """CREATE TABLE chat_budgets (
        chat_id  bigint PRIMARY KEY,
        sent     text   NOT NULL
    )""",
)

# What the bot learnt of someone's DM (issue 51): 1 once Telegram refused a message to it (they never
# opened it, or blocked the bot), 0 again once they open it. One fact for replies, tables and the
# Mini App, and for every worker: learnt once, never tried twice.
V10_DM_REFUSED: tuple[str, ...] = ("ALTER TABLE people ADD COLUMN dm_refused INTEGER NOT NULL DEFAULT 0",)
PG_V10_DM_REFUSED: tuple[str, ...] = ("ALTER TABLE people ADD COLUMN dm_refused integer NOT NULL DEFAULT 0",)

# The cards a round's show-down showed of each person (issue 49, the 总结算's best hand: the games
# rank hands by their cards, not by their kind's name alone): canonical tokens (``AS 10H BJ``),
# NULL where none were shown (a fold, an escape) and in rounds recorded before.
V11_ROUND_CARDS: tuple[str, ...] = ("ALTER TABLE round_results ADD COLUMN cards TEXT",)
PG_V11_ROUND_CARDS: tuple[str, ...] = ("ALTER TABLE round_results ADD COLUMN cards text",)
# A round's actions, so any finished round can be replayed (issue 49, 回放): each action applied
# while a round is under way (and the one that started it), saved with the action in one
# transaction. ``seq`` is the table's version after it; ``before`` is the table as saved just before
# the round's first action (its engine, and its view: the names), NULL for every later one. The
# deck is the round's record's (``rounds``): the first action is kept without it. Rounds played
# before this step have no rows: their replay says so.
V12_ROUND_MOVES: tuple[str, ...] = (
    """CREATE TABLE round_moves (
        table_id INTEGER NOT NULL REFERENCES tables (id),
        round_no INTEGER NOT NULL,
        seq      INTEGER NOT NULL,
        action   TEXT    NOT NULL CHECK (json_valid(action)),
        before   TEXT    CHECK (before IS NULL OR json_valid(before)),
        PRIMARY KEY (table_id, round_no, seq)
    ) WITHOUT ROWID""",
)
PG_V12_ROUND_MOVES: tuple[str, ...] = (
    """CREATE TABLE round_moves (
        table_id bigint  NOT NULL REFERENCES tables (id),
        round_no integer NOT NULL,
        seq      bigint  NOT NULL,
        action   json    NOT NULL,
        before   json,
        PRIMARY KEY (table_id, round_no, seq)
    )""",
)
# A chat's pause after a round's results before the bot readies its auto-ready and autopilot (托管)
# people for the next one (issue 49, point 4): NULL until its admins choose one (the operator's
# default, ``PAIJU_PAUSE_SECONDS``), 0 for none.
V13_PAUSE_SECONDS: tuple[str, ...] = (
    "ALTER TABLE chats ADD COLUMN pause_seconds INTEGER CHECK (pause_seconds >= 0)",
)
PG_V13_PAUSE_SECONDS: tuple[str, ...] = (
    "ALTER TABLE chats ADD COLUMN pause_seconds integer CHECK (pause_seconds >= 0)",
)


MIGRATIONS: tuple[Step, ...] = (
    Step(V1_BASE, PG_V1_BASE),
    Step(V2_ALLOWED_GAMES, PG_V2_ALLOWED_GAMES),
    Step(V3_ROUNDS, PG_V3_ROUNDS),
    Step(V4_SEATS, PG_V4_SEATS),
    Step(V5_SHOWN, PG_V5_SHOWN),
    Step(V6_CHOSEN_SECONDS, PG_V6_CHOSEN_SECONDS),
    Step(V7_UPDATES_TAKEN, PG_V7_UPDATES_TAKEN),
    Step(V8_WORKERS, PG_V8_WORKERS),
    Step(V9_WORKER_LEASES, PG_V9_WORKER_LEASES),
    Step(V10_DM_REFUSED, PG_V10_DM_REFUSED),
    Step(V11_ROUND_CARDS, PG_V11_ROUND_CARDS),
    Step(V12_ROUND_MOVES, PG_V12_ROUND_MOVES),
    Step(V13_PAUSE_SECONDS, PG_V13_PAUSE_SECONDS),
)
"""Step ``i`` (0-based) takes the database from version ``i`` to ``i + 1``."""

LATEST = len(MIGRATIONS)
MIGRATION_LOCK = 0x7061_696A  # "paij": PostgreSQL's advisory lock key for migrations


def file_version(db: sqlite3.Connection) -> int:
    """The schema version of an SQLite file, on a plain connection (backups, the check)."""
    row = db.execute("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def schema_version() -> Query[int]:
    """The schema version reached (0: an empty database)."""
    if not (yield from value("SELECT 1", postgres="SELECT to_regclass('paiju_schema') IS NOT NULL")):
        return 0  # a PostgreSQL database never migrated (an SQLite file has its version from birth)
    found = yield from value(
        "PRAGMA user_version",
        postgres="SELECT version FROM paiju_schema",
    )
    return int(found or 0)


def set_version(version: int) -> Query[int]:
    # SQLite: user_version lives in the file header, which the transaction covers.
    return (
        yield from run(
            f"PRAGMA user_version = {int(version)}",
            postgres=f"UPDATE paiju_schema SET version = {int(version)}",
        )
    )


def _begin() -> Query[None]:
    """A migration step's transaction, held against another process migrating at the same time."""
    yield from run("BEGIN IMMEDIATE", postgres="BEGIN")
    yield from run("", postgres=f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
    yield from run("", postgres="CREATE TABLE IF NOT EXISTS paiju_schema (version integer NOT NULL)")
    yield from run(
        "", postgres="INSERT INTO paiju_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM paiju_schema)"
    )


def migrate(target: int = LATEST) -> Query[int]:
    """Bring the database up to ``target`` in place, one transaction per step; return the version.

    The connection must be in autocommit mode (SQLite: ``isolation_level=None``). Refuses a
    database newer than this code (``SchemaTooNew``) rather than guessing what it holds.
    """
    if not 0 <= target <= LATEST:
        raise ValueError(f"no schema version {target}; the latest is {LATEST}")
    while (reached := (yield from transaction(_step(target), begin=_begin()))) is None:
        pass  # one step taken: the next, in a transaction of its own
    return reached


def _step(target: int) -> Query[int | None]:
    """The next step towards ``target``; the version if there is none to take."""
    version = yield from schema_version()
    if version > LATEST:
        raise SchemaTooNew(version, LATEST)
    if version >= target:
        return version
    for sqlite_text, postgres_text in _paired(MIGRATIONS[version]):
        yield from run(sqlite_text, postgres=postgres_text)
    yield from set_version(version + 1)
    return None


def _paired(step: Step) -> list[tuple[str, str]]:
    """A step's statements as (SQLite text, PostgreSQL text) pairs; a side with fewer runs nothing."""
    count = max(len(step.sqlite), len(step.postgres))
    return [
        (
            step.sqlite[i] if i < len(step.sqlite) else "",
            step.postgres[i] if i < len(step.postgres) else "",
        )
        for i in range(count)
    ]
