"""Whether the bot hears the presses, and the polling that hears them.

A turn's clock must count only while the bot can hear the person it waits for. Telegram may take
the bot's sends and still not give it updates: ``getUpdates`` fails (a 5xx, a dropped connection),
or stalls (a peer that keeps the socket open and answers nothing), or, by webhook, Telegram holds
updates it does not post. Meanwhile every press waits at Telegram. :class:`Hearing` keeps when the
bot was deaf (by the tables' clock, ``time.time``); a deadline that comes meanwhile is held, and once
the bot hears again the turn gets back the time it was deaf (``bot/tables/turn_clock.py``).

- **Polling** (:func:`poll`): one ``getUpdates`` after the other; a poll that fails makes the bot
  deaf from the start of that poll (what came meanwhile was not heard) and is tried again after
  ``POLL_PAUSES``, a few seconds at most, so the bot hears again within seconds of Telegram coming
  back; a poll still unanswered ``STALLED`` seconds after its long poll should have ended is taken
  as deaf from its start. A poll that is answered makes the bot hear again.
- **Webhook**: each post heard makes the bot hear; a look every ``WEBHOOK_LOOK`` seconds at
  ``getWebhookInfo`` that finds updates waiting at Telegram, and still no post ``WEBHOOK_QUIET``
  seconds later, makes it deaf since they were first seen (``bot/serve.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from telegram import Bot, Update
from telegram.error import TelegramError

log = logging.getLogger(__name__)
LONG_POLL = 25  # seconds getUpdates waits for news (Telegram's long poll)
POLL_PAUSES = (0.5, 1.0, 2.0, 3.0)  # seconds between tries while getUpdates fails; the last repeats
STALLED = 5.0  # seconds past its long poll a poll may go unanswered before the bot counts as deaf
WEBHOOK_LOOK = 5.0  # seconds between looks at the webhook's state
WEBHOOK_QUIET = 5.0  # seconds without a post, with updates waiting at Telegram: deaf
KEPT = 64  # deaf spells remembered (the longest turn is minutes; spells are seconds apart at least)


class Hearing:
    """When the bot could not hear updates: the spells over, and the one going on."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.spells: deque[tuple[float, float]] = deque(maxlen=KEPT)  # (from, to), over
        self.deaf_since: float | None = None
        self.asking_since: float | None = None  # a poll in flight, since then
        self.last_heard = clock()
        self.waiting_seen: float | None = None  # by webhook: updates seen waiting, no post since
        # Told of each change (with several workers, the one that polls tells the others).
        self.told: Callable[[float | None, float | None], None] | None = None

    def deaf(self, since: float | None = None) -> None:
        """The bot cannot hear now (since ``since``, or now)."""
        if self.deaf_since is None:
            self.deaf_since = self.clock() if since is None else since
            log.warning("updates are not coming in: turns' clocks are held")
            if self.told is not None:
                self.told(self.deaf_since, None)

    def _deaf_since(self, now: float) -> float | None:
        """When the spell going on began: the bot was told, or a poll has stalled since it was sent."""
        if self.deaf_since is not None:
            return self.deaf_since
        asking = self.asking_since
        return asking if asking is not None and now > asking + LONG_POLL + STALLED else None

    def heard(self) -> None:
        """Updates come in: a deaf spell, if any, is over (a poll that stalled, answered at last)."""
        now = self.clock()
        self.last_heard, self.waiting_seen = now, None
        since = self._deaf_since(now)
        self.deaf_since = None
        if since is not None:
            self.spells.append((since, now))
            log.warning("updates come in again after %.1f s: turns' clocks go on", now - since)
            if self.told is not None:
                self.told(since, now)

    def learn(self, since: float, until: float | None) -> None:
        """Another worker (the one that polls) tells of a deaf spell: begun (``until`` None) or over."""
        if until is None:
            self.deaf_since = self.deaf_since if self.deaf_since is not None else since
            return
        self.deaf_since = None
        self.spells.append((since, until))

    def is_deaf(self) -> bool:
        return self._deaf_since(self.clock()) is not None

    def deaf_within(self, start: float, end: float) -> float:
        """Seconds the bot was deaf between ``start`` and ``end`` (the spell going on included)."""
        going_on = self._deaf_since(self.clock())
        spells = [*self.spells, *([] if going_on is None else [(going_on, end)])]
        return sum(max(0.0, min(end, to) - max(start, since)) for since, to in spells)


Put = Callable[[Sequence[Update]], Awaitable[Any]]


async def poll(bot: Bot, kinds: Sequence[str], put: Put, hearing: Hearing) -> None:
    """Take updates from Telegram for ever: each batch ``put`` (then confirmed to Telegram by the
    next poll's offset); failures make the bot deaf and are tried again within seconds."""
    offset, failed = 0, 0
    while True:
        hearing.asking_since = hearing.clock()
        try:
            if offset == 0:
                await bot.delete_webhook(drop_pending_updates=False)
            updates = await bot.get_updates(offset=offset, timeout=LONG_POLL, allowed_updates=list(kinds))
            if updates:
                await put(updates)
                offset = updates[-1].update_id + 1
        except Exception as error:  # Telegram's, the network's or the database's: tried again soon
            pause = POLL_PAUSES[min(failed, len(POLL_PAUSES) - 1)]
            now, asked = hearing.clock(), hearing.asking_since
            # Deaf from now, or from the poll's start if it hung past its long poll (nothing came).
            hearing.deaf(since=asked if asked is not None and now - asked > LONG_POLL else now)
            hearing.asking_since = None
            failed += 1
            log.warning(
                "getUpdates failed (%s: %s): polling again in %g s", type(error).__name__, error, pause
            )
            await asyncio.sleep(pause)
            continue
        hearing.heard()
        hearing.asking_since = None
        failed = 0


async def look_at_webhook(bot: Bot, hearing: Hearing) -> None:
    """By webhook: updates seen waiting at Telegram, and no post since for ``WEBHOOK_QUIET``
    seconds, make the bot deaf since they were seen (the next post makes it hear again)."""
    try:
        info = await bot.get_webhook_info()
    except TelegramError as error:  # (the health check tells of a Telegram that does not answer)
        log.debug("getWebhookInfo failed: %s", error)
        return
    now = hearing.clock()
    if not info.pending_update_count:
        hearing.waiting_seen = None
    elif hearing.waiting_seen is None:
        hearing.waiting_seen = now  # (a post may be on its way: deaf only if none comes)
    elif now - hearing.waiting_seen >= WEBHOOK_QUIET:
        hearing.deaf(since=hearing.waiting_seen)
