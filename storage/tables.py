"""Saved tables: the engine's state with its version, deadline, message ids and escrow.

Plain functions on a ``sqlite3.Connection``; those that write run inside the write transaction
that ``Store`` opens around them on the writer's thread.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from games.events import ESCROW, Paid
from storage import wallet
from storage.errors import (
    EscrowMismatch,
    InsufficientFunds,
    SeatRefused,
    StaleVersion,
    StorageError,
    TableAlreadyOpen,
    TableNotOpen,
    UnknownPerson,
    UnknownTable,
)
from storage.models import GAMES, RoundRecord, SavedTable
from storage.people import ensure_chat
from storage.timeutil import from_db, from_db_required, to_db

TABLE_COLUMNS = (
    "id, chat_id, game, state, version, deadline, message_id, dm_ids, escrow, closed, created_at, updated_at,"
    " shown"
)


def state_json(state: Mapping[str, Any]) -> str:
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"))


def table_from_row(row: sqlite3.Row) -> SavedTable:
    return SavedTable(
        id=row["id"],
        chat_id=row["chat_id"],
        game=row["game"],
        state=json.loads(row["state"]),
        version=row["version"],
        deadline=from_db(row["deadline"]),
        message_id=row["message_id"],
        dm_message_ids={int(k): int(v) for k, v in json.loads(row["dm_ids"]).items()},
        escrow=row["escrow"],
        closed=bool(row["closed"]),
        created_at=from_db_required(row["created_at"]),
        updated_at=from_db_required(row["updated_at"]),
        shown=json.loads(row["shown"]),
    )


def load_table(db: sqlite3.Connection, table_id: int) -> SavedTable | None:
    rows = db.execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE id = ?", (table_id,)).fetchall()
    return table_from_row(rows[0]) if rows else None


def open_table_of(db: sqlite3.Connection, chat_id: int) -> SavedTable | None:
    rows = db.execute(
        f"SELECT {TABLE_COLUMNS} FROM tables WHERE chat_id = ? AND closed = 0", (chat_id,)
    ).fetchall()
    return table_from_row(rows[0]) if rows else None


def open_tables(db: sqlite3.Connection) -> list[SavedTable]:
    rows = db.execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE closed = 0 ORDER BY id").fetchall()
    return [table_from_row(row) for row in rows]


def create_table(
    db: sqlite3.Connection,
    chat_id: int,
    game: str,
    state: Mapping[str, Any],
    *,
    version: int,
    deadline: datetime | None,
    message_id: int | None,
    now_text: str,
) -> SavedTable:
    """Open a table in a chat and return it as saved; ``TableAlreadyOpen`` while the chat has one."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; known: {list(GAMES)}")
    ensure_chat(db, chat_id, now_text)
    rows = db.execute("SELECT id FROM tables WHERE chat_id = ? AND closed = 0", (chat_id,)).fetchall()
    if rows:
        raise TableAlreadyOpen(chat_id, rows[0][0])
    cursor = db.execute(
        "INSERT INTO tables (chat_id, game, state, version, deadline, message_id, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chat_id,
            game,
            state_json(state),
            version,
            None if deadline is None else to_db(deadline),
            message_id,
            now_text,
            now_text,
        ),
    )
    assert cursor.lastrowid is not None
    saved = load_table(db, cursor.lastrowid)
    assert saved is not None
    return saved


def commit_action(
    db: sqlite3.Connection,
    table_id: int,
    *,
    round_no: int,
    action_seq: int,
    payments: Sequence[Paid],
    state: Mapping[str, Any],
    deadline: datetime | None,
    escrow: int | None,
    closed: bool,
    round_record: RoundRecord | None,
    now_text: str,
    seats: Mapping[int, int] | None = None,
    joined: Collection[int] = (),
) -> bool:
    """Book one action's movements and save the table; False (and no change) on a replayed batch.

    A batch is a replay when all its keys are booked already; with no payments, when the table is
    at ``action_seq`` already. The table's escrow after the action must be what the movements in
    and out of the escrow make it (``escrow`` None: take that), and 0 when the table closes.
    ``seats`` (None: left as saved) are the people seated after the action with the coins the
    table states for them, ``joined`` those who sat down with it; see :func:`save_seats`.
    """
    legs = wallet.action_legs(table_id, round_no, action_seq, payments)
    state_text = state_json(state)  # bad input fails here, before anything is written
    deadline_text = None if deadline is None else to_db(deadline)
    rows = db.execute(
        "SELECT version, escrow, closed, chat_id, game FROM tables WHERE id = ?", (table_id,)
    ).fetchall()
    if not rows:
        raise UnknownTable(table_id)
    saved = rows[0]
    if wallet.is_replay(db, legs):
        return False
    if action_seq <= saved["version"]:
        if not legs:
            return False
        raise StaleVersion(table_id, saved["version"], action_seq)
    if saved["closed"]:
        raise TableNotOpen(table_id)
    new_escrow = saved["escrow"] + sum(leg.delta for leg in legs if leg.account == ESCROW)
    if new_escrow < 0:
        raise InsufficientFunds(f"escrow of table {table_id}", saved["escrow"], new_escrow - saved["escrow"])
    if escrow is not None and escrow != new_escrow:
        raise EscrowMismatch(
            f"table {table_id}: escrow {escrow} declared, the movements make it {new_escrow}"
        )
    if closed and new_escrow != 0:
        raise EscrowMismatch(f"table {table_id} cannot close holding {new_escrow} coins in escrow")
    wallet.book(db, legs, now_text=now_text, table_id=table_id, round_no=round_no)
    if seats is not None or closed:
        save_seats(db, table_id, {} if closed else seats or {}, joined)
    db.execute(
        "UPDATE tables SET state = ?, version = ?, deadline = ?, escrow = ?, closed = ?, updated_at = ?"
        " WHERE id = ?",
        (
            state_text,
            action_seq,
            deadline_text,
            new_escrow,
            int(closed),
            now_text,
            table_id,
        ),
    )
    if round_record is not None:
        insert_round(db, table_id, saved["chat_id"], saved["game"], round_record, now_text)
    return True


def save_seats(
    db: sqlite3.Connection, table_id: int, seats: Mapping[int, int], joined: Collection[int] = ()
) -> None:
    """Replace a table's seats (after its movements are booked), refusing what the wallets do not
    back: someone sitting down (``joined``) must bring exactly their wallet's coins, nobody may be
    stated to hold more than their wallet (the daily bonus may make the wallet more, never less),
    and nobody sits at two open tables. ``SeatRefused`` otherwise, and the whole action is undone."""
    db.execute("DELETE FROM seats WHERE table_id = ?", (table_id,))
    if not seats:
        return
    marks = ",".join("?" * len(seats))
    wallets = dict(
        db.execute(f"SELECT id, balance FROM people WHERE id IN ({marks})", list(seats)).fetchall()
    )
    for person, stated in seats.items():
        held = wallets.get(person)
        if held is None:
            raise UnknownPerson(person)
        if person in joined and stated != held:
            raise SeatRefused(table_id, person, f"sits down with {stated} coins but the wallet holds {held}")
        if stated > held:
            raise SeatRefused(
                table_id, person, f"is stated to hold {stated} coins but the wallet holds {held}"
            )
    elsewhere = db.execute(
        f"SELECT person_id, table_id FROM seats WHERE person_id IN ({marks})", list(seats)
    ).fetchall()
    if elsewhere:
        person, other = elsewhere[0]
        raise SeatRefused(table_id, person, f"sits at table {other} already")
    db.executemany(
        "INSERT INTO seats (person_id, table_id, balance) VALUES (?, ?, ?)",
        [(person, table_id, stated) for person, stated in seats.items()],
    )


def insert_round(
    db: sqlite3.Connection, table_id: int, chat_id: int, game: str, record: RoundRecord, now_text: str
) -> None:
    try:
        cursor = db.execute(
            "INSERT INTO rounds (table_id, chat_id, game, round_no, commitment, deck, salt, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (table_id, chat_id, game, record.round_no, record.commitment, record.deck, record.salt, now_text),
        )
    except sqlite3.IntegrityError as exc:
        raise StorageError(f"table {table_id} has a record of round {record.round_no} already") from exc
    round_id = cursor.lastrowid
    people = [r.person_id for r in record.results]
    if len(set(people)) != len(people):
        raise StorageError(f"round {record.round_no} lists a person twice")
    if people:
        marks = ",".join("?" * len(people))
        known = {row[0] for row in db.execute(f"SELECT id FROM people WHERE id IN ({marks})", people)}
        for person in people:
            if person not in known:
                raise UnknownPerson(person)
        db.executemany(
            "INSERT INTO round_results (round_id, person_id, net, won, hand) VALUES (?, ?, ?, ?, ?)",
            [(round_id, r.person_id, r.net, int(r.won), r.hand) for r in record.results],
        )


def update_messages(
    db: sqlite3.Connection,
    table_id: int,
    *,
    message_id: int | None,
    set_message: bool,
    dm_updates: Mapping[int, int | None] | None,
    now_text: str,
    shown: Mapping[str, str | None] | None = None,
    turn: Mapping[str, object] | None = None,
    view: Mapping[str, object] | None = None,
) -> None:
    """Set the table message id and merge DM ids and shown hashes (None forgets one); ``turn``
    replaces the turn kept in the table's state (its clock moved between two actions), ``view``
    what its messages show besides (changed by no action: someone back from autopilot)."""
    patch = json.dumps({str(person): mid for person, mid in (dm_updates or {}).items()})
    cursor = db.execute(
        "UPDATE tables SET message_id = CASE WHEN ? THEN ? ELSE message_id END,"
        " dm_ids = json_patch(dm_ids, ?), shown = json_patch(shown, ?),"
        " state = CASE WHEN ? IS NULL THEN state ELSE json_set(state, '$.turn', json(?)) END,"
        " updated_at = ? WHERE id = ?",
        (
            int(set_message),
            message_id,
            patch,
            json.dumps(dict(shown or {})),
            *([None, None] if turn is None else [json.dumps(dict(turn))] * 2),
            now_text,
            table_id,
        ),
    )
    if cursor.rowcount == 0:
        raise UnknownTable(table_id)
    if view is not None:
        db.execute(
            "UPDATE tables SET state = json_set(state, '$.view', json(?)) WHERE id = ?",
            (json.dumps(dict(view), ensure_ascii=False), table_id),
        )
