"""The running bot: settings, storage, the open tables, what is shown, and the turn timers.

Every change of a table is made while the caller holds the chat's lock: applied and saved
(``Tables.apply`` / ``Tables.seat``), then presented (:meth:`Paiju.present`: the deadline re-armed,
the table message and the private cards queued for the presenter). :meth:`Paiju.perform` does both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Coroutine, Hashable, Iterable
from dataclasses import replace
from datetime import datetime
from random import Random
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.jobstores.base import JobLookupError
from telegram import Bot
from telegram.ext import CallbackContext, Job, JobQueue

from bot.i18n import language_of
from bot.kinds import KINDS
from bot.live import REMINDED, LiveTable, Notice
from bot.outbox import Limits
from bot.presenter import Presenter
from bot.service import SavedBefore, Tables
from bot.settings import Settings
from bot.views.common import Rendering
from bot.views.lobby import REMINDER_LEFT, turn_call
from games.errors import StaleTimer
from games.events import Paid, RoundStarted
from games.fairness import Shuffle
from games.table import Cancel, Credit, Timeout
from storage import ChatSettings, Person, Store

log = logging.getLogger(__name__)
RUNTIME = "paiju"
RETRY_TIMEOUT = 5.0  # seconds before a deadline whose action failed is tried again
LATE_REMINDER = 1.0  # seconds past its moment a reminder may still go (a turn re-armed just then)
PROMPT_AWAITED = 1.0  # seconds between looks at a turn's deadline held for its prompt still queued


class Watchers:
    """Who is told that a table changed (nobody, unless the Mini App's hub takes this place)."""

    def changed(self, live: LiveTable) -> None:
        """``live`` changed (the caller holds its chat's lock): called once per presented change."""


class Runtime:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        bot: Bot,
        *,
        rng: Random | None = None,
        clock: Callable[[], float] = time.time,
        limits: Limits | None = None,
        jobs: JobQueue[Any] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.bot = bot
        self.rng = rng or secrets.SystemRandom()
        self.clock = clock
        self.tables = Tables(store, clock)
        limits = limits or Limits.of_settings(settings.table_requests_per_minute)
        self.presenter = Presenter(bot, store, limits, self)
        self._extended: dict[int, tuple[int, float]] = {}  # the time each table's turn got back: (timer, s)
        self._held: dict[int, int] = {}  # tables whose deadline waits for its turn's prompt: table -> timer
        self.zone = ZoneInfo(settings.timezone)
        self.chat_titles: dict[int, str] = {}
        self._time_shown: tuple[float, str] = (float("nan"), "")
        self.jobs = jobs
        self.deadlines: dict[int, Job[Any]] = {}  # each table's armed deadline
        self.reminders: dict[int, Job[Any]] = {}  # each table's armed reminder (a turn's last third)
        self._stopped = False  # shutting down: no deadline is armed any more
        self._languages: dict[int, str | None] = {}  # the people's chosen languages (read once)
        self._chat_settings: dict[int, ChatSettings] = {}  # each chat's settings (read once)
        self.running: set[asyncio.Task[None]] = set()  # work started in the background
        # (table, person): when the price of an escape reached them (None: its reply is still to be
        # sent), and the price
        self._escapes: dict[tuple[int, int], tuple[float | None, Hashable]] = {}
        self._called: dict[int, int] = {}  # each table's turn (timer) whose call is out in the group
        self.watchers: Watchers = Watchers()  # told of every change of a table (the Mini App's hub)

    # -- languages and screens --------------------------------------------------------------------
    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """A chat's settings as they apply, read once and then kept (every change goes through the
        method below): the operator's turn and lobby seconds where the chat chose none."""
        if chat_id not in self._chat_settings:
            self._chat_settings[chat_id] = self._in_effect(await self.store.chat_settings(chat_id))
        return self._chat_settings[chat_id]

    async def update_chat_settings(self, chat_id: int, **changes: Any) -> ChatSettings:
        self._chat_settings.pop(chat_id, None)  # a failed update must not leave the old one kept
        updated = await self.store.update_chat_settings(chat_id, **changes)
        self._chat_settings[chat_id] = self._in_effect(updated)
        return self._chat_settings[chat_id]

    def _in_effect(self, chosen: ChatSettings) -> ChatSettings:
        return replace(
            chosen,
            turn_seconds=chosen.turn_seconds or self.settings.turn_seconds,
            lobby_seconds=chosen.lobby_seconds or self.settings.lobby_seconds,
        )

    async def chat_language(self, chat_id: int) -> str:
        return (await self.chat_settings(chat_id)).language or self.settings.language

    async def person_language(self, person: int, telegram_code: str | None = None) -> str:
        """The language ``person`` chose, else the one of their Telegram app, else the bot's."""
        if person not in self._languages:
            known = await self.store.get_person(person)
            self._languages[person] = known.language if known is not None else None
        return self._languages[person] or language_of(telegram_code, self.settings.language)

    async def set_person_language(self, person: int, name: str, language: str) -> Person:
        """Record ``person``'s language (creating them with the starting grant on first sight)."""
        known, _ = await self.store.ensure_person(person, name, language)
        self._languages[person] = language
        return known

    async def screen(self, chat_id: int) -> Rendering:
        return Rendering(await self.chat_language(chat_id), self.time_text, self.bot.username or "")

    def time_text(self, moment: float) -> str:
        """``21:05:30`` in the bot's zone (the last one kept: one action's views all show one deadline)."""
        if self._time_shown[0] != moment:
            self._time_shown = (moment, datetime.fromtimestamp(moment, self.zone).strftime("%H:%M:%S"))
        return self._time_shown[1]

    def shuffle(self, game: str) -> Shuffle:
        return Shuffle.new(KINDS[game].deck, self.rng)

    # -- changing a table (the caller holds the chat's lock) ------------------------------------------
    async def perform(self, live: LiveTable, action: object) -> list[object]:
        events = await self.tables.apply(live, action)
        await self.present(live, events)
        return events

    async def present(self, live: LiveTable, events: list[object]) -> None:
        """Queue what an applied action changed: the table message (everyone's view) and each private
        view. Nothing waits for Telegram here: the presenter sends within each chat's budget."""
        self.arm(live)
        self._credit_elsewhere(live, events)
        screen = await self.screen(live.chat_id)
        if any(isinstance(event, RoundStarted) for event in events):
            self.presenter.retire_dms(live)
            self.presenter.retire_table(
                live, screen
            )  # each round its own message; the last keeps its results
        self.presenter.want_table(live, screen)
        self._call_turn(live, screen)
        kind = KINDS[live.game]
        await self.send_private(live, [*kind.private_people(live), *live.dm_ids, *kind.acting(live)])
        self.watchers.changed(live)  # the open Mini Apps (bot/miniapp/hub.py)

    async def credit_outside(self, person: int) -> None:
        """Coins came to ``person`` from outside their table (the daily bonus, a refund from a table
        they escaped): the table learns of them, so its view of their coins stays exact. The
        difference with the wallet is credited: someone who sat down since already brought it."""
        live = self.tables.table_of(person)
        if live is None:
            return
        async with self.tables.lock(live.chat_id):
            seat = live.engine.core.seat_of(person)
            if seat is None or self.tables.get(live.chat_id) is not live:
                return
            missing = await self.store.balance(person) - seat.balance
            if missing > 0:
                await self.present(live, await self.tables.apply(live, Credit(person, missing)))

    def _credit_elsewhere(self, live: LiveTable, events: list[object]) -> None:
        """Paid to people seated at another table (a refund to someone who escaped here): that table
        learns of it, later (its chat's lock is never taken while this one's is held)."""
        for event in events:
            if (
                isinstance(event, Paid)
                and isinstance(event.payee, int)
                and self.tables.table_of(event.payee) not in (None, live)
            ):
                self.background(self.credit_outside(event.payee))

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def wait_background(self) -> None:
        """Until the work started in the background is done (at shutdown, in tests)."""
        while self.running:
            await asyncio.gather(*self.running, return_exceptions=True)

    async def wait_idle(self) -> None:
        """Until nothing is left to do or send (tests read what people see after it)."""
        while self.running or self.presenter.sender.tasks:
            await self.wait_background()
            await self.presenter.sender.drain()

    async def send_private(self, live: LiveTable, people: Iterable[int]) -> None:
        """Bring these people's DMs up to date (those who never opened one have the table's link
        and the popup instead)."""
        # The group's title as last seen, kept with the table (a restarted bot names it the same).
        title = live.view.title = self.chat_titles.get(live.chat_id) or live.view.title
        for person in dict.fromkeys(people):
            if person not in live.view.dm_failed:
                screen = Rendering(
                    await self.person_language(person), self.time_text, self.bot.username or ""
                )
                self.presenter.want_dm(live, person, screen, title)

    def _call_turn(self, live: LiveTable, screen: Rendering) -> None:
        """Those who must act and cannot be told by DM are called in the group by a new message (it
        notifies them), withdrawn when the turn is over; one call a turn."""
        people = [person for person in KINDS[live.game].acting(live) if person in live.view.dm_failed]
        turn = live.engine.core.timer if people and live.view.deadline else 0
        if self._called.get(live.table_id, 0) == turn:
            return
        self.presenter.withdraw(live.table_id)
        if not turn:
            del self._called[live.table_id]
            return
        self._called[live.table_id] = turn
        self.presenter.call(live.chat_id, live.table_id, turn_call(live, screen, people), live.message_id)

    def confirmed_escape(
        self, table_id: int, person: int, within: float, quote: Hashable, by_reply: bool = False
    ) -> bool:
        """An escape must be asked for twice: True the second time within ``within`` seconds of the
        price reaching them, at the same ``quote`` (the price they were told, in that round: a bet in
        between asks again), else the request is remembered (the first of two). A price still on its
        way by a reply (``price_by_reply``) is not answered yet: a ``/leave`` again (``by_reply``)
        waits for it; a press, whose popup shows the price at once, is the first of two itself."""
        now = self.clock()
        first = self._escapes.get((table_id, person))
        if first is not None and first[1] == quote:
            if first[0] is None and by_reply:
                return False
            if first[0] is None:
                self._escapes[(table_id, person)] = (now, quote)
                return False
            if now - first[0] <= within:
                del self._escapes[(table_id, person)]
                return True
        if len(self._escapes) > 1_000:
            self._escapes = {
                key: asked
                for key, asked in self._escapes.items()
                if asked[0] is None or now - asked[0] <= within
            }
        self._escapes[(table_id, person)] = (now, quote)  # (a press's popup shows the price at once)
        return False

    def price_by_reply(self, table_id: int, person: int) -> Callable[[], None]:
        """The price of the escape just asked goes by a reply (``/leave``): the confirmation window
        starts when it has reached them, when the returned callback is called."""
        asked = self._escapes.get((table_id, person))
        if asked is not None:
            self._escapes[(table_id, person)] = (None, asked[1])

        def seen() -> None:
            waiting = self._escapes.get((table_id, person))
            if waiting is not None and waiting[0] is None and asked is not None and waiting[1] == asked[1]:
                self._escapes[(table_id, person)] = (self.clock(), waiting[1])

        return seen

    # -- what Telegram answered (the presenter's reactions) ---------------------------------------
    async def group_moved(self, live: LiveTable, new_chat_id: int) -> None:
        """The group became a supergroup: the table follows it (or ends: see ``migrate``)."""
        async with self.tables.lock(live.chat_id):
            if self.tables.get(live.chat_id) is not live:
                return
            followed = await self.migrate(live.chat_id, new_chat_id)
        if followed is not None:
            async with self.tables.lock(followed.chat_id):
                await self.present(followed, [])

    async def group_lost(self, live: LiveTable) -> None:
        """The bot was removed from the group: nobody can play on there."""
        async with self.tables.lock(live.chat_id):
            if self.tables.get(live.chat_id) is live:
                await self.abandon(live)

    async def dm_blocked(self, live: LiveTable, person: int) -> None:
        """``person`` never opened a DM with the bot: the table says so once (with the link that
        opens it), and from then on mentions them on the line for their turn."""
        async with self.tables.lock(live.chat_id):
            if person not in live.view.dm_failed and self.tables.get(live.chat_id) is live:
                live.view.dm_failed.append(person)
                live.view.notices.append(Notice("dm.failed", person, 0, live.round_no))
                screen = await self.screen(live.chat_id)
                self.presenter.want_table(live, screen)
                self._call_turn(live, screen)

    def delivered_late(self, live: LiveTable, seconds: float) -> None:
        """A turn's prompt reached people ``seconds`` after the turn began: the turn gets that time
        back (once per turn, the longest delay), so nobody times out because of a queue."""
        timer, seconds = live.engine.core.timer, min(seconds, live.engine.core.turn_seconds)
        if self._held.get(live.table_id) == timer:  # its deadline came first: a whole turn follows
            return
        given = self._extended.get(live.table_id, (0, 0.0))
        extra = seconds - given[1] if given[0] == timer else seconds
        if extra <= 0 or live.view.deadline is None or live.engine.closed:
            return
        self._extended[live.table_id] = (timer, seconds)
        live.view.deadline += extra
        self.arm(live)
        self.watchers.changed(live)  # the open Mini Apps count down to the new deadline

    async def abandon(self, live: LiveTable) -> None:
        """End a table the bot can no longer show (removed from its group): the escrow goes back."""
        log.warning("the bot cannot reach chat %s: its table %s is cancelled", live.chat_id, live.table_id)
        await self.end_now(live)

    async def end_now(self, live: LiveTable) -> None:
        """Cancel a table that cannot go on where it is shown: the escrow goes back (reaching those
        seated elsewhere), no deadline stays armed, no DM keeps its buttons."""
        if not live.engine.closed:
            self._credit_elsewhere(live, await self.tables.apply(live, Cancel()))
        self.arm(live)
        await self.send_private(live, live.dm_ids)

    async def migrate(self, old: int, new: int) -> LiveTable | None:
        """A group was upgraded to a supergroup (the caller holds the old chat's lock): its table
        follows it, unless the new chat opened one first (one table a chat): then the old one ends,
        its escrow goes back and the group is told, so no table ever plays on unseen."""
        async with self.tables.lock(new):  # (always taken after the old chat's: no cycle)
            live = self.tables.get(old)
            if live is not None and self.tables.get(new) is not None:
                await self.end_now(live)
                live.view.closed_reason = "upgraded"  # said once, in the new chat (saved: cancelled)
                self.presenter.reply(new, KINDS[live.game].table_text(live, await self.screen(new)))
                live = None
            await self.store.migrate_chat(old, new)
            self._chat_settings.pop(old, None)
            self._chat_settings.pop(new, None)
            self.chat_titles.setdefault(new, self.chat_titles.get(old, ""))
            if live is not None:
                del self.tables.by_chat[old]
                live.chat_id, live.message_id = new, None
                self.tables.by_chat[new] = live
        return live

    # -- deadlines --------------------------------------------------------------------------------
    def arm(self, live: LiveTable, delay: float | None = None) -> None:
        """(Re-)arm the table's one deadline, a JobQueue job named after the table, at its saved
        deadline (or in ``delay`` seconds); a deadline already past fires now. A turn also gets
        its reminder, when a third of it is left (none when that moment has long passed, after a
        restart: it would say a time left that is no longer true)."""
        self.disarm(live.table_id)
        deadline, timer = live.view.deadline, live.engine.core.timer
        if deadline is None or timer == 0 or live.engine.closed or self._stopped or self.jobs is None:
            return
        data = (live.chat_id, live.table_id, timer)
        self.deadlines[live.table_id] = self.jobs.run_once(
            self._deadline,
            delay if delay is not None else max(0.0, deadline - self.clock()),
            data=data,
            name=f"table {live.table_id}",
        )
        remind_at = deadline - live.engine.core.turn_seconds * REMINDER_LEFT
        if not live.reminded and KINDS[live.game].acting(live) and remind_at > self.clock() - LATE_REMINDER:
            self.reminders[live.table_id] = self.jobs.run_once(
                self._remind, max(0.0, remind_at - self.clock()), data=data, name=f"reminder {live.table_id}"
            )

    def disarm(self, table_id: int) -> None:
        for armed in (self.deadlines, self.reminders):
            job = armed.pop(table_id, None)
            if job is not None:
                with contextlib.suppress(JobLookupError):  # it has just run
                    job.schedule_removal()

    async def _remind(self, context: CallbackContext[Any, Any, Any, Any]) -> None:
        """A third of a turn is left: whoever has not acted gets their prompt again, as a new DM."""
        chat_id, table_id, timer = _fired(context, self.reminders)
        async with self.tables.lock(chat_id):
            live = self.tables.get(chat_id)
            if self._stopped or live is None or live.table_id != table_id or live.engine.core.timer != timer:
                return
            live.shown[REMINDED] = str(timer)
            try:
                await self.store.update_messages(table_id, shown={REMINDED: str(timer)})
            except Exception:  # kept in memory: only a restart would remind them again
                log.exception("table %s: its reminder could not be saved", table_id)
            await self.present(live, [])

    async def _deadline(self, context: CallbackContext[Any, Any, Any, Any]) -> None:
        chat_id, table_id, timer = _fired(context, self.deadlines)
        if not self._stopped:
            await self.timeout(chat_id, table_id, timer)

    def stop_timers(self) -> None:
        """At shutdown: no deadline is armed any more (PTB lets those being carried out finish
        before the connection to Telegram closes)."""
        self._stopped = True
        for table_id in list(self.deadlines):
            self.disarm(table_id)

    async def timeout(self, chat_id: int, table_id: int, timer: int) -> None:
        """A deadline: the table's timer runs out, unless the turn's prompt has not even been sent
        (the bot's queue is long): then it waits for it, up to one more turn's length, and the
        prompt, once sent, gives the turn the time it lost (``delivered_late``)."""
        async with self.tables.lock(chat_id):
            live = self.tables.get(chat_id)
            if live is None or live.table_id != table_id:
                return
            if await self._held_for_prompt(live, timer):
                return
            try:
                events = await self.tables.apply(live, Timeout(timer))
            except StaleTimer:
                return
            except SavedBefore:  # it was carried out: memory now holds what was saved
                await self.present(live, [])
                return
            except Exception:
                # Not saved (the database is busy, a balance refused...): memory went back to what
                # was saved, and the deadline must not be lost.
                log.exception("the deadline of table %s failed: tried again in %s s", table_id, RETRY_TIMEOUT)
                self.arm(live, delay=RETRY_TIMEOUT)
                return
            await self.present(live, events)  # saved: the next deadline is armed while showing it

    async def _held_for_prompt(self, live: LiveTable, timer: int) -> bool:
        """The deadline of turn ``timer`` is held while someone's prompt waits to be sent (looked at
        again every ``PROMPT_AWAITED`` s, one more turn at most); once it has gone, the turn starts
        over from then, shown with its new deadline (``delivered_late`` leaves a held turn alone)."""
        deadline, core = live.view.deadline, live.engine.core
        if deadline is None or core.timer != timer:
            return False
        waits = self.presenter.prompt_waits(live)
        if waits and self.clock() <= deadline + core.turn_seconds:
            self._held[live.table_id] = timer
            self.arm(live, delay=PROMPT_AWAITED)
            return True
        if self._held.pop(live.table_id, None) != timer or waits:
            return False
        live.view.deadline = self.clock() + core.turn_seconds
        await self.present(live, [])  # (armed, and the open Mini Apps told, while showing it)
        return True

    async def restore(self) -> list[LiveTable]:
        """At start-up: load every open table and re-arm its timer."""
        restored = await self.tables.restore()
        for live in restored:
            self.arm(live)
            # An edit the crash cut off is shown now (in the background: start-up does not wait).
            self.background(self._redraw(live))
        return restored

    async def _redraw(self, live: LiveTable) -> None:
        async with self.tables.lock(live.chat_id):
            if self.tables.get(live.chat_id) is live:
                await self.present(live, [])


def _fired(context: CallbackContext[Any, Any, Any, Any], armed: dict[int, Job[Any]]) -> tuple[int, int, int]:
    """A table's timer job that fires: its (chat, table, timer), and no longer listed as armed."""
    job = context.job
    assert job is not None
    chat_id, table_id, timer = job.data  # type: ignore[misc]
    if armed.get(table_id) is job:
        del armed[table_id]
    return chat_id, table_id, timer
