"""Each update handled once, however often Telegram delivers it.

Telegram sends an update again when it did not see it acknowledged: a webhook post whose answer
was lost or late, a ``getUpdates`` batch taken just before a crash. Handled twice, a ``/leave``
would confirm itself (an escape charged) and a press would act twice. ``Deliveries.first_time`` is
asked before any handler runs (``bot/app.py``), in webhook and polling modes alike.

The recent ids are kept in memory (checked and claimed without waiting, so two deliveries of one
update handled at once cannot both pass), and saved in the database in the background
(``storage/updates.py``, group-committed with the other writes). An id not in memory but no newer
than the newest one saved before (after a restart, or long ago in this run) is looked up there:
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
        self._unsaved: list[int] = []
        self._saving: asyncio.Task[None] | None = None
        self._saved_since_clean_up = 0

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
        self._unsaved.append(update_id)
        if self._saving is None:
            self._saving = asyncio.create_task(self._save())
        return True

    async def flush(self) -> None:
        """Wait until every id taken so far is saved (at shutdown, before the store closes)."""
        while self._saving is not None:
            await asyncio.wait([self._saving])

    async def _save(self) -> None:
        try:
            while self._unsaved:
                batch, self._unsaved = self._unsaved, []
                try:
                    await self.store.remember_updates(batch)
                    self._saved_since_clean_up += len(batch)
                    if self._saved_since_clean_up >= FORGET_EVERY:
                        self._saved_since_clean_up = 0
                        await self.store.forget_old_updates()
                except Exception as error:  # memory still has them; a restart may handle them again
                    log.warning("could not save %d taken update ids: %s", len(batch), error)
        finally:
            self._saving = None
