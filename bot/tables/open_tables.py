"""The open tables: one per chat, each behind its chat's lock, saved with its coins after every action.

A table changes through ``Tables.apply`` (or ``Tables.seat``, for someone sitting down): the engine
applies the action, the view notes what the table message should say, and storage books the
``Paid`` events together with the saved state and seats in one transaction. If saving fails, the
table in memory goes back to what was saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime

from bot.display.game_kinds import KINDS, GameKind
from bot.model.live_table import (
    Action,
    Event,
    LiveTable,
    Notice,
    ResultLine,
    Turn,
    ViewState,
    shown_from_saved,
    state_of,
    turn_from_saved,
    view_from_plain,
)
from bot.updates.seen import HANDLING
from games.cards import format_cards
from games.codec import Plain
from games.errors import RuleError
from games.events import (
    ClosingAfterRound,
    DeckRevealed,
    Joined,
    Left,
    Paid,
    PayReason,
    RoundStarted,
    TableClosed,
    TimerStarted,
    Unseated,
)
from games.replay import action_to_plain
from games.table import Join
from storage import RoundMove, RoundRecord, RoundResult, SavedTable, StaleVersion, Store

log = logging.getLogger(__name__)
_PENALTIES = (PayReason.ESCAPE_PENALTY, PayReason.BANKER_ESCAPE)


def _kept_move(
    action: Action, events: list[Event], before: dict[str, Plain], in_round: bool
) -> RoundMove | None:
    """The action as kept for its round's replay (``games/replay.py``): every action while a round
    is under way, and the one that starts it, with the table as saved before it (its engine to
    re-run, its view for the names); None for an action between rounds."""
    started = any(isinstance(event, RoundStarted) for event in events)
    if not (in_round or started):
        return None
    return RoundMove(action_to_plain(action), before if started else None)


class SavedBefore(Exception):
    """The database already holds this action: memory was behind it and now holds what was saved."""


class SeatedElsewhere(Exception):
    """The person sits at another table (a person sits at one table at a time, across chats)."""


class PersonLocks:
    """A lock per person, for what decides or changes where they sit; made when needed, dropped
    when nobody holds or waits for it. Taken in one order (by id) inside a chat's lock, never the
    other way round, so two tables never wait for each other in a cycle."""

    def __init__(self) -> None:
        self._locks: dict[int, asyncio.Lock] = {}
        self._users: dict[int, int] = {}

    @contextlib.asynccontextmanager
    async def holding(self, people: Iterable[int]) -> AsyncIterator[None]:
        taken: list[int] = []
        try:
            for person in sorted(set(people)):
                lock = self._locks.setdefault(person, asyncio.Lock())
                self._users[person] = self._users.get(person, 0) + 1
                try:
                    await lock.acquire()
                except BaseException:
                    self._drop(person)
                    raise
                taken.append(person)
            yield
        finally:
            for person in reversed(taken):
                self._locks[person].release()
                self._drop(person)

    def _drop(self, person: int) -> None:
        self._users[person] -= 1
        if not self._users[person]:
            del self._users[person], self._locks[person]


class Tables:
    """Every open table in memory (the database holds the same, saved after each action)."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock
        self.by_chat: dict[int, LiveTable] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        # Where people sit changes only under their locks: a seat is given with the coins read
        # under them, and every action (any may unseat someone) holds those of its table's seats.
        self.seating = PersonLocks()
        # Where each person was last seen seated (a hint, checked on use: a person who left may
        # still be listed). Every seated person is listed: the engine's seats change only in
        # ``_apply`` and ``_restore``, which list them, and tables come in only through
        # ``restore`` and ``open``. So ``table_of`` needs no walk over every table.
        self._seated_at: dict[int, LiveTable] = {}
        # Told of each table that closes (the caller holds its chat's lock), once out of ``by_chat``.
        self.closed: Callable[[LiveTable], None] = lambda live: None

    def lock(self, chat_id: int) -> asyncio.Lock:
        return self._locks.setdefault(chat_id, asyncio.Lock())

    def get(self, chat_id: int) -> LiveTable | None:
        return self.by_chat.get(chat_id)

    def by_id(self, table_id: int) -> LiveTable | None:
        return next((live for live in self.by_chat.values() if live.table_id == table_id), None)

    def table_of(self, person: int) -> LiveTable | None:
        """The table where ``person`` sits (a person sits at one table at a time, across chats)."""
        live = self._seated_at.get(person)
        if live is not None and self.by_chat.get(live.chat_id) is live and person in live.seated():
            return live
        self._seated_at.pop(person, None)  # got up since (or never sat): a closed table is let go
        return None

    def _list_seats(self, live: LiveTable) -> None:
        for person in live.seated():
            self._seated_at[person] = live

    def kind(self, live: LiveTable) -> GameKind:
        return KINDS[live.game]

    def adopt(self, tables: Iterable[SavedTable]) -> list[LiveTable]:
        """Take these open tables as saved (at start-up, or those of a partition this worker takes)."""
        adopted = []
        for saved in tables:
            live = self._from_saved(saved)
            self.by_chat[live.chat_id] = live
            self._list_seats(live)
            adopted.append(live)
        return adopted

    def let_go(self, live: LiveTable) -> None:
        """Forget a table another worker now owns (the caller holds its chat's lock)."""
        if self.by_chat.get(live.chat_id) is live:
            del self.by_chat[live.chat_id]
        for person in live.seated():
            if self._seated_at.get(person) is live:
                del self._seated_at[person]

    def _from_saved(self, saved: SavedTable) -> LiveTable:
        engine = KINDS[saved.game].load(saved.state["engine"])
        return LiveTable(
            saved.id,
            saved.chat_id,
            saved.game,
            engine,
            view_from_plain(saved.state["view"]),
            saved.message_id,
            dict(saved.dm_message_ids),
            saved=saved.state,  # what a failed save returns to, as for a table opened now
            shown=shown_from_saved(
                saved.shown, engine.core.round_no if engine.core.shuffle is not None else 0
            ),
            turn=turn_from_saved(saved.state, saved.shown, engine.core.timer),
        )

    async def open(self, chat_id: int, game: str, turn_seconds: int, lobby_seconds: int) -> LiveTable:
        """A new empty table in a chat (the caller then seats the opener)."""
        engine = KINDS[game].new(turn_seconds, lobby_seconds)
        view = ViewState()
        live = LiveTable(0, chat_id, game, engine, view, saved=state_of(engine, view))
        saved = await self.store.create_table(chat_id, game, live.saved, version=engine.version)
        live.table_id = saved.id
        self.by_chat[chat_id] = live
        return live

    async def seat(
        self, live: LiveTable, person: int, balance_of: Callable[[], Awaitable[int]]
    ) -> list[Event]:
        """Seat ``person`` with the coins ``balance_of`` reads from their wallet, deciding under
        their seating lock that they sit nowhere else; ``SeatedElsewhere`` if they do."""
        async with self.seating.holding([person, *live.seated()]):
            if self.table_of(person) not in (None, live):
                raise SeatedElsewhere(person)
            return await self._apply(live, Join(person, await balance_of()))

    async def apply(self, live: LiveTable, action: Action) -> list[Event]:
        """Apply, note, and save one action; a ``RuleError`` leaves everything as it was, and so does
        a failure to save (the table in memory goes back to its last saved state)."""
        if isinstance(action, Join):
            raise TypeError("a seat is given by Tables.seat, which decides it under the seating locks")
        # Those seated here, and those with coins in its escrow (a refund may reach them elsewhere).
        async with self.seating.holding([*live.seated(), *live.engine.core.escrow]):
            return await self._apply(live, action)

    async def _apply(self, live: LiveTable, action: Action) -> list[Event]:
        turn = live.turn  # (what its clock knows besides what is saved: kept if the save fails)
        before, in_round = live.saved, live.in_round  # (for the round's replay: ``_kept_move``)
        try:
            # The table's engine is its game's and so are the actions its buttons make (another
            # game's would raise TypeError): a pairing no checker follows from ``live.game``.
            events: list[Event] = list(live.engine.apply(action))  # type: ignore[arg-type]
        except RuleError:
            raise  # refused before anything changed
        except BaseException:
            self._restore(live, turn)
            raise
        self._list_seats(live)
        try:
            record = self._note(live, events)
            await self._coins_of_those_gone(live, events)
            state = live.state()
            seats = {seat.person: seat.balance for seat in live.engine.core.seats}
            joined = [event.person for event in events if isinstance(event, Joined)]
            handling = HANDLING.get()  # the update being handled: its id is saved with its action
            taken = handling.unsaved() if handling is not None else ()
            owed = handling.query_id if handling is not None and taken else None
            booked = await self.store.commit_action(
                live.table_id,
                round_no=live.round_no,
                action_seq=live.engine.version,
                payments=[event for event in events if isinstance(event, Paid)],
                state=state,
                deadline=datetime.fromtimestamp(live.deadline, UTC) if live.deadline else None,
                escrow=live.engine.core.escrow_total,
                closed=live.engine.closed,
                round_record=record,
                # Most actions move no coins and seat nobody: the saved seats stand as they are.
                seats=None if seats == live.saved_seats and not joined else seats,
                joined=joined,
                taken=taken,
                owed=owed,
                move=_kept_move(action, events, before, in_round),
            )
            if not booked:
                raise SavedBefore(f"table {live.table_id}: action {live.engine.version} was saved before")
        except (SavedBefore, StaleVersion):
            await self._reload(live)
            raise
        except BaseException:
            self._restore(live, turn)
            raise
        if handling is not None and taken:
            handling.saved = True
        live.saved = state
        live.saved_seats = seats
        if live.engine.closed:
            await self._close(live)
        return events

    async def _coins_of_those_gone(self, live: LiveTable, events: list[Event]) -> None:
        """A results line of someone no longer seated (they escaped during the round) says their
        coins too, as everyone's does: their wallet once this action's payments are in."""
        if live.view.results_round != live.round_no:
            return
        for index, line in enumerate(live.view.results):
            if line.balance is None:
                paid = sum(e.amount for e in events if isinstance(e, Paid) and e.payee == line.person)
                wallet = await self.store.balance(line.person)
                live.view.results[index] = dataclasses.replace(line, balance=wallet + paid)

    def _restore(
        self, live: LiveTable, turn: Turn | None = None, shown: Mapping[str, str] | None = None
    ) -> None:
        """Memory goes back to what was saved (``turn``: the turn's clock as it was before the
        failed action, which knows more than the save: a call out, a hold)."""
        engine = live.saved["engine"]
        assert isinstance(engine, dict)  # (as ``state_of`` saves it)
        live.engine = self.kind(live).load(engine)
        live.saved_seats = None  # (after a failed save: not known what the database holds)
        live.view = view_from_plain(live.saved["view"])
        live.turn = turn or turn_from_saved(live.saved, shown or {}, live.engine.core.timer)
        self._list_seats(live)

    async def _reload(self, live: LiveTable) -> None:
        """The database is ahead of memory (a save went through but its answer was lost): memory
        takes what the database holds."""
        saved = await self.store.load_table(live.table_id)
        assert saved is not None
        live.saved = saved.state
        self._restore(live, shown=saved.shown)
        if saved.closed:
            await self._close(live)

    async def _close(self, live: LiveTable) -> None:
        """The table closed: its 总结算 is read (what its last messages show), and it is let go."""
        try:
            live.summary = await self.store.table_summary(live.table_id)
        except Exception:  # (the table is closed all the same: only its summary is not shown)
            log.exception("table %s: its summary could not be read", live.table_id)
        self.by_chat.pop(live.chat_id, None)
        self.closed(live)

    def _note(self, live: LiveTable, events: list[Event]) -> RoundRecord | None:
        """Update what the table message shows; return the round's record if a round ended."""
        view, kind = live.view, self.kind(live)
        record: RoundRecord | None = None
        results: list[ResultLine] | None = None
        for event in events:
            if isinstance(event, Left | Unseated | Joined):  # gone, or new here: no choice of theirs stands
                view.auto_ready = [person for person in view.auto_ready if person != event.person]
                view.autopilot.pop(event.person, None)
            if isinstance(event, RoundStarted):
                # The last round's results and notices stay: its message shows them to the end.
                view.commitment, view.moves = event.commitment, []
                view.dealt_version = live.engine.version
                view.notices = [notice for notice in view.notices if notice.round_no == live.round_no - 1]
            elif isinstance(event, TimerStarted):
                live.turn = Turn.start(event.timer, self.clock(), event.seconds)
            elif isinstance(event, Left) and event.escaped:
                # What the escape cost: a penalty (muxi), else what they had put in (showhand's
                # escaper loses their bets): either way, what they are down this round.
                fined = any(
                    isinstance(e, Paid) and e.payer == event.person and e.reason in _PENALTIES for e in events
                )
                lost = max(0, -live.engine.core.round_net.get(event.person, 0))
                key = "notice.escaped" if fined else "notice.escaped_lost"
                view.notices.append(Notice(key, event.person, lost, live.round_no))
            elif isinstance(event, Unseated):
                view.notices.append(Notice("notice.unseated", event.person, event.balance, live.round_no))
                for line in view.results:  # gone from the table with these coins: their DM says so
                    if line.person == event.person:
                        line.balance = event.balance
            elif isinstance(event, ClosingAfterRound):
                view.notices.append(Notice("notice.closing", event.by, 0, live.round_no))
            elif (
                isinstance(event, Paid) and event.reason is PayReason.REFUND and isinstance(event.payee, int)
            ):
                view.notices.append(Notice("notice.refunded", event.payee, event.amount, live.round_no))
            elif isinstance(event, TableClosed):
                view.closed_reason = event.reason
            elif isinstance(event, DeckRevealed):
                view.ended_at = self.clock()  # (the pause before auto-ready counts from it)
                # Every revealed deck is recorded, with or without results (nobody took the bank,
                # the table was cancelled): each commitment shown can be checked with /verify.
                record = RoundRecord(
                    round_no=event.round_no,
                    commitment=event.commitment,
                    deck=format_cards(event.deck),
                    salt=event.salt,
                    results=tuple(
                        RoundResult(
                            line.person,
                            line.net,
                            line.won,
                            line.hand,
                            # the cards its show-down showed (a hand is named only where it did)
                            format_cards(line.cards) if line.hand and line.cards else None,
                        )
                        for line in results or ()
                    ),
                )
            else:
                kind.note_event(live, event)
                if (found := kind.round_results(live, event)) is not None:
                    results = found
                    view.results, view.results_round = found, live.round_no
                    for line in found:  # the running score: each person's net since the table opened
                        view.score[line.person] = view.score.get(line.person, 0) + line.net
        if live.engine.core.timer == 0:
            live.turn = Turn()
        return record
