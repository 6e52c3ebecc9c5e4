"""Live updates: who has a table open in the Mini App, and each one's latest view of it.

The runtime tells the hub that a table changed (``changed``, under the chat's lock): the views are
made then, from the table as it is at that moment, one for each player with a page open and one
for all the spectators of a language (a spectator's view is the same for every spectator), and
each is handed to the streams that show it, which send the latest one (a slow page skips to the
newest view; none is queued without end). How many pages may be open: ``StreamLimits``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, tzinfo

from bot.model.live_table import LiveTable
from bot.tables.watchers import Watchers
from bot.web.miniapp.streams import Full, StreamLimits
from bot.web.miniapp.view import SPECTATOR, table_view, viewer_of
from bot.web.miniapp.watching import Heartbeats
from storage.jsontext import compact_json


class Subscriber:
    """One open page: a person, their language, and the newest view not yet sent."""

    def __init__(self, table_id: int, person: int, language: str) -> None:
        self.table_id, self.person, self.language = table_id, person, language
        self.latest: str | None = None
        self.ready = asyncio.Event()

    def offer(self, payload: str) -> None:
        self.latest = payload
        self.ready.set()

    async def next(self, timeout: float) -> str | None:
        """The newest view, once there is one (None after ``timeout`` seconds without)."""
        try:
            await asyncio.wait_for(self.ready.wait(), timeout)
        except TimeoutError:
            return None
        self.ready.clear()
        payload, self.latest = self.latest, None
        return payload


class Hub(Watchers):
    def __init__(self, clock: Callable[[], float], limits: StreamLimits | None = None) -> None:
        self.clock = clock
        self.limits = limits or StreamLimits()
        self.open: dict[int, set[Subscriber]] = {}  # table -> its open pages
        self.people: dict[int, int] = {}  # person -> their open pages
        self.total = 0
        self.rendered = 0  # views made for changes since start (the tests read it)
        self.zone: tzinfo = UTC  # the bot's (a closed table's 总结算 gives its times in it)
        self.heartbeats = Heartbeats(clock)  # the visible pages (bot/web/miniapp/watching.py)

    def room_for(self, person: int, live: LiveTable) -> None:
        """``Full`` unless one more page of ``person`` on ``live`` may be opened now (a table's cap
        holds back its spectators only: onlookers never keep a player from their own table)."""
        if self.people.get(person, 0) >= self.limits.per_person:
            raise Full("streams of one person", 429)
        spectator = viewer_of(live, person) == SPECTATOR
        if spectator and len(self.open.get(live.table_id, ())) >= self.limits.per_table:
            raise Full("streams of one table", 503)
        if self.total >= self.limits.total:
            raise Full("streams in all", 503)

    def subscribe(self, subscriber: Subscriber, live: LiveTable) -> None:
        self.room_for(subscriber.person, live)
        self.open.setdefault(subscriber.table_id, set()).add(subscriber)
        self.people[subscriber.person] = self.people.get(subscriber.person, 0) + 1
        self.total += 1

    def unsubscribe(self, subscriber: Subscriber) -> None:
        pages = self.open.get(subscriber.table_id)
        if pages is None or subscriber not in pages:
            return
        pages.discard(subscriber)
        if not pages:
            del self.open[subscriber.table_id]
        left = self.people[subscriber.person] - 1
        if left:
            self.people[subscriber.person] = left
        else:
            del self.people[subscriber.person]
        self.total -= 1

    def view(self, live: LiveTable, person: int, language: str) -> str:
        """The table as ``person``'s page shows it now (a spectator's: the spectators' view)."""
        return compact_json(table_view(live, viewer_of(live, person), language, self.clock(), self.zone))

    def changed(self, live: LiveTable) -> None:
        pages = self.open.get(live.table_id)
        if not pages:
            return
        now = self.clock()
        made: dict[tuple[int, str], str] = {}
        for page in pages:  # a player's own view has their hidden cards: made for them alone
            key = (viewer_of(live, page.person), page.language)
            payload = made.get(key)
            if payload is None:
                payload = made[key] = compact_json(table_view(live, key[0], page.language, now, self.zone))
            page.offer(payload)
        self.rendered += len(made)

    def watching(self, table_id: int, person: int) -> bool:
        """A fresh heartbeat of ``person``'s page of the table, and a stream of theirs open on it."""
        if not self.heartbeats.fresh(table_id, person):
            return False
        return any(page.person == person for page in self.open.get(table_id, ()))

    def count(self) -> int:
        return self.total
