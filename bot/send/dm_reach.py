"""Whether the bot can reach someone's DM: one fact per person, shared by the replies, the tables
and the Mini App, and saved (``people.dm_refused``), so that Telegram's 403 for a DM never opened
(or the bot blocked) is met once, not once by each part of the bot, nor again after a restart.

Learnt from Telegram's answers (a refusal; a DM delivered) and from the person (``/start`` in the
DM opens it); read with the person's row wherever the bot reads it anyway (a command, a seat), which
is how another worker's learning reaches this one. Whoever sits at a table follows it there (the
runtime's ``changed``: the table names them in the group, or gives them their DM back).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from storage import Person, Store

log = logging.getLogger(__name__)


class DmReach:
    def __init__(self, store: Store, background: Callable[[Coroutine[Any, Any, None]], None]) -> None:
        self.store = store
        self.background = background
        self._refused: dict[int, bool] = {}  # as last learnt or read (a person never seen: not refused)
        # Told of every change (person, refused): their table follows it (the runtime sets this).
        self.changed: Callable[[int, bool], None] = lambda person, refused: None

    def refused(self, person: int) -> bool:
        """Did Telegram refuse a message to ``person``'s DM (and they have not opened it since)?"""
        return self._refused.get(person, False)

    def read(self, person: Person) -> None:
        """``person`` as the database holds them (another worker may have learnt of their DM)."""
        before = self._refused.get(person.id, False)
        self._refused[person.id] = person.dm_refused
        if before != person.dm_refused:
            self.changed(person.id, person.dm_refused)

    def learn(self, person: int, *, refused: bool) -> None:
        """Telegram refused a message to their DM (``refused``), or one reached it, or they opened
        it: kept and saved (in the background; a failed save is learnt again next time). A DM
        reaching someone this process knew nothing of is nothing new (no write per person)."""
        before = self._refused.get(person)
        self._refused[person] = refused
        if before is refused or (before is None and not refused):
            return
        self.background(self._save(person, refused))
        if bool(before) != refused:
            self.changed(person, refused)

    async def _save(self, person: int, refused: bool) -> None:
        try:
            await self.store.set_dm_refused(person, refused)
        except Exception:
            log.exception("what Telegram said of %s's DM could not be saved", person)
