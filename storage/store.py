"""The Store: one SQLite file, one writer connection behind an asyncio.Lock, one reader connection.

Every write is a ``BEGIN IMMEDIATE`` transaction on the writer, taken under the lock, so writes
are serialized in this process and across processes (the busy timeout waits for another one).
Reads go to their own connection: in WAL mode they see the last committed state and never wait
for a write in progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any
from zoneinfo import ZoneInfo

import aiosqlite

from games.events import Paid
from storage import people, queries, tables, wallet
from storage.check import CheckReport, check_database
from storage.errors import UnknownPerson
from storage.models import (
    ChatSettings,
    DailyClaim,
    LeaderRow,
    LedgerEntry,
    Person,
    PersonStats,
    RoundRecord,
    SavedRound,
    SavedTable,
)
from storage.schema import migrate
from storage.timeutil import Clock, to_db, utc_now

BUSY_TIMEOUT_MS = 5000
_UNSET: Any = object()


def default_path() -> str:
    """``$PAIJU_DB``, else ``paiju.sqlite3`` in the working directory."""
    return os.environ.get("PAIJU_DB") or "paiju.sqlite3"


async def _connect(path: str, *, writer: bool) -> aiosqlite.Connection:
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        db.row_factory = sqlite3.Row
        await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await db.execute("PRAGMA foreign_keys = ON")
        if writer:
            await db.execute("PRAGMA journal_mode = WAL")
            # FULL: a commit survives a power cut too, not just a crash of the process.
            await db.execute("PRAGMA synchronous = FULL")
        else:
            await db.execute("PRAGMA query_only = ON")
    except BaseException:
        await db.close()  # its thread would otherwise keep the process alive
        raise
    return db


async def open_store(
    path: str | os.PathLike[str] | None = None,
    *,
    start_grant: int = 10_000,
    daily_bonus: int = 2_000,
    tz: str = "Asia/Shanghai",
    now: Clock | None = None,
) -> Store:
    """Open (creating or upgrading in place) the database at ``path`` (default ``$PAIJU_DB``)."""
    if start_grant < 0 or daily_bonus <= 0:
        raise ValueError("start_grant must be >= 0 and daily_bonus > 0")
    zone = ZoneInfo(tz)
    file = os.fspath(path) if path is not None else default_path()
    writer = await _connect(file, writer=True)
    try:
        await migrate(writer)
        reader = await _connect(file, writer=False)
    except BaseException:
        await writer.close()
        raise
    return Store(file, writer, reader, start_grant=start_grant, daily_bonus=daily_bonus, zone=zone, now=now)


class Store:
    """Paiju's coins, people, chats and saved tables. Make one with ``open_store``."""

    def __init__(
        self,
        path: str,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        *,
        start_grant: int,
        daily_bonus: int,
        zone: ZoneInfo,
        now: Clock | None,
    ) -> None:
        self.path = path
        self.start_grant = start_grant
        self.daily_bonus = daily_bonus
        self.zone = zone
        self._now = now or utc_now
        self._writer = writer
        self._reader = reader
        self._lock = asyncio.Lock()

    # -- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        """Let the write in progress finish, then close both connections (again: no-op)."""
        async with self._lock:
            await self._reader.close()
            await self._writer.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        """The writer inside one ``BEGIN IMMEDIATE`` transaction: commit on success, else roll back."""
        async with self._lock:
            db = self._writer
            try:
                # BEGIN and COMMIT inside the try: a task cancelled while awaiting them has still
                # queued them on the connection's thread, and the ROLLBACK queued after them must
                # close whatever they left open ("no transaction is active" is then fine).
                await db.execute("BEGIN IMMEDIATE")
                yield db
                await db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    await db.execute("ROLLBACK")
                raise

    def _now_text(self) -> str:
        return to_db(self._now())

    async def check(self) -> CheckReport:
        """Run the integrity check on this store's file (read-only, in a worker thread)."""
        return await asyncio.to_thread(check_database, self.path)

    # -- people and chats ---------------------------------------------------------------------

    async def ensure_person(
        self, user_id: int, name: str, language: str | None = None
    ) -> tuple[Person, bool]:
        """The person, created with the starting grant on first sight; ``granted`` says if just now.

        A later call updates the name, and the language when one is given.
        """
        known = await people.get_person(self._reader, user_id)
        if known is not None and known.name == name and language in (None, known.language):
            return known, False
        async with self._write() as db:
            now_text = self._now_text()
            granted = await people.get_person(db, user_id) is None
            if granted:
                await people.insert_person(db, user_id, name, language, now_text)
                await wallet.grant_start(db, user_id, self.start_grant, now_text)
            else:
                await people.rename_person(db, user_id, name, language, now_text)
            person = await people.get_person(db, user_id)
        assert person is not None
        return person, granted

    async def get_person(self, user_id: int) -> Person | None:
        return await people.get_person(self._reader, user_id)

    async def balance(self, user_id: int) -> int:
        """A person's coins; ``UnknownPerson`` before ``ensure_person``."""
        person = await people.get_person(self._reader, user_id)
        if person is None:
            raise UnknownPerson(user_id)
        return person.balance

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """A chat's settings (the defaults for a chat never configured)."""
        return await people.get_chat(self._reader, chat_id) or ChatSettings(chat_id)

    async def update_chat_settings(
        self,
        chat_id: int,
        *,
        language: str | None = _UNSET,
        turn_seconds: int = _UNSET,
        lobby_seconds: int = _UNSET,
        allowed_games: Sequence[str] = _UNSET,
    ) -> ChatSettings:
        """Change only the settings given; ``language=None`` goes back to the bot's default."""
        changes: dict[str, object] = {}
        if language is not _UNSET:
            changes["language"] = language
        for column, seconds in (("turn_seconds", turn_seconds), ("lobby_seconds", lobby_seconds)):
            if seconds is not _UNSET:
                if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds <= 0:
                    raise ValueError(f"{column} must be a positive int, not {seconds!r}")
                changes[column] = seconds
        if allowed_games is not _UNSET:
            changes["allowed_games"] = people.games_json(allowed_games)
        async with self._write() as db:
            now_text = self._now_text()
            await people.ensure_chat(db, chat_id, now_text)
            await people.update_chat(db, chat_id, changes, now_text)
            settings = await people.get_chat(db, chat_id)
        assert settings is not None
        return settings

    async def migrate_chat(self, old: int, new: int) -> None:
        """A group was upgraded to a supergroup: its settings, tables (with their escrow) and history
        move to the new chat id, in one transaction."""
        async with self._write() as db:
            await people.migrate_chat(db, old, new, self._now_text())

    # -- wallet -------------------------------------------------------------------------------

    async def claim_daily(self, user_id: int) -> DailyClaim:
        """Pay the daily bonus unless this calendar day's (in the store's time zone) was paid."""
        async with self._write() as db:
            moment = self._now()
            return await wallet.claim_daily(db, user_id, self.daily_bonus, moment, self.zone, to_db(moment))

    async def ledger(self, user_id: int, limit: int = 20) -> list[LedgerEntry]:
        """A person's last ``limit`` ledger rows, newest first."""
        return await wallet.ledger_of(self._reader, user_id, limit)

    # -- tables -------------------------------------------------------------------------------

    async def create_table(
        self,
        chat_id: int,
        game: str,
        state: Mapping[str, Any],
        *,
        version: int = 0,
        deadline: datetime | None = None,
        message_id: int | None = None,
    ) -> SavedTable:
        """Open a table in a chat; ``TableAlreadyOpen`` while the chat has one open."""
        async with self._write() as db:
            table_id = await tables.create_table(
                db,
                chat_id,
                game,
                state,
                version=version,
                deadline=deadline,
                message_id=message_id,
                now_text=self._now_text(),
            )
            saved = await tables.load_table(db, table_id)
        assert saved is not None
        return saved

    async def commit_action(
        self,
        table_id: int,
        *,
        round_no: int,
        action_seq: int,
        payments: Sequence[Paid] = (),
        state: Mapping[str, Any],
        deadline: datetime | None,
        escrow: int | None = None,
        closed: bool = False,
        round_record: RoundRecord | None = None,
    ) -> bool:
        """Book one engine action's ``Paid`` events and save the table, in one transaction.

        Returns False, changing nothing, for a replayed batch. Ledger keys are
        ``<table_id>:<round_no>:<action_seq>:<index>:<account>``; ``action_seq`` becomes the
        table's version and must exceed the saved one. ``escrow`` (None: derived) must equal the
        saved escrow plus the movements into it minus those out, and be 0 when ``closed``. Raises
        ``InsufficientFunds`` (nothing booked) if a balance would go negative.
        """
        async with self._write() as db:
            return await tables.commit_action(
                db,
                table_id,
                round_no=round_no,
                action_seq=action_seq,
                payments=payments,
                state=state,
                deadline=deadline,
                escrow=escrow,
                closed=closed,
                round_record=round_record,
                now_text=self._now_text(),
            )

    async def update_messages(
        self,
        table_id: int,
        *,
        message_id: int | None = _UNSET,
        dm_message_ids: Mapping[int, int | None] | None = None,
    ) -> None:
        """Set the table message id and/or merge DM message ids (None forgets a person's DM)."""
        set_message = message_id is not _UNSET
        async with self._write() as db:
            await tables.update_messages(
                db,
                table_id,
                message_id=message_id if set_message else None,
                set_message=set_message,
                dm_updates=dm_message_ids,
                now_text=self._now_text(),
            )

    async def load_table(self, table_id: int) -> SavedTable | None:
        return await tables.load_table(self._reader, table_id)

    async def open_table(self, chat_id: int) -> SavedTable | None:
        """The chat's open table, if it has one."""
        return await tables.open_table_of(self._reader, chat_id)

    async def open_tables(self) -> list[SavedTable]:
        """Every open table (to reload and re-arm timers at start-up)."""
        return await tables.open_tables(self._reader)

    # -- history and statistics ---------------------------------------------------------------

    async def chat_leaderboard(self, chat_id: int, limit: int = 10) -> list[LeaderRow]:
        return await queries.chat_leaderboard(self._reader, chat_id, limit)

    async def global_leaderboard(self, limit: int = 10) -> list[LeaderRow]:
        return await queries.global_leaderboard(self._reader, limit)

    async def person_stats(self, user_id: int) -> PersonStats:
        return await queries.person_stats(self._reader, user_id)

    async def hands_held(self, user_id: int) -> dict[str, tuple[str, ...]]:
        """Every hand a person has shown in a recorded round, per game (for the best hand in /stats)."""
        return await queries.hands_held(self._reader, user_id)

    async def last_rounds(
        self, *, chat_id: int | None = None, table_id: int | None = None, limit: int = 10
    ) -> list[SavedRound]:
        """The last rounds of a chat or a table (give one), newest first, with fairness proofs."""
        return await queries.last_rounds(self._reader, chat_id=chat_id, table_id=table_id, limit=limit)

    async def get_round(self, table_id: int, round_no: int) -> SavedRound | None:
        return await queries.get_round(self._reader, table_id, round_no)
