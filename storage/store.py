"""The Store: Paiju's people, chats, coins and tables, on SQLite (a file) or PostgreSQL (a URL).

The storage functions (``people``, ``wallet``, ``tables``, ``queries``, ``schema``) are the same
for both: generators of SQL statements (``storage/sql.py``) that a backend runs
(``storage/sqlite.py``, ``storage/postgres.py``). The Store is the async API over them: each read
is one call on the backend, each write a whole transaction (on SQLite committed with the writes
made while the one before it ran: ``storage/commits.py``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Protocol, TypeVar
from zoneinfo import ZoneInfo

from games.events import Paid
from storage import inbox, monitoring, partitions, people, queries, summaries, tables, updates, wallet
from storage.check import CheckReport, books, check_database
from storage.errors import UnknownPerson
from storage.exclusive import DatabaseLock, hold_database
from storage.jsontext import compact_json
from storage.models import (
    ChatSettings,
    DailyClaim,
    LeaderRow,
    LedgerEntry,
    Person,
    PersonStats,
    RoundMove,
    RoundMoves,
    RoundRecord,
    SavedRound,
    SavedTable,
    TableSummary,
)
from storage.partitions import Fence, NotOwner
from storage.postgres import PostgresLock, hold_postgres, is_postgres_url, open_postgres
from storage.schema import migrate
from storage.sql import Query, Violation
from storage.sqlite import open_sqlite
from storage.timeutil import Clock, to_db, utc_now

log = logging.getLogger(__name__)
_UNSET: Any = object()
T = TypeVar("T")
SHOWN_SAVED_WITHIN = 5.0  # seconds: what an edited message shows is saved by then at the latest


def default_path() -> str:
    """Where the bot keeps everything: ``$PAIJU_DATABASE_URL`` (a ``postgresql://`` URL), else the
    SQLite file ``$PAIJU_DB``, else ``paiju.sqlite3`` in the working directory."""
    return os.environ.get("PAIJU_DATABASE_URL") or os.environ.get("PAIJU_DB") or "paiju.sqlite3"


class Backend(Protocol):
    """What the Store needs of a database (``SqliteBackend``, ``PostgresBackend``).

    A write is a storage function run whole in a transaction, committed if it returns (its result),
    undone if it raises (its error); the writes about one ``key`` (a table) commit in the order they
    were made. How a cancelled caller's write ends: ``GroupCommit.write``."""

    path: str  # the file, or the URL without its password: what logs and the check name
    postgresql: bool
    on_batch: Callable[[float, bool], None] | None  # told each write batch's seconds, and if committed

    async def read(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T: ...

    async def write(self, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any) -> T: ...

    async def write_in(
        self, key: int | None, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any
    ) -> T: ...

    def write_later(
        self, key: int | None, fn: Callable[..., Query[T]], *args: Any, **kwargs: Any
    ) -> asyncio.Future[T]:
        """A write made now and not waited for (its outcome), which no caller's cancel undoes."""
        ...

    async def write_joined(
        self,
        key: int,
        fold: Callable[[dict[str, Any], dict[str, Any]], None],
        fn: Callable[..., Query[T]],
        *args: Any,
        **kwargs: Any,
    ) -> T:
        """A write that may join one of ``fn`` about ``key`` still waiting (``GroupCommit.write_joined``)."""
        ...

    def seal(self, key: int, fn: Callable[..., Any]) -> None:
        """A write of ``fn`` about ``key`` made from now on joins none made before."""

    async def drain(self) -> None:
        """Wait until every write made so far has ended."""

    async def close(self) -> None: ...


async def open_store(
    path: str | os.PathLike[str] | None = None,
    *,
    start_grant: int = 10_000,
    daily_bonus: int = 2_000,
    tz: str = "Asia/Shanghai",
    now: Clock | None = None,
) -> Store:
    """Open (creating or upgrading in place) the database at ``path``: an SQLite file, or a
    ``postgresql://`` URL (default: see :func:`default_path`)."""
    if start_grant < 0 or daily_bonus <= 0:
        raise ValueError("start_grant must be >= 0 and daily_bonus > 0")
    zone = ZoneInfo(tz)
    target = os.fspath(path) if path is not None else default_path()
    backend: Backend
    if is_postgres_url(target):
        backend = await open_postgres(target, migrate)
    else:
        backend = await open_sqlite(target, migrate, log.info)
    return Store(backend, start_grant=start_grant, daily_bonus=daily_bonus, zone=zone, now=now)


async def hold(target: str) -> DatabaseLock | PostgresLock:
    """Take the database for this process (``DatabaseInUse`` naming who holds it, never waiting):
    an SQLite file by OS locks on it (one bot on a file); a PostgreSQL database by an advisory lock
    the bot's workers share (each worker then owns some chats: ``bot/cluster/workers.py``). Each goes with
    its process, however it ends; ``release()`` lets it go sooner."""
    if is_postgres_url(target):
        return await hold_postgres(target, shared=True)
    return hold_database(target)


# -- transactions made of several storage functions (each run whole by ``Store._write``) ----------


def _ensure_person(
    user_id: int, name: str, language: str | None, grant: int, now_text: str
) -> Query[tuple[Person, bool]]:
    granted = (yield from people.get_person(user_id)) is None
    if granted:
        yield from people.insert_person(user_id, name, language, now_text)
        yield from wallet.grant_start(user_id, grant, now_text)
    else:
        yield from people.rename_person(user_id, name, language, now_text)
    person = yield from people.get_person(user_id)
    assert person is not None
    return person, granted


def _update_chat_settings(chat_id: int, changes: dict[str, object], now_text: str) -> Query[ChatSettings]:
    yield from people.ensure_chat(chat_id, now_text)
    yield from people.update_chat(chat_id, changes, now_text)
    settings = yield from people.get_chat(chat_id)
    assert settings is not None
    return settings


class Store:
    """Paiju's coins, people, chats and saved tables. Make one with ``open_store``."""

    def __init__(
        self,
        backend: Backend,
        *,
        start_grant: int,
        daily_bonus: int,
        zone: ZoneInfo,
        now: Clock | None,
    ) -> None:
        self.backend = backend
        self.path = backend.path
        self.start_grant = start_grant
        self.daily_bonus = daily_bonus
        self.zone = zone
        self._now = now or utc_now
        self._read = backend.read
        self._write = backend.write
        self._write_in = backend.write_in  # (the writes about one table keep their order)
        self._fence: Fence | None = None  # (see :meth:`fence_with`)
        # What tables' messages show, not written yet (``shown_later``): an update_messages'
        # arguments a table, and the timer that writes them if no other write of the table does.
        self._unsaved: dict[int, tuple[dict[str, Any], asyncio.TimerHandle]] = {}
        self.shown_saved_within = SHOWN_SAVED_WITHIN

    @property
    def fence(self) -> Fence | None:
        """What this worker owns, when several share the database (:meth:`fence_with`)."""
        return self._fence

    def fence_with(self, fence: Fence) -> None:
        """This process is one of several workers on the database (``bot/cluster/workers.py``), owning
        what ``fence`` says (changed as it takes and lets go of partitions): from now on every write
        to a table, and the mark of an update taken from the inbox, is refused (``NotOwner``) unless
        it owns the table's partition at the epoch it claimed."""
        self._fence = fence

    @property
    def on_batch(self) -> Callable[[float, bool], None] | None:
        """Told each write batch's seconds (its wait in the queue included) and whether it committed."""
        return self.backend.on_batch

    @on_batch.setter
    def on_batch(self, observer: Callable[[float, bool], None] | None) -> None:
        self.backend.on_batch = observer

    # -- lifecycle ----------------------------------------------------------------------------

    async def drain(self) -> None:
        """Wait until every write made so far has ended (committed, or undone)."""
        await self.backend.drain()

    async def close(self) -> None:
        """Let the writes and reads already made finish (what messages show, not written yet,
        included), then close the database (again: no-op)."""
        for table_id in list(self._unsaved):
            self._save_shown(table_id)
        await self.backend.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def _now_text(self) -> str:
        return to_db(self._now())

    async def probe_write(self) -> None:
        """A write that changes nothing, committed like any other (raises where any write would)."""
        await self._write(monitoring.touch)

    # -- updates taken from Telegram ----------------------------------------------------------

    def remember_update(self, update_id: int) -> asyncio.Future[object]:
        """This update was taken from Telegram (see ``storage/updates.py``): queued at once, without
        waiting; the future says when, and whether it was taken now (not before)."""
        return self.backend.write_later(
            None, updates.remember, (update_id,), self._now_text(), fence=self.fence
        )

    async def forget_old_updates(self, newest: int = updates.NEWEST) -> int:
        """Forget the updates Telegram will not send again (see ``storage/updates.py``); how many."""
        return await self._write(updates.forget, to_db(self._now() - updates.KEEP), newest)

    async def owed_answers(
        self, within: float, count: int = 1, partitions: Collection[int] | None = None
    ) -> list[tuple[int, str]]:
        """Presses saved in the last ``within`` seconds whose answers are owed (``updates.owed_answers``)."""
        since = to_db(self._now() - timedelta(seconds=within))
        return await self._read(updates.owed_answers, since, count, partitions)

    async def answers_given(self, update_ids: Sequence[int]) -> None:
        await self._write(updates.answered, update_ids)

    async def update_taken(self, update_id: int) -> bool:
        return await self._read(updates.taken, update_id)

    async def newest_update(self) -> int | None:
        return await self._read(updates.newest)

    async def finished_rounds(self, after: int = 0) -> tuple[int, dict[str, int]]:
        """Rounds settled since round id ``after``, per game, and the last id read (for metrics)."""
        return await self._read(monitoring.finished_rounds, after)

    async def check(self) -> CheckReport:
        """Run the integrity check on this store's database (read-only: a file's in a worker thread,
        with SQLite's own checks of the file)."""
        if self.backend.postgresql:
            return await self._read(books)
        return await asyncio.to_thread(check_database, self.path)

    # -- people and chats ---------------------------------------------------------------------

    async def ensure_person(
        self, user_id: int, name: str, language: str | None = None
    ) -> tuple[Person, bool]:
        """The person, created with the starting grant on first sight; ``granted`` says if just now.

        A later call updates the name, and the language when one is given.
        """
        known = await self._read(people.get_person, user_id)
        if known is not None and known.name == name and language in (None, known.language):
            return known, False
        return await self._write(_ensure_person, user_id, name, language, self.start_grant, self._now_text())

    async def get_person(self, user_id: int) -> Person | None:
        return await self._read(people.get_person, user_id)

    async def set_dm_refused(self, user_id: int, refused: bool) -> None:
        """Telegram refused a message to the person's DM (``refused``), or they opened it."""
        await self._write(people.set_dm_refused, user_id, refused)

    async def balance(self, user_id: int) -> int:
        """A person's coins; ``UnknownPerson`` before ``ensure_person``."""
        person = await self._read(people.get_person, user_id)
        if person is None:
            raise UnknownPerson(user_id)
        return person.balance

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """A chat's settings (None for what it never chose: the caller's defaults apply)."""
        return await self._read(people.get_chat, chat_id) or ChatSettings(chat_id)

    async def update_chat_settings(
        self,
        chat_id: int,
        *,
        language: str | None = _UNSET,
        turn_seconds: int | None = _UNSET,
        lobby_seconds: int | None = _UNSET,
        allowed_games: Sequence[str] = _UNSET,
        pause_seconds: int | None = _UNSET,
    ) -> ChatSettings:
        """Change only the settings given; None (language, seconds) goes back to the bot's default
        (a pause may be 0: none)."""
        changes: dict[str, object] = {}
        if language is not _UNSET:
            changes["language"] = language
        for column, seconds in (("turn_seconds", turn_seconds), ("lobby_seconds", lobby_seconds)):
            if seconds is not _UNSET:
                if seconds is not None and (
                    isinstance(seconds, bool) or not isinstance(seconds, int) or seconds <= 0
                ):
                    raise ValueError(f"{column} must be a positive int or None, not {seconds!r}")
                changes[column] = seconds
        if allowed_games is not _UNSET:
            changes["allowed_games"] = people.games_json(allowed_games)
        if pause_seconds is not _UNSET:
            if pause_seconds is not None and (
                isinstance(pause_seconds, bool) or not isinstance(pause_seconds, int) or pause_seconds < 0
            ):
                raise ValueError(f"pause_seconds must be an int of at least 0 or None, not {pause_seconds!r}")
            changes["pause_seconds"] = pause_seconds
        return await self._write(_update_chat_settings, chat_id, changes, self._now_text())

    async def migrate_chat(self, old: int, new: int) -> None:
        """A group was upgraded to a supergroup: its settings, tables (with their escrow) and history
        move to the new chat id, in one transaction."""
        await self._write(people.migrate_chat, old, new, self._now_text(), self.fence)

    # -- wallet -------------------------------------------------------------------------------

    async def claim_daily(self, user_id: int) -> DailyClaim:
        """Pay the daily bonus unless this calendar day's (in the store's time zone) was paid."""
        moment = self._now()
        claim = (wallet.claim_daily, user_id, self.daily_bonus, moment, self.zone, to_db(moment))
        try:
            return await self._write(*claim)
        except Violation:  # the same day's bonus paid by a write side by side (PostgreSQL): read it
            return await self._write(*claim)

    async def ledger(self, user_id: int, limit: int = 20) -> list[LedgerEntry]:
        """A person's last ``limit`` ledger rows, newest first."""
        return await self._read(wallet.ledger_of, user_id, limit)

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
        return await self._write(
            tables.create_table,
            chat_id,
            game,
            compact_json(state),
            version=version,
            deadline=deadline,
            message_id=message_id,
            now_text=self._now_text(),
            fence=self.fence,
        )

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
        seats: Mapping[int, int] | None = None,
        joined: Collection[int] = (),
        taken: Sequence[int] = (),
        owed: str | None = None,
        move: RoundMove | None = None,
    ) -> bool:
        """Book one engine action's ``Paid`` events and save the table, in one transaction.

        Returns False, changing nothing (but writing what the table's messages show, noted by
        :meth:`shown_later`), for a replayed batch. Ledger keys are
        ``<table_id>:<round_no>:<action_seq>:<index>:<account>``; ``action_seq`` becomes the
        table's version and must exceed the saved one. ``escrow`` (None: derived) must equal the
        saved escrow plus the movements into it minus those out, and be 0 when ``closed``. Raises
        ``InsufficientFunds`` (nothing booked) if a balance would go negative. ``seats`` (person ->
        the coins the table states they hold after the action; None: unchanged) must be backed by
        the wallets (exactly, for those who sat down with it: ``joined``), one open table a person:
        else ``SeatRefused`` and nothing is booked. ``taken``: the updates the action answers,
        marked taken in its transaction (``UpdateTaken`` if one was already). ``move``: the action
        kept for the round's replay, in the same transaction (``round_moves``).
        """
        state_text = compact_json(state)  # (here: bad input fails before anything is queued)
        move_texts = (
            None
            if move is None
            else (compact_json(move.action), None if move.before is None else compact_json(move.before))
        )
        messages = self._take_unsaved(table_id)  # (written with the action: one write)
        if messages is not None:
            messages["fence"] = None  # (the action's write is fenced)
            self.backend.seal(table_id, tables.update_messages)  # (later ones come after it)
        try:
            return await self._write_in(
                table_id,
                tables.commit_action,
                table_id,
                round_no=round_no,
                action_seq=action_seq,
                payments=payments,
                state=state_text,
                deadline=deadline,
                escrow=escrow,
                closed=closed,
                round_record=round_record,
                now_text=self._now_text(),
                seats=seats,
                joined=joined,
                fence=self.fence,
                taken=taken,
                messages=messages,
                owed=owed,
                move=move_texts,
            )
        except BaseException:
            if messages is not None:
                self._unwritten(table_id, messages)
            raise

    async def update_messages(
        self,
        table_id: int,
        *,
        message_id: int | None = _UNSET,
        dm_message_ids: Mapping[int, int | None] | None = None,
        shown: Mapping[str, str | None] | None = None,
        turn: Mapping[str, object] | None = None,
        view: Mapping[str, object] | None = None,
    ) -> None:
        """Set the table message id and/or merge DM message ids and what each kept message shows
        (None forgets a person's DM, or a hash); ``turn``: the turn's clock moved
        (``bot.model.live_table.Turn``); ``view``: what the table shows besides changed with no action
        (``bot.model.live_table.ViewState``)."""
        changes = self._with_unsaved(table_id, self._message_changes(message_id, dm_message_ids, shown))
        if turn is None and view is None:  # what Telegram confirmed: one write while one waits
            await self.backend.write_joined(
                table_id, tables.join_message_updates, tables.update_messages, table_id, **changes
            )
            return
        await self._write_in(table_id, tables.update_messages, table_id, turn=turn, view=view, **changes)

    def shown_later(self, table_id: int, shown: Mapping[str, str | None]) -> None:
        """What kept messages show now, edited in place (no new id): saved with the table's next
        write (its next action, a new message's id), within ``shown_saved_within`` seconds if none
        comes, or as the store closes. Not waited for: it is kept in memory meanwhile, and a bot
        killed before it is saved finds the state before saved, and edits those messages again
        (Telegram: "not modified") after its restart. (A write of its own for each edit made 1.5
        writes a press, 5-8% of a busy bot's CPU: bench/RESULTS.md, issue 26.)"""
        changes = self._message_changes(shown=shown)
        if table_id in self._unsaved:
            tables.join_message_updates(self._unsaved[table_id][0], changes)
        else:
            self._hold(table_id, changes)

    def _message_changes(
        self,
        message_id: int | None = _UNSET,
        dm_message_ids: Mapping[int, int | None] | None = None,
        shown: Mapping[str, str | None] | None = None,
    ) -> dict[str, Any]:
        """:func:`tables.update_messages`' arguments for these changes (``message_id`` unset: kept)."""
        set_message = message_id is not _UNSET
        return {
            "message_id": message_id if set_message else None,
            "set_message": set_message,
            "dm_updates": dm_message_ids,
            "now_text": self._now_text(),
            "shown": shown,
            "fence": self.fence,
        }

    def _hold(self, table_id: int, changes: dict[str, Any]) -> None:
        timer = asyncio.get_running_loop().call_later(self.shown_saved_within, self._save_shown, table_id)
        self._unsaved[table_id] = (changes, timer)

    def _take_unsaved(self, table_id: int) -> dict[str, Any] | None:
        """What a table's messages show, not written yet, taken by the write that carries it."""
        if table_id not in self._unsaved:
            return None
        changes, timer = self._unsaved.pop(table_id)
        timer.cancel()
        return changes

    def _with_unsaved(self, table_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        """``changes`` to a table's messages, after what they show that was not written yet."""
        unsaved = self._take_unsaved(table_id)
        if unsaved is None:
            return changes
        tables.join_message_updates(unsaved, changes)
        return unsaved

    def _unwritten(self, table_id: int, taken: dict[str, Any]) -> None:
        """The write that took what a table's messages show failed: kept again, before what was
        noted meanwhile."""
        taken["fence"] = self.fence
        newer = self._take_unsaved(table_id)
        if newer is not None:
            tables.join_message_updates(taken, newer)
        self._hold(table_id, taken)

    def _save_shown(self, table_id: int) -> None:
        """Write what a table's messages show, not written yet (no other write of the table took it)."""
        changes = self._take_unsaved(table_id)
        if changes is None:
            return
        write = self.backend.write_later(table_id, tables.update_messages, table_id, **changes)
        write.add_done_callback(functools.partial(_unsaved_lost, table_id))

    async def load_table(self, table_id: int) -> SavedTable | None:
        return await self._read(tables.load_table, table_id)

    async def open_table(self, chat_id: int) -> SavedTable | None:
        """The chat's open table, if it has one."""
        return await self._read(tables.open_table_of, chat_id)

    async def open_tables(self) -> list[SavedTable]:
        """Every open table (to reload and re-arm timers at start-up)."""
        return await self._read(tables.open_tables)

    # -- several workers on one database (``bot/cluster/workers.py``) ----------------------------------

    async def ensure_partitions(self, count: int) -> int:
        """The number of partitions the chats are shared in (``count`` if none were made before)."""
        return await self._write(partitions.ensure, count)

    async def claim_partition(self, partition: int, owner: str, address: str | None = None) -> int:
        """``owner`` (holding the partition's lock; its HTTP server at ``address``) takes it; the
        epoch that fences its writes."""
        return await self._write(partitions.claim, partition, owner, address, self._now_text())

    async def owner_of_table(self, table_id: int, count: int) -> tuple[str | None, str | None]:
        """The worker owning a table's chat, and where its HTTP server is reached."""
        return await self._read(partitions.address_of_table, table_id, count)

    async def handed_over(self, partition: int) -> bool:
        return await self._read(partitions.handed_over, partition)

    async def hand_over(self, partition: int) -> None:
        """This worker lets ``partition`` go cleanly (``partitions.hand_over``)."""
        assert self.fence is not None
        await self._write(partitions.hand_over, self.fence, partition)

    async def keep_budgets(self, sent: Mapping[int, list[tuple[float, int]]]) -> None:
        """What these groups got in the last minute, for the worker that takes their tables next."""
        if sent:
            await self._write(partitions.keep_budgets, sent)

    async def budgets(self, chats: Collection[int]) -> dict[int, list[tuple[float, int]]]:
        return await self._read(partitions.budgets, chats)

    def save_shown_now(self, table_ids: Iterable[int]) -> None:
        """Write now what these tables' messages show, not written yet (their partition is let go:
        its next owner must know what they show)."""
        for table_id in table_ids:
            self._save_shown(table_id)

    async def partition_owners(self) -> Mapping[int, tuple[str | None, int]]:
        return await self._read(partitions.owners)

    async def open_tables_in(self, chosen: Collection[int], count: int) -> list[SavedTable]:
        """The open tables of the chats in the ``chosen`` partitions (of ``count``)."""
        return await self._read(tables.open_tables_in, chosen, count)

    async def chat_of_table(self, table_id: int) -> int | None:
        """The chat a table is (or was) in: where a press on its button in a DM is handled."""
        return await self._read(tables.chat_of, table_id)

    async def put_updates(self, updates: Sequence[tuple[int, int, str]]) -> int:
        """Keep updates (update_id, partition, body) in the inbox for their partitions' owners, in
        one transaction; how many were new (not there already, nor taken before)."""
        return await self._write(inbox.put_all, updates, self._now_text())

    async def waiting_updates(
        self, chosen: Collection[int], after: int, limit: int
    ) -> list[tuple[int, int, str]]:
        return await self._read(inbox.waiting, chosen, after, limit)

    async def inbox_depth(self) -> int:
        return await self._read(inbox.depth)

    # -- history and statistics ---------------------------------------------------------------

    async def chat_leaderboard(self, chat_id: int, limit: int = 10) -> list[LeaderRow]:
        return await self._read(queries.chat_leaderboard, chat_id, limit)

    async def global_leaderboard(self, limit: int = 10) -> list[LeaderRow]:
        return await self._read(queries.global_leaderboard, limit)

    async def person_stats(self, user_id: int) -> PersonStats:
        return await self._read(queries.person_stats, user_id)

    async def hands_held(self, user_id: int) -> dict[str, tuple[str, ...]]:
        """Every hand a person has shown in a recorded round, per game (for the best hand in /stats)."""
        return await self._read(queries.hands_held, user_id)

    async def last_rounds(
        self, *, chat_id: int | None = None, table_id: int | None = None, limit: int = 10
    ) -> list[SavedRound]:
        """The last rounds of a chat or a table (give one), newest first, with fairness proofs."""
        return await self._read(queries.last_rounds, chat_id=chat_id, table_id=table_id, limit=limit)

    async def get_round(self, table_id: int, round_no: int) -> SavedRound | None:
        return await self._read(queries.get_round, table_id, round_no)

    async def table_summary(self, table_id: int) -> TableSummary | None:
        """What a table's 总结算 is made of (None: no such table)."""
        return await self._read(summaries.table_summary, table_id)

    async def chat_tables(self, chat_id: int, limit: int = summaries.RECENT_TABLES) -> list[TableSummary]:
        """The summaries of a chat's last tables where a round was played, newest first."""
        return await self._read(summaries.chat_tables, chat_id, limit)

    async def round_moves(self, table_id: int, round_no: int) -> RoundMoves | None:
        """A round's actions as kept for its replay (None: a round played before they were kept)."""
        return await self._read(tables.round_moves, table_id, round_no)


def _unsaved_lost(table_id: int, write: asyncio.Future[object]) -> None:
    """What a table's messages show could not be written (it stays in memory; a restart edits
    those messages again)."""
    error = None if write.cancelled() else write.exception()
    if isinstance(error, NotOwner):  # (its partition went to another worker, which shows them)
        log.info("table %s: what its messages show is left to its new owner", table_id)
    elif error is not None:
        log.warning("table %s: what its messages show could not be saved: %r", table_id, error)
