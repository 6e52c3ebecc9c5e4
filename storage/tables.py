"""Saved tables: the engine's state with its version, deadline, message ids and escrow.

Storage functions (``storage/sql.py``); those that write run inside the write transaction that
``Store`` opens around them.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from games.events import ESCROW, Paid
from storage import updates, wallet
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
    UpdateTaken,
)
from storage.jsontext import compact_json
from storage.models import GAMES, RoundMoves, RoundRecord, SavedTable
from storage.partitions import PARTITION_SQL, Fence, fenced
from storage.people import ensure_chat
from storage.sql import Query, Violation, first, first_to_change, many, marks, rows, run, value
from storage.timeutil import from_db, from_db_required, to_db

TABLE_COLUMNS = (
    "id, chat_id, game, state, version, deadline, message_id, dm_ids, escrow, closed, created_at, updated_at,"
    " shown"
)


def table_from_row(row: Any) -> SavedTable:
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


def load_table(table_id: int) -> Query[SavedTable | None]:
    row = yield from first(f"SELECT {TABLE_COLUMNS} FROM tables WHERE id = ?", (table_id,))
    return None if row is None else table_from_row(row)


def chat_of(table_id: int) -> Query[int | None]:
    """The chat a table is (or was) in."""
    found = yield from value("SELECT chat_id FROM tables WHERE id = ?", (table_id,))
    return None if found is None else int(found)


def open_table_of(chat_id: int) -> Query[SavedTable | None]:
    row = yield from first(f"SELECT {TABLE_COLUMNS} FROM tables WHERE chat_id = ? AND closed = 0", (chat_id,))
    return None if row is None else table_from_row(row)


def open_tables() -> Query[list[SavedTable]]:
    found = yield from rows(f"SELECT {TABLE_COLUMNS} FROM tables WHERE closed = 0 ORDER BY id")
    return [table_from_row(row) for row in found]


def open_tables_in(partitions: Collection[int], count: int) -> Query[list[SavedTable]]:
    """The open tables of the chats in these partitions (``storage/partitions.py``)."""
    if not partitions:
        return []
    found = yield from rows(
        f"SELECT {TABLE_COLUMNS} FROM tables WHERE closed = 0"
        f" AND {PARTITION_SQL} IN ({marks(len(partitions))}) ORDER BY id",
        (count, count, count, *sorted(partitions)),
    )
    return [table_from_row(row) for row in found]


def create_table(
    chat_id: int,
    game: str,
    state: str,
    *,
    version: int,
    deadline: datetime | None,
    message_id: int | None,
    now_text: str,
    fence: Fence | None = None,
) -> Query[SavedTable]:
    """Open a table in a chat and return it as saved; ``TableAlreadyOpen`` while the chat has one.
    ``state``: its :func:`~storage.jsontext.compact_json`."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; known: {list(GAMES)}")
    yield from fenced(fence, chat_id)
    yield from ensure_chat(chat_id, now_text)
    held = yield from value("SELECT id FROM tables WHERE chat_id = ? AND closed = 0", (chat_id,))
    if held is not None:
        raise TableAlreadyOpen(chat_id, held)
    table_id = yield from value(
        "INSERT INTO tables (chat_id, game, state, version, deadline, message_id, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            chat_id,
            game,
            state,
            version,
            None if deadline is None else to_db(deadline),
            message_id,
            now_text,
            now_text,
        ),
    )
    saved = yield from load_table(table_id)
    assert saved is not None
    return saved


def commit_action(
    table_id: int,
    *,
    round_no: int,
    action_seq: int,
    payments: Sequence[Paid],
    state: str,
    deadline: datetime | None,
    escrow: int | None,
    closed: bool,
    round_record: RoundRecord | None,
    now_text: str,
    seats: Mapping[int, int] | None = None,
    joined: Collection[int] = (),
    fence: Fence | None = None,
    taken: Sequence[int] = (),
    messages: Mapping[str, Any] | None = None,
    owed: str | None = None,
    move: tuple[str, str | None] | None = None,
) -> Query[bool]:
    """Book one action's movements and save the table (``state``: its
    :func:`~storage.jsontext.compact_json`); False (and no change) on a replayed batch.
    ``messages``: an :func:`update_messages`' arguments written in the same transaction, even for a
    replayed batch (its columns are none of the action's).

    A batch is a replay when all its keys are booked already; with no payments, when the table is
    at ``action_seq`` already. The table's escrow after the action must be what the movements in
    and out of the escrow make it (``escrow`` None: take that), and 0 when the table closes.
    ``seats`` (None: left as saved) are the people seated after the action with the coins the
    table states for them, ``joined`` those who sat down with it; see :func:`save_seats`.
    ``taken``: the updates this action answers, marked taken in the same transaction
    (``storage/updates.py``); ``UpdateTaken`` and no change if one was taken already. ``owed``: the
    first is a press whose answer is still to come (its query's id). ``move``: the action kept
    for the round's replay (its JSON, and for a round's first action the table's JSON before it),
    under ``round_no`` and ``action_seq``.
    """
    legs = wallet.action_legs(table_id, round_no, action_seq, payments)
    deadline_text = None if deadline is None else to_db(deadline)
    saved = yield from first_to_change(
        "SELECT version, escrow, closed, chat_id, game FROM tables WHERE id = ?", (table_id,)
    )
    if saved is None:
        raise UnknownTable(table_id)
    yield from fenced(fence, saved["chat_id"])
    if messages is not None:
        yield from update_messages(table_id, **messages)
    if (yield from wallet.is_replay(legs)):
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
    owing = None if owed is None else (owed, saved["chat_id"])
    if taken and (yield from updates.remember(taken, now_text, fence, owing)) < len(taken):
        raise UpdateTaken(taken)
    yield from wallet.book(legs, now_text=now_text, table_id=table_id, round_no=round_no)
    if seats is not None or closed:
        yield from save_seats(table_id, {} if closed else seats or {}, joined)
    yield from run(
        "UPDATE tables SET state = ?, version = ?, deadline = ?, escrow = ?, closed = ?, updated_at = ?"
        " WHERE id = ?",
        (
            state,
            action_seq,
            deadline_text,
            new_escrow,
            int(closed),
            now_text,
            table_id,
        ),
    )
    if move is not None:
        yield from run(
            "INSERT INTO round_moves (table_id, round_no, seq, action, before) VALUES (?, ?, ?, ?, ?)",
            (table_id, round_no, action_seq, *move),
        )
    if round_record is not None:
        yield from insert_round(table_id, saved["chat_id"], saved["game"], round_record, now_text)
    return True


def round_moves(table_id: int, round_no: int) -> Query[RoundMoves | None]:
    """A round's kept actions in order, and the table before the first; None when none were kept
    (a round played before they were) or the first is missing."""
    found = yield from rows(
        "SELECT action, before FROM round_moves WHERE table_id = ? AND round_no = ? ORDER BY seq",
        (table_id, round_no),
    )
    if not found or found[0]["before"] is None:
        return None
    return RoundMoves(before=_json(found[0]["before"]), actions=tuple(_json(row["action"]) for row in found))


def _json(text: Any) -> Any:
    """A JSON column's value (SQLite hands back its text; so does asyncpg for ``json``)."""
    return json.loads(text) if isinstance(text, str) else text


def save_seats(table_id: int, seats: Mapping[int, int], joined: Collection[int] = ()) -> Query[None]:
    """Replace a table's seats (after its movements are booked), refusing what the wallets do not
    back: someone sitting down (``joined``) must bring exactly their wallet's coins, nobody may be
    stated to hold more than their wallet (the daily bonus may make the wallet more, never less),
    and nobody sits at two open tables. ``SeatRefused`` otherwise, and the whole action is undone."""
    yield from run("DELETE FROM seats WHERE table_id = ?", (table_id,))
    if not seats:
        return
    wanted = marks(len(seats))
    wallets = dict((yield from rows(f"SELECT id, balance FROM people WHERE id IN ({wanted})", list(seats))))
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
    elsewhere = yield from rows(
        f"SELECT person_id, table_id FROM seats WHERE person_id IN ({wanted})", list(seats)
    )
    if elsewhere:
        person, other = elsewhere[0]
        raise SeatRefused(table_id, person, f"sits at table {other} already")
    try:
        yield from many(
            "INSERT INTO seats (person_id, table_id, balance) VALUES (?, ?, ?)",
            [(person, table_id, stated) for person, stated in seats.items()],
        )
    except Violation as exc:  # seated at another table by a write side by side (PostgreSQL)
        person = min(joined or seats)
        raise SeatRefused(table_id, person, "sits at another table already") from exc


def insert_round(table_id: int, chat_id: int, game: str, record: RoundRecord, now_text: str) -> Query[None]:
    try:
        round_id = yield from value(
            "INSERT INTO rounds (table_id, chat_id, game, round_no, commitment, deck, salt, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (table_id, chat_id, game, record.round_no, record.commitment, record.deck, record.salt, now_text),
        )
    except Violation as exc:
        raise StorageError(f"table {table_id} has a record of round {record.round_no} already") from exc
    people = [r.person_id for r in record.results]
    if len(set(people)) != len(people):
        raise StorageError(f"round {record.round_no} lists a person twice")
    if people:
        known = {
            row[0]
            for row in (yield from rows(f"SELECT id FROM people WHERE id IN ({marks(len(people))})", people))
        }
        for person in people:
            if person not in known:
                raise UnknownPerson(person)
        yield from many(
            "INSERT INTO round_results (round_id, person_id, net, won, hand, cards)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(round_id, r.person_id, r.net, int(r.won), r.hand, r.cards) for r in record.results],
        )


def join_message_updates(queued: dict[str, Any], later: dict[str, Any]) -> None:
    """Make ``queued`` (the keyword arguments of an :func:`update_messages` without ``turn`` or
    ``view``) have the effect of itself and then ``later`` (another such). No other write changes
    these columns but a table's move to another chat, which changes none of them: such updates
    commute with every other write of the table."""
    if later["set_message"]:
        queued["message_id"], queued["set_message"] = later["message_id"], True
    for name in ("dm_updates", "shown"):
        if later.get(name):
            queued[name] = {**(queued.get(name) or {}), **later[name]}
    queued["now_text"], queued["fence"] = later["now_text"], later["fence"]


def update_messages(
    table_id: int,
    *,
    message_id: int | None,
    set_message: bool,
    dm_updates: Mapping[int, int | None] | None,
    now_text: str,
    shown: Mapping[str, str | None] | None = None,
    turn: Mapping[str, object] | None = None,
    view: Mapping[str, object] | None = None,
    fence: Fence | None = None,
) -> Query[None]:
    """Set the table message id and merge DM ids and shown hashes (None forgets one); ``turn``
    replaces the turn kept in the table's state (its clock moved between two actions), ``view``
    what its messages show besides (changed by no action: someone back from autopilot)."""
    state = None  # (None: as saved)
    if fence is not None or turn is not None or view is not None:
        saved = yield from first_to_change("SELECT chat_id, state FROM tables WHERE id = ?", (table_id,))
        if saved is None:
            raise UnknownTable(table_id)
        yield from fenced(fence, saved["chat_id"])
        if turn is not None or view is not None:
            parsed = json.loads(saved["state"])
            if turn is not None:
                parsed["turn"] = dict(turn)
            if view is not None:
                parsed["view"] = dict(view)
            state = compact_json(parsed)
    # The DM ids and hashes are merged by the database (a JSON merge patch: a None removes a key;
    # jsonb's || replaces keys, and none is ever saved as a value).
    patched = yield from run(
        "UPDATE tables SET message_id = CASE WHEN ? = 1 THEN ? ELSE message_id END,"
        " dm_ids = json_patch(dm_ids, ?), shown = json_patch(shown, ?), state = COALESCE(?, state),"
        " updated_at = ? WHERE id = ?",
        (
            int(set_message),
            message_id,
            json.dumps({str(person): mid for person, mid in (dm_updates or {}).items()}),
            json.dumps(dict(shown or {}), ensure_ascii=False),
            state,
            now_text,
            table_id,
        ),
        postgres="UPDATE tables SET message_id = CASE WHEN ? = 1 THEN ? ELSE message_id END,"
        " dm_ids = jsonb_strip_nulls(dm_ids::jsonb || ?::jsonb)::json,"
        " shown = jsonb_strip_nulls(shown::jsonb || ?::jsonb)::json, state = COALESCE(?, state),"
        " updated_at = ? WHERE id = ?",
    )
    if not patched:
        raise UnknownTable(table_id)
