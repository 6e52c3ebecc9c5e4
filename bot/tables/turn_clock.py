"""Each table's turn clock: the deadline, the reminder, the hold while a prompt is still queued, the
time given back for a prompt delivered late, and the call in the group for someone the bot cannot
tell by DM.

A turn's state is a small frozen ``Turn`` (``bot.model.live_table``) kept on the table and saved with it
(a restarted bot carries on every clock). The clock runs on PTB's JobQueue: one job per table, named after it
(``table <id>``), at the table's next moment, its reminder (when a third of the turn is left,
whoever must act gets their prompt again as a new DM) or else its deadline (the engine's
``Timeout``). Everything here runs under the table's chat lock, as every change of a table does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, cast

from apscheduler.jobstores.base import JobLookupError
from telegram.ext import CallbackContext, Job, JobQueue

from bot.display.game_kinds import KINDS
from bot.display.views.lobby import REMINDER_LEFT, turn_call
from bot.model.live_table import LiveTable
from bot.tables.open_tables import SavedBefore
from games.errors import StaleTimer
from games.table import Timeout

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from bot.display.presenter import Presenter
    from bot.display.views.common import Rendering
    from bot.model.live_table import Event
    from bot.tables.open_tables import Tables
    from bot.tables.watchers import Watchers
    from bot.updates.hearing import Hearing
    from games import Action


class ClockHost(Protocol):
    """What a turn clock needs of the bot that runs it (``bot.tables.runtime.Runtime``)."""

    tables: Tables
    presenter: Presenter
    hearing: Hearing
    watchers: Watchers
    clock: Callable[[], float]
    may_act: Callable[[], bool]

    def background(self, work: Coroutine[Any, Any, None]) -> None: ...

    async def present(self, live: LiveTable, events: list[Event]) -> None: ...

    async def save_between_actions(
        self, live: LiveTable, *, turn: bool = False, view: bool = False
    ) -> None: ...

    async def screen(self, chat_id: int) -> Rendering: ...


log = logging.getLogger(__name__)
RETRY_TIMEOUT = 5.0  # seconds before a deadline whose action failed is tried again
LATE_REMINDER = 1.0  # seconds past its moment a reminder may still go (a turn re-armed just then)
PROMPT_AWAITED = 1.0  # seconds between looks at a turn's deadline held for its prompt still queued
REMINDER, DEADLINE = "reminder", "deadline"
JobData = tuple[int, int, int, str]  # a table's job's data: chat id, table id, timer, REMINDER or DEADLINE
ARMED_WITHIN = 0.001  # seconds: a job armed this close to a moment is armed for it
AUTOPILOT_SECONDS = 1.0  # a turn of people all on autopilot (托管) is played then, as its deadline would
SWEEP_EVERY = 5.0  # seconds between looks over every table's clock (``TurnClock.sweep``)
SWEEP_LATE = 2.0  # seconds past its moment a table's clock may be before the sweep takes it in hand


def asked(live: LiveTable) -> list[int]:
    """Those who must act now and are asked to: everyone awaited but those on autopilot."""
    return [person for person in KINDS[live.game].acting(live) if live.asks(person)]


class TurnClock:
    """Every table's turn clock (see the module's docstring)."""

    def __init__(self, runtime: ClockHost, jobs: JobQueue[Any] | None) -> None:
        self.runtime = runtime
        self.jobs = jobs
        self._stopped = False  # shutting down: nothing is armed any more
        self._sweeping: asyncio.Task[None] | None = None

    # -- the table's one job ------------------------------------------------------------------------
    def arm(self, live: LiveTable, delay: float | None = None) -> None:
        """(Re-)arm the table's job at its next moment: the reminder, when a third of the turn is
        left and someone must act (none when that moment has long passed, after a restart: it would
        say a time left that is no longer true), else the deadline (or in ``delay`` seconds); a
        moment already past fires now. A job armed already for that moment is left as it is (most
        changes of a table leave its turn's clock alone: no job is made again)."""
        turn, timer = live.turn, live.engine.core.timer
        if turn.deadline is None or timer == 0 or live.engine.closed or self._stopped or self.jobs is None:
            self.disarm(live.table_id)
            return
        now = self.runtime.clock()
        remind_at = turn.deadline - live.engine.core.turn_seconds * REMINDER_LEFT
        acting, prompted = KINDS[live.game].acting(live), asked(live)
        if delay is None and acting and not prompted:  # all on autopilot (托管): played at once
            moment, delay = DEADLINE, min(AUTOPILOT_SECONDS, max(0.0, turn.deadline - now))
        elif (
            delay is None
            and not live.reminded
            and prompted
            and remind_at > now - LATE_REMINDER
            and not live.opening_unseen  # (held until the group sees the round: no reminder before)
        ):
            moment, delay = REMINDER, max(0.0, remind_at - now)
        else:
            moment, delay = DEADLINE, delay if delay is not None else max(0.0, turn.deadline - now)
        data: JobData = (live.chat_id, live.table_id, timer, moment)
        name = _name(live.table_id)
        if _armed_as(self.jobs.scheduler.get_job(name), data, delay):
            return
        self.disarm(live.table_id)  # (a job the scheduler holds pending is not replaced by its id)
        # Named after the table and found by that name as the scheduler's job id: one dict lookup
        # (``get_jobs_by_name`` goes through every job, a thousand at a thousand tables, each time).
        # However late it starts (a paused process, a starved CPU), it still acts: APScheduler's
        # default drops a job more than a second late, and the table would wait for ever.
        self.jobs.run_once(
            self._fire,
            delay,
            data=data,
            name=name,
            job_kwargs={"id": name, "replace_existing": True, "misfire_grace_time": None, "coalesce": True},
        )

    def disarm(self, table_id: int) -> None:
        if self.jobs is not None:
            with contextlib.suppress(JobLookupError):  # none armed, or it has just run
                self.jobs.scheduler.remove_job(_name(table_id))

    def moment(self, table_id: int) -> str | None:
        """What the table's job is armed for (``REMINDER`` or ``DEADLINE``), if it is armed."""
        armed = None if self.jobs is None else self.jobs.scheduler.get_job(_name(table_id))
        return None if armed is None else _data_of(Job.from_aps_job(armed))[3]

    def start(self) -> None:
        """Look over every table's clock every ``SWEEP_EVERY`` seconds (:meth:`sweep`), in a task of
        its own: a clock heals itself whatever befell the scheduler's job."""
        if self._sweeping is None and self.jobs is not None:
            self._sweeping = asyncio.create_task(self._sweep_often(), name="turn clocks")

    async def _sweep_often(self) -> None:
        while not self._stopped:
            await asyncio.sleep(SWEEP_EVERY)
            try:
                self.sweep()
            except Exception:  # (a fault of ours: the next look tries again)
                log.exception("the turn clocks could not be looked over")

    def sweep(self) -> None:
        """Every table whose moment has passed by more than ``SWEEP_LATE`` with no job that is to
        run it (lost, whatever the cause) is armed again, which fires it now; a job the scheduler
        holds overdue by more than that is carried out here instead (the timeout of a turn already
        over is ignored: carried out twice, it acts once)."""
        if (
            self._stopped
            or self.jobs is None
            or not self.jobs.scheduler.running
            or not self.runtime.may_act()
        ):
            return  # (a test's scheduler that is not started: its clock is fired by hand)
        now = self.runtime.clock()
        for live in list(self.runtime.tables.by_chat.values()):
            turn = live.turn
            if turn.deadline is None or live.engine.core.timer == 0 or live.engine.closed:
                continue
            armed = self.jobs.scheduler.get_job(_name(live.table_id))
            when = getattr(armed, "next_run_time", None)
            if armed is None or when is None:
                if turn.deadline + SWEEP_LATE < now:
                    log.warning("table %s: its deadline passed with no job: armed again", live.table_id)
                    self.arm(live)
            elif when.timestamp() + SWEEP_LATE < time.time():
                log.warning(
                    "table %s: its job is %.0f s overdue: run here", live.table_id, now - when.timestamp()
                )
                chat_id, table_id, timer, moment = _data_of(Job.from_aps_job(armed))
                self.disarm(table_id)
                self.runtime.background(self._run(chat_id, table_id, timer, moment))

    def stop(self) -> None:
        """At shutdown: nothing is armed any more (PTB lets the jobs being carried out finish
        before the connection to Telegram closes)."""
        self._stopped = True
        if self._sweeping is not None:
            self._sweeping.cancel()
            self._sweeping = None
        if self.jobs is not None:
            for job in self.jobs.jobs():
                if job.name and job.name.startswith("table "):
                    job.schedule_removal()

    async def _fire(self, context: CallbackContext[Any, Any, Any, Any]) -> None:
        assert context.job is not None
        chat_id, table_id, timer, moment = _data_of(context.job)
        await self._run(chat_id, table_id, timer, moment)

    async def _run(self, chat_id: int, table_id: int, timer: int, moment: str) -> None:
        if self._stopped or not self.runtime.may_act():
            return  # (a worker whose lease is not sure: the sweep runs it once it is, if still its)
        if moment == REMINDER:
            await self.remind(chat_id, table_id, timer)
        else:
            await self.timeout(chat_id, table_id, timer)

    # -- its moments --------------------------------------------------------------------------------
    async def remind(self, chat_id: int, table_id: int, timer: int) -> None:
        """A third of a turn is left: whoever has not acted gets their prompt again, as a new DM
        (the presenting re-arms the deadline)."""
        tables = self.runtime.tables
        async with tables.lock(chat_id):
            live = tables.get(chat_id)
            if self._stopped or live is None or live.table_id != table_id or live.engine.core.timer != timer:
                return
            live.turn = replace(live.turn, reminded=True)
            await self.runtime.save_between_actions(live, turn=True)  # a restart does not remind again
            await self.runtime.present(live, [])

    async def timeout(self, chat_id: int, table_id: int, timer: int) -> None:
        """A deadline: the table's timer runs out, unless the turn's prompt has not even been sent
        (the bot's queue is long): then it waits for it, up to one more turn's length, and the
        prompt, once sent, gives the turn the time it lost (``delivered_late``). When everyone
        awaited is on autopilot (托管), their game's autopilot move is made instead (showhand: a
        check when checking is free, else a fold; muxi: the deadline's own)."""
        runtime = self.runtime
        async with runtime.tables.lock(chat_id):
            live = runtime.tables.get(chat_id)
            if live is None or live.table_id != table_id or await self._hold_for_prompt(live, timer):
                return
            if await self._hold_while_deaf(live, timer):
                return
            kind = KINDS[live.game]
            action: Action = Timeout(timer)
            if timer != 0 and live.timer == timer and kind.acting(live) and not asked(live):
                action = kind.autopilot(live, timer)  # (the turn is this timer's: not stale)
            try:
                events = await runtime.tables.apply(live, action)
            except StaleTimer:
                return
            except SavedBefore:  # it was carried out: memory now holds what was saved
                await runtime.present(live, [])
                return
            except Exception:
                # Not saved (the database is busy, a balance refused...): memory went back to what
                # was saved, and the deadline must not be lost.
                log.exception("the deadline of table %s failed: tried again in %s s", table_id, RETRY_TIMEOUT)
                self.arm(live, delay=RETRY_TIMEOUT)
                return
            await runtime.present(live, events)  # saved: the next moment is armed while showing it

    async def _hold_for_prompt(self, live: LiveTable, timer: int) -> bool:
        """The deadline of turn ``timer`` is held while someone's prompt waits to be sent (looked at
        again every ``PROMPT_AWAITED`` s, one more turn at most), and for as long as the group has
        not seen the round's table message (nobody has seen their cards); once it has gone, the
        turn starts over from then, shown with its new deadline (``delivered_late`` leaves a held
        turn alone)."""
        turn, core = live.turn, live.engine.core
        if turn.deadline is None or core.timer != timer:
            return False
        unseen = live.opening_unseen
        waits = unseen or self.runtime.presenter.prompt_waits(live)
        if waits and (unseen or self.runtime.clock() <= turn.deadline + core.turn_seconds):
            live.turn = replace(turn, held=True)
            self.arm(live, delay=PROMPT_AWAITED)
            return True
        if not turn.held or waits:
            return False
        live.turn = replace(turn, held=False, deadline=self.runtime.clock() + core.turn_seconds)
        await self.runtime.present(live, [])  # (armed, and the open Mini Apps told, while showing it)
        return True

    async def _hold_while_deaf(self, live: LiveTable, timer: int) -> bool:
        """The deadline of turn ``timer`` is held while the bot cannot hear the presses (looked at
        again every ``PROMPT_AWAITED`` s); once it hears again, the turn gets back every second it
        was deaf while it ran (``bot/updates/hearing.py``), shown with its new deadline."""
        turn, core, hearing = live.turn, live.engine.core, self.runtime.hearing
        if turn.deadline is None or core.timer != timer:
            return False
        if hearing.is_deaf():
            self.arm(live, delay=PROMPT_AWAITED)
            return True
        now = self.runtime.clock()
        began = turn.heard_from
        if began is None:
            began = turn.deadline - core.turn_seconds - turn.given_back
        lost = hearing.deaf_within(began, now)
        live.turn = replace(turn, heard_from=now)
        if lost <= 0 or turn.deadline + lost <= now:
            return False
        live.turn = replace(live.turn, deadline=turn.deadline + lost)
        log.info("table %s: its turn gets back %.1f s the bot could not hear", live.table_id, lost)
        await self.runtime.present(live, [])  # (armed, and the open Mini Apps told, while showing it)
        return True

    def delivered_late(self, live: LiveTable, seconds: float) -> None:
        """A turn's prompt reached people ``seconds`` after the turn began: the turn gets that time
        back (once per turn, the longest delay), so nobody times out because of a queue."""
        turn, seconds = live.turn, min(seconds, live.engine.core.turn_seconds)
        if turn.held or turn.deadline is None or live.engine.closed or turn.timer != live.engine.core.timer:
            return  # (a held turn: its deadline came first, a whole turn follows)
        extra = seconds - turn.given_back
        if extra <= 0:
            return
        live.turn = replace(turn, deadline=turn.deadline + extra, given_back=seconds)
        self.arm(live)
        self.runtime.watchers.changed(live)  # the open Mini Apps count down to the new deadline

    async def call(self, live: LiveTable) -> None:
        """Those who must act and cannot be told by DM are called in the group by a new message (it
        notifies them), withdrawn when the turn is over; one call a turn."""
        people = [person for person in asked(live) if person in live.view.dm_failed]
        replies = self.runtime.presenter.replies
        calling = bool(people and live.turn.deadline) and not live.opening_unseen
        if not calling:
            replies.withdraw(live.chat_id, live.table_id)  # (nothing when no call is out)
        elif not live.turn.called:  # (the last turn's call is withdrawn first)
            text = turn_call(live, await self.runtime.screen(live.chat_id), people)
            replies.call(live.chat_id, live.table_id, text, live.message_id)
        live.turn = replace(live.turn, called=calling)


def _name(table_id: int) -> str:
    return f"table {table_id}"


def _data_of(job: Job[Any]) -> JobData:
    """What a table's job was armed with (PTB keeps a job's data as an ``object``)."""
    return cast(JobData, job.data)


def _armed_as(armed: Any, data: JobData, delay: float) -> bool:
    """Whether the scheduler's job ``armed`` (None: none) is armed already for ``data`` in ``delay``
    seconds (within a millisecond: the clock read again gives the same moment a little later)."""
    when: datetime | None = getattr(armed, "next_run_time", None)  # (a job held pending has none)
    if when is None or Job.from_aps_job(armed).data != data:
        return False
    return abs(when.timestamp() - (time.time() + delay)) < ARMED_WITHIN
