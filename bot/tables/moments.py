"""A moment of each table's on PTB's JobQueue, for what happens between turns: one job per table and
kind (``<kind> <table id>``), armed for one moment, re-armed by replacing it, carried out however
late it starts (a paused process, a starved CPU: the table must not wait for ever).

The turn clock (``bot/tables/turn_clock.py``) keeps its own job; this is for the pause after a
round's results (``bot/tables/breath.py``) and an all-in's reveal (``bot/tables/reveals.py``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol, cast

from apscheduler.jobstores.base import JobLookupError
from telegram.ext import CallbackContext, JobQueue

from bot.model.live_table import LiveTable

if TYPE_CHECKING:
    from bot.tables.open_tables import Tables

#: What a moment does when it comes, to its table (its chat's lock held).
Come = Callable[[LiveTable], Coroutine[Any, Any, None]]


class MomentsHost(Protocol):
    """What a moment needs of the bot (``bot.tables.runtime.Runtime``)."""

    tables: Tables
    may_act: Callable[[], bool]


class TableMoments:
    """One job per table for ``kind``; nothing is armed without a JobQueue (a bot with none)."""

    def __init__(self, jobs: JobQueue[Any] | None, kind: str, host: MomentsHost, come: Come) -> None:
        self.jobs = jobs
        self.kind = kind
        self.host = host
        self.come = come
        self.stopped = False

    def name(self, table_id: int) -> str:
        return f"{self.kind} {table_id}"

    def arm(self, chat_id: int, table_id: int, delay: float) -> None:
        """The table's moment in ``delay`` seconds (one armed before is replaced)."""
        if self.jobs is None or self.stopped:
            return
        name = self.name(table_id)
        self.disarm(table_id)
        self.jobs.run_once(
            self._fired,
            max(0.0, delay),
            data=(chat_id, table_id),
            name=name,
            job_kwargs={"id": name, "replace_existing": True, "misfire_grace_time": None, "coalesce": True},
        )

    def disarm(self, table_id: int) -> None:
        if self.jobs is not None:
            with contextlib.suppress(JobLookupError):  # none armed, or it has just run
                self.jobs.scheduler.remove_job(self.name(table_id))

    def due_in(self, table_id: int) -> float | None:
        """Seconds until the table's moment (None: none armed); a test reads it, then fires it."""
        armed = None if self.jobs is None else self.jobs.scheduler.get_job(self.name(table_id))
        if armed is None:
            return None
        when = getattr(armed, "next_run_time", None) or armed.trigger.run_date  # (pending: not started)
        return float(when.timestamp() - time.time())

    def stop(self) -> None:
        """At shutdown: nothing more is armed, and what was is taken away."""
        self.stopped = True
        if self.jobs is not None:
            for job in self.jobs.jobs():
                if job.name and job.name.startswith(f"{self.kind} "):
                    job.schedule_removal()

    async def fire(self, chat_id: int, table_id: int) -> None:
        """The table's moment came (a test fires it by hand): carried out on the table under its
        chat's lock, if it is still held here; on a worker whose lease is not sure, looked at again
        in a second (if another worker owns the table by then, it is not here)."""
        if self.stopped:
            return
        if not self.host.may_act():
            self.arm(chat_id, table_id, 1.0)
            return
        tables = self.host.tables
        async with tables.lock(chat_id):
            live = tables.get(chat_id)
            if live is not None and live.table_id == table_id:
                await self.come(live)

    async def _fired(self, context: CallbackContext[Any, Any, Any, Any]) -> None:
        assert context.job is not None
        chat_id, table_id = cast(tuple[int, int], context.job.data)
        await self.fire(chat_id, table_id)
