"""Live updates: who has a table open in the Mini App, and each one's latest view of it.

The runtime tells the hub that a table changed (``changed``, under the chat's lock): each open
page's view is made then, from the table as it is at that moment, and handed to its stream, which
sends the latest one (a slow page skips to the newest view; none is queued without end).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from bot.live import LiveTable
from bot.miniapp.view import table_view
from bot.runtime import Watchers


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
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.open: dict[int, set[Subscriber]] = {}  # table -> its open pages

    def subscribe(self, subscriber: Subscriber) -> None:
        self.open.setdefault(subscriber.table_id, set()).add(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        pages = self.open.get(subscriber.table_id)
        if pages is not None:
            pages.discard(subscriber)
            if not pages:
                del self.open[subscriber.table_id]

    def changed(self, live: LiveTable) -> None:
        pages = self.open.get(live.table_id)
        if not pages:
            return
        now = self.clock()
        for page in pages:  # each its own: only the viewer's own hidden cards are ever in it
            page.offer(encode(table_view(live, page.person, page.language, now)))

    def count(self) -> int:
        return sum(len(pages) for pages in self.open.values())


def encode(view: dict[str, object]) -> str:
    return json.dumps(view, ensure_ascii=False, separators=(",", ":"))
