"""Each update handled once, however often Telegram delivers it.

Telegram sends an update again when it did not see it acknowledged: a webhook post whose answer
was lost or late, a ``getUpdates`` batch taken just before a crash. Handled twice, a ``/leave``
would confirm itself (an escape charged) and a press would act twice. ``SeenUpdates.first_time`` is
asked before any handler runs (``bot/app.py``), in webhook and polling modes alike.

The recent ids are kept in memory (checked and claimed without waiting, so two deliveries of one
update handled at once cannot both pass) and saved in the database (``updates_taken``). An id not
in memory but no newer than the newest one saved before (after a restart, or long ago in this run)
is looked up there: only a redelivery pays for that read; a new update's id is newer.

The id is saved in the transaction of the table action the update makes (``HANDLING``:
``Store.commit_action(taken=…)``), or, for an update that makes none, once it is handled
(``SeenUpdates.handle``: PTB's update processor ``HandledUpdates`` in one process, the inbox's
``Worker`` with several). A process lost before that commit leaves nothing of the update saved:
it waits in the inbox for the next owner of its chat, or, in one process, is handled if Telegram
sends it again (its delivery not acknowledged): a lost worker loses no press, and none acts twice.
An update making no table action is saved after its handling: a process lost in between has its
reply sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Collection
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from telegram import Bot, Update
from telegram.error import TelegramError
from telegram.ext import SimpleUpdateProcessor

from storage import StorageError, Store

log = logging.getLogger(__name__)
ANSWER_WITHIN = 10.0  # seconds after a press's save its answer is still given (Telegram's wait: ~15)
ANSWERS_CLEARED_WITHIN = 1.0  # seconds an answered press's owed answer stays saved, at most
MEMORY = 50_000  # ids kept in memory (at 100 updates a second, the last 8 minutes)
FORGET_EVERY = 10_000  # saved ids between two clean-ups of those Telegram will not send again


@dataclass
class Handling:
    """The update a task is handling (``SeenUpdates.handle``), and whether its id is saved."""

    update_id: int
    task: asyncio.Task[None] | None  # the handling's task (a task it starts sees this too: not it)
    saved: bool = False
    # A press: saved with its table action as owed an answer (a process that ends before
    # answering leaves it to the next, ``SeenUpdates.answer_owed``).
    query_id: str | None = None

    def unsaved(self) -> tuple[int, ...]:
        """The id for a table action to save with it: this update's, unsaved, in its own task."""
        return (self.update_id,) if not self.saved and asyncio.current_task() is self.task else ()


HANDLING: ContextVar[Handling | None] = ContextVar("handling", default=None)


class SeenUpdates:
    def __init__(self, store: Store, memory: int = MEMORY) -> None:
        self.store = store
        self.memory = memory
        self.recent: dict[int, None] = {}  # in the order taken (a dict: ordered, O(1) membership)
        self.floor = 0  # an id at most this, not in memory, may have been taken: ask the database
        self._saving: set[asyncio.Future[Any]] = set()  # (ids, and answers given: waited for alike)
        self._saved_since_clean_up = 0
        self._cleaning: asyncio.Task[int] | None = None
        self._answered: list[int] = []  # presses answered whose owed answer is still saved
        self._clearing: asyncio.TimerHandle | None = None

    async def load(self) -> None:
        """After start-up: forget what Telegram will not send again; every id up to the newest
        saved is looked up before it is handled."""
        await self.store.forget_old_updates()
        self.floor = await self.store.newest_update() or 0

    async def first_time(self, update_id: int) -> bool:
        """True the first time ``update_id`` is asked about (it is taken then), False after."""
        if update_id in self.recent:
            return False
        self.recent[update_id] = None
        if len(self.recent) > self.memory:
            oldest = next(iter(self.recent))
            del self.recent[oldest]
            self.floor = max(self.floor, oldest)
        return update_id > self.floor or not await self.store.update_taken(update_id)

    def save(self, update_id: int) -> asyncio.Future[object]:
        """Queue the id's saving (see above); the future says when, and whether it was new."""
        saving = self.store.remember_update(update_id)
        self._saving.add(saving)
        saving.add_done_callback(self._saved)
        return saving

    async def handle(self, update_id: int, work: Awaitable[object]) -> None:
        """Handle an update (``work``, awaited in this task): its id saved with its table action,
        or once it is handled."""
        handling = Handling(update_id, asyncio.current_task())
        HANDLING.set(handling)  # (this task's own context: its handlers see it)
        try:
            await work
        finally:
            await self.handled(handling)

    def leave_to_first(self) -> None:
        """The update being handled is a copy of one taken already: saving its id is left to that
        one's handling (saved now, it could beat that one's action, which would then be refused)."""
        handling = HANDLING.get()
        if handling is not None and handling.task is asyncio.current_task():
            handling.saved = True

    async def handled(self, handling: Handling) -> None:
        """An update is handled: its id is saved now unless its table action saved it."""
        if handling.saved:
            self._counted()
            return
        saving = self.save(handling.update_id)
        await asyncio.wait([saving])
        if not saving.cancelled() and saving.exception() is None:
            handling.saved = True

    def answered(self, handling: Handling) -> None:
        """A press is answered: if its action saved its answer as owed, that is cleared (a few at
        a time, within ``ANSWERS_CLEARED_WITHIN`` s: a worker lost meanwhile has the next one
        answer it again, which Telegram refuses, harmlessly)."""
        if handling.query_id is None or not handling.saved:
            return
        self._answered.append(handling.update_id)
        if self._clearing is None:
            self._clearing = asyncio.get_running_loop().call_later(ANSWERS_CLEARED_WITHIN, self._clear)

    def _clear(self) -> None:
        ids, self._answered, self._clearing = self._answered, [], None
        saving = asyncio.ensure_future(self.store.answers_given(ids))
        self._saving.add(saving)
        saving.add_done_callback(self._saving.discard)
        saving.add_done_callback(_answers_cleared)

    async def answer_owed(self, bot: Bot, count: int = 1, partitions: Collection[int] | None = None) -> None:
        """Answer the presses whose actions were saved and whose answers never went (their process
        ended in between), while Telegram still takes an answer: their buttons stop spinning."""
        try:
            owed = await self.store.owed_answers(ANSWER_WITHIN, count, partitions)
        except StorageError as error:
            log.warning("the presses owed an answer could not be read: %s", error)
            return
        for _, query_id in owed:
            with contextlib.suppress(TelegramError):
                await bot.answer_callback_query(query_id)
        if owed:
            log.info("%d presses saved by a process that ended before answering are answered", len(owed))
            with contextlib.suppress(StorageError):
                await self.store.answers_given([update_id for update_id, _ in owed])

    def taken_here(self, update_id: int) -> bool:
        """Taken by this process (being handled, or handled) and remembered yet."""
        return update_id in self.recent

    async def flush(self) -> None:
        """Wait until every id taken so far is saved (at shutdown, before the store closes)."""
        if self._clearing is not None:
            self._clearing.cancel()
            self._clear()
        while self._saving or (self._cleaning is not None and not self._cleaning.done()):
            await asyncio.wait([*self._saving, *([self._cleaning] if self._cleaning else [])])

    def _saved(self, saving: asyncio.Future[object]) -> None:
        self._saving.discard(saving)
        error = None if saving.cancelled() else saving.exception()
        if error is not None:  # memory still has it (a worker saves it at its next look at the inbox)
            log.warning("could not save a taken update id: %s", error)
            return
        self._counted()

    def _counted(self) -> None:
        """One more id saved: now and then, forget those Telegram will not send again."""
        self._saved_since_clean_up += 1
        if self._saved_since_clean_up >= FORGET_EVERY and (self._cleaning is None or self._cleaning.done()):
            self._saved_since_clean_up = 0
            self._cleaning = asyncio.get_running_loop().create_task(self.store.forget_old_updates())
            self._cleaning.add_done_callback(_cleaned)


def _cleaned(cleaning: asyncio.Task[int]) -> None:
    if not cleaning.cancelled() and (error := cleaning.exception()) is not None:
        log.warning("could not forget old update ids: %s", error)


def _answers_cleared(clearing: asyncio.Future[None]) -> None:
    if not clearing.cancelled() and (error := clearing.exception()) is not None:
        log.warning("could not clear the answers given: %s", error)


class HandledUpdates(SimpleUpdateProcessor):
    """PTB's update processor for one process (each update at once, in a task of its own) that
    handles each through ``SeenUpdates.handle``, once the store is open (``seen_updates`` set)."""

    def __init__(self, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        self.seen_updates: SeenUpdates | None = None

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        if self.seen_updates is None or not isinstance(update, Update):
            await coroutine
            return
        await self.seen_updates.handle(update.update_id, coroutine)
