"""Each update handled once, however often Telegram delivers it.

Telegram sends an update again when it did not see it acknowledged: a webhook post whose answer
was lost or late, a ``getUpdates`` batch taken just before a crash. Handled twice, a ``/leave``
would confirm itself (an escape charged) and a press would act twice. ``Deliveries.first_time`` is
asked before any handler runs (``bot/app.py``), in webhook and polling modes alike.

The recent ids are kept in memory (checked and claimed without waiting, so two deliveries of one
update handled at once cannot both pass) and saved in the database: queued at once, without
waiting (``Store.remember_update``), so the id commits no later than anything its handling writes
and a crash never leaves an update's effects saved without it. (Where writes may commit out of
order, PostgreSQL's several lanes, the handling waits for it instead: the same guarantee; and an
update another worker took already is not handled again.) An id not in memory but no newer than the
newest one saved before (after a restart, or long ago in this run) is looked up there:
only a redelivery pays for that read; a new update's id is newer.
"""

from __future__ import annotations

import asyncio
import logging

from storage import Store

log = logging.getLogger(__name__)
MEMORY = 50_000  # ids kept in memory (at 100 updates a second, the last 8 minutes)
FORGET_EVERY = 10_000  # saved ids between two clean-ups of those Telegram will not send again


class Deliveries:
    def __init__(self, store: Store, memory: int = MEMORY) -> None:
        self.store = store
        self.memory = memory
        self.recent: dict[int, None] = {}  # in the order taken (a dict: ordered, O(1) membership)
        self.floor = 0  # an id at most this, not in memory, may have been taken: ask the database
        self._saving: set[asyncio.Future[object]] = set()
        self._saved_since_clean_up = 0
        self._cleaning: asyncio.Task[int] | None = None

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
        if update_id <= self.floor and await self.store.update_taken(update_id):
            return False
        saving = self.store.remember_update(update_id)
        self._saving.add(saving)
        saving.add_done_callback(self._saved)
        if not self.store.writes_in_order:
            # Its writes may commit before the mark (``storage/commits.py``): the mark first.
            # Refused (another worker owns its chat now), or taken by another worker already (it
            # owned the chat then): theirs. Failed: forgotten here, handed over again.
            await asyncio.wait([saving])
            if saving.cancelled() or saving.exception() is not None:
                self.recent.pop(update_id, None)
                return False
            return bool(saving.result())
        return True

    def taken_here(self, update_id: int) -> bool:
        """Taken by this process (being handled, or handled) and remembered yet."""
        return update_id in self.recent

    async def flush(self) -> None:
        """Wait until every id taken so far is saved (at shutdown, before the store closes)."""
        while self._saving or (self._cleaning is not None and not self._cleaning.done()):
            await asyncio.wait([*self._saving, *([self._cleaning] if self._cleaning else [])])

    def _saved(self, saving: asyncio.Future[object]) -> None:
        self._saving.discard(saving)
        error = None if saving.cancelled() else saving.exception()
        if error is not None:  # memory still has it; only a restart would handle it again
            log.warning("could not save a taken update id: %s", error)
            return
        self._saved_since_clean_up += 1
        if self._saved_since_clean_up >= FORGET_EVERY and (self._cleaning is None or self._cleaning.done()):
            self._saved_since_clean_up = 0
            self._cleaning = asyncio.get_running_loop().create_task(self.store.forget_old_updates())
            self._cleaning.add_done_callback(_cleaned)


def _cleaned(cleaning: asyncio.Task[int]) -> None:
    if not cleaning.cancelled() and (error := cleaning.exception()) is not None:
        log.warning("could not forget old update ids: %s", error)
