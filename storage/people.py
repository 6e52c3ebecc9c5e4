"""People and chats: who they are, their language, a chat's settings.

Storage functions (``storage/sql.py``); ``Store`` runs the write functions inside its write
transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from storage.models import GAMES, ChatSettings, Person
from storage.partitions import Fence, fenced
from storage.sql import Query, first, run
from storage.timeutil import from_db_required

PERSON_COLUMNS = "id, name, language, balance, created_at, dm_refused"
CHAT_COLUMNS = "id, language, turn_seconds, lobby_seconds, allowed_games, pause_seconds"


def person_from_row(row: Any) -> Person:
    return Person(
        id=row["id"],
        name=row["name"],
        language=row["language"],
        balance=row["balance"],
        created_at=from_db_required(row["created_at"]),
        dm_refused=bool(row["dm_refused"]),
    )


def chat_from_row(row: Any) -> ChatSettings:
    return ChatSettings(
        chat_id=row["id"],
        language=row["language"],
        turn_seconds=row["turn_seconds"],
        lobby_seconds=row["lobby_seconds"],
        allowed_games=tuple(json.loads(row["allowed_games"])),
        pause_seconds=row["pause_seconds"],
    )


def get_person(person_id: int) -> Query[Person | None]:
    row = yield from first(f"SELECT {PERSON_COLUMNS} FROM people WHERE id = ?", (person_id,))
    return None if row is None else person_from_row(row)


def insert_person(person_id: int, name: str, language: str | None, now_text: str) -> Query[None]:
    yield from run(
        "INSERT INTO people (id, name, language, balance, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)",
        (person_id, name, language, now_text, now_text),
    )


def rename_person(person_id: int, name: str, language: str | None, now_text: str) -> Query[None]:
    """Update the display name, and the language when one is given (None keeps the stored one)."""
    yield from run(
        "UPDATE people SET name = ?, language = COALESCE(?, language), updated_at = ? WHERE id = ?",
        (name, language, now_text, person_id),
    )


def set_dm_refused(person_id: int, refused: bool) -> Query[None]:
    """What Telegram said of ``person_id``'s DM (a person never seen is not created for it)."""
    yield from run("UPDATE people SET dm_refused = ? WHERE id = ?", (int(refused), person_id))


def games_json(games: Iterable[str]) -> str:
    chosen = tuple(dict.fromkeys(games))
    unknown = [g for g in chosen if g not in GAMES]
    if unknown:
        raise ValueError(f"unknown games {unknown}; known: {list(GAMES)}")
    return json.dumps(list(chosen))


def get_chat(chat_id: int) -> Query[ChatSettings | None]:
    row = yield from first(f"SELECT {CHAT_COLUMNS} FROM chats WHERE id = ?", (chat_id,))
    return None if row is None else chat_from_row(row)


def ensure_chat(chat_id: int, now_text: str) -> Query[None]:
    yield from run(
        "INSERT INTO chats (id, created_at, updated_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
        (chat_id, now_text, now_text),
    )


def update_chat(chat_id: int, changes: dict[str, object], now_text: str) -> Query[None]:
    """Set the given columns (names checked by the caller) of an existing chat row."""
    if not changes:
        return
    assignments = ", ".join(f"{column} = ?" for column in changes)
    yield from run(
        f"UPDATE chats SET {assignments}, updated_at = ? WHERE id = ?",
        (*changes.values(), now_text, chat_id),
    )


def migrate_chat(old: int, new: int, now_text: str, fence: Fence | None = None) -> Query[None]:
    """A group became a supergroup (a new chat id): its settings, tables and rounds follow it
    (fenced by the old chat's partition: only the worker holding its table moves it)."""
    yield from fenced(fence, old)
    yield from run(
        """
        INSERT INTO chats
            (id, language, turn_seconds, lobby_seconds, allowed_games, pause_seconds, created_at, updated_at)
        SELECT CAST(? AS bigint), language, turn_seconds, lobby_seconds, allowed_games, pause_seconds,
            created_at, ?
        FROM chats WHERE id = ?
        ON CONFLICT (id) DO NOTHING
        """,
        (new, now_text, old),
    )
    yield from ensure_chat(new, now_text)
    yield from run("UPDATE tables SET chat_id = ?, updated_at = ? WHERE chat_id = ?", (new, now_text, old))
    yield from run("UPDATE rounds SET chat_id = ? WHERE chat_id = ?", (new, old))
