"""``GET /healthz``: can the bot do its work now?

Healthy while the database takes a write and Telegram answered a request within the last
``SILENCE`` seconds. Each check commits a write that changes nothing (``Store.probe_write``, queued
like any other write) and gives it ``WRITE_PATIENCE`` seconds: one still waiting then (the database
locked by another program) counts as failed, and the next check waits on that same write rather
than queueing another. A bot with nothing to do still asks Telegram something every ``PING_AFTER``
seconds (``keep_in_touch``, run by the JobQueue), so a silence is Telegram's, never the bot's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from telegram import Bot
from telegram.error import TelegramError

from bot.ops.metrics import Metrics

if TYPE_CHECKING:
    from bot.cluster.workers import Worker
    from bot.tables.runtime import Runtime
    from storage import Store

log = logging.getLogger(__name__)
SILENCE = 60.0  # seconds without a successful Bot API request before the bot counts as cut off
WRITE_PATIENCE = 2.0  # seconds a write may take before the database counts as not writable
PING_AFTER = 20.0  # seconds of quiet after which the bot asks Telegram something itself


class Health:
    def __init__(self, metrics: Metrics, clock: Callable[[], float] = time.monotonic) -> None:
        self.metrics = metrics
        self.clock = clock
        self.started = clock()
        self._probe: asyncio.Task[None] | None = None
        self._webhook_error: datetime | None = None  # the webhook delivery error last logged

    async def check(
        self, runtime: Runtime | None, worker: Worker | None = None
    ) -> tuple[bool, dict[str, object]]:
        """Healthy or not, and the small JSON saying why."""
        problems = []
        write_error = "not open yet" if runtime is None else await self.write_error(runtime.store)
        if write_error is not None:
            problems.append(f"the database cannot be written: {write_error}")
        answered = self.metrics.last_answer
        silence = None if answered is None else self.clock() - answered
        if silence is None or silence > SILENCE:
            problems.append(f"Telegram has not answered for more than {SILENCE:g} s")
        report: dict[str, object] = {
            "status": "failing" if problems else "ok",
            "uptime_seconds": round(self.clock() - self.started, 1),
            "open_tables": len(runtime.tables.by_chat) if runtime is not None else 0,
            "database_writable": write_error is None,
            "telegram_answered_seconds_ago": None if silence is None else round(silence, 1),
        }
        if worker is not None:  # one of several workers: a worker owning nothing is healthy, idle
            report.update(
                worker=worker.name,
                partitions_owned=len(worker.owned),
                partitions=worker.count,
                workers=worker.workers,
            )
        if problems:
            report["problems"] = problems
        return not problems, report

    async def write_error(self, store: Store) -> str | None:
        """Why the database takes no write now (None: it took one)."""
        probe = self._probe
        if probe is None or probe.done():
            probe = self._probe = asyncio.create_task(store.probe_write())
            probe.add_done_callback(_retrieve)
        done, _ = await asyncio.wait({probe}, timeout=WRITE_PATIENCE)
        if not done:
            return f"a write has waited more than {WRITE_PATIENCE:g} s"
        if probe.cancelled():
            return "the write was cancelled"
        error = probe.exception()
        return None if error is None else f"{type(error).__name__}: {error}"

    async def keep_in_touch(self, bot: Bot, webhook: bool) -> None:
        """Ask Telegram something if nothing else did for ``PING_AFTER`` seconds: by webhook, the
        webhook's state (an error Telegram met delivering updates is logged once); else ``getMe``."""
        answered = self.metrics.last_answer
        if answered is not None and self.clock() - answered < PING_AFTER:
            return
        try:
            if not webhook:
                await bot.get_me()
                return
            info = await bot.get_webhook_info()
        except TelegramError as error:  # the silence shows in /healthz; the next ping tries again
            log.warning("Telegram did not answer: %s", error)
            return
        if info.last_error_date is not None and info.last_error_date != self._webhook_error:
            self._webhook_error = info.last_error_date
            log.warning(
                "Telegram could not deliver updates to the webhook (%d waiting): %s",
                info.pending_update_count,
                info.last_error_message,
            )


def _retrieve(probe: asyncio.Task[None]) -> None:
    """A probe's error is read here too, so one nobody waited for is never reported as lost."""
    with contextlib.suppress(asyncio.CancelledError):
        probe.exception()
