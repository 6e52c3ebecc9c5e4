"""The running bot: settings, storage, the open tables, what is shown, and the turn clocks.

Every change of a table is made while the caller holds the chat's lock: applied and saved
(``Tables.apply`` / ``Tables.seat``), then presented (:meth:`Runtime.present`: the turn's clock
re-armed, the table message and the private cards queued for the presenter).
:meth:`Runtime.perform` does both.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Coroutine, Iterable
from datetime import datetime
from random import Random
from typing import Any
from zoneinfo import ZoneInfo

from telegram import Bot
from telegram.ext import JobQueue

from bot.display.game_kinds import KINDS
from bot.display.i18n import t
from bot.display.presenter import Presenter
from bot.display.views.common import MINI_APP, Rendering, keyboard
from bot.display.views.summary import summary_text
from bot.model.live_table import AUTOPILOT_ROUNDS, TURN, Action, Event, LiveTable, Notice
from bot.send.dm_reach import DmReach
from bot.send.rate_policy import Limits, Parcel
from bot.settings import Settings
from bot.tables.breath import Breath
from bot.tables.chat_events import ChatEvents
from bot.tables.escapes import Escapes
from bot.tables.open_tables import Tables
from bot.tables.preferences import Preferences
from bot.tables.reveals import Reveals
from bot.tables.turn_clock import TurnClock
from bot.tables.watchers import Watchers
from bot.updates.hearing import Hearing
from games.codec import Plain, to_plain
from games.errors import RuleError
from games.events import DeckRevealed, Paid, RoundStarted
from games.fairness import Shuffle
from games.table import Credit, Leave, Ready
from storage import SavedTable, Store

log = logging.getLogger(__name__)


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
        limits = limits or Limits.of_settings(
            settings.table_requests_per_minute, settings.bot_requests_per_second
        )
        self.running: set[asyncio.Task[object]] = set()  # work started in the background
        self.dms = DmReach(store, self.background)  # whose DM Telegram refused (bot/send/dm_reach.py)
        self.dms.changed = self._dm_changed
        self.chat_events = ChatEvents(self)
        self.presenter = Presenter(bot, store, limits, self.chat_events, self.dms)
        self.tables.closed = self._closed
        self.turns = TurnClock(self, jobs)
        # Between rounds: an all-in's cards dealt one by one, then a pause before auto-ready.
        self.reveals = Reveals(self, jobs, settings.reveal_seconds)
        self.breath = Breath(self, jobs)
        self.zone = ZoneInfo(settings.timezone)
        self.chat_titles: dict[int, str] = {}
        self._time_shown: tuple[float, str] = (float("nan"), "")
        self.watchers: Watchers = Watchers()  # told of every change of a table (the Mini App's hub)
        # (a turn's prompt to someone watching the table in the Mini App waits: bot/send/watched.py)
        self.presenter.watching = lambda table_id, person: self.watchers.watching(table_id, person)
        self.preferences = Preferences(settings, store)
        self.escapes = Escapes(lambda: self.clock())  # (a test may set the clock)
        self.hearing = Hearing(lambda: self.clock())  # when updates did not come in (bot/updates/hearing.py)
        # Whether this process may act on its tables now (a worker whose lease is not sure may not).
        self.may_act: Callable[[], bool] = lambda: True

    async def screen(self, chat_id: int) -> Rendering:
        return Rendering(
            await self.preferences.chat_language(chat_id), self.time_text, self.bot.username or ""
        )

    def time_text(self, moment: float) -> str:
        """``21:05:30`` in the bot's zone (the last one kept: one action's views all show one deadline)."""
        if self._time_shown[0] != moment:
            self._time_shown = (moment, datetime.fromtimestamp(moment, self.zone).strftime("%H:%M:%S"))
        return self._time_shown[1]

    def shuffle(self, game: str) -> Shuffle:
        return Shuffle.new(KINDS[game].deck, self.rng)

    # -- changing a table (the caller holds the chat's lock) ------------------------------------------
    async def perform(self, live: LiveTable, action: Action) -> list[Event]:
        events = await self.tables.apply(live, action)
        await self.present(live, events)
        return events

    async def present(self, live: LiveTable, events: list[Event]) -> None:
        """Queue what an applied action changed: the table message (everyone's view) and each private
        view. Nothing waits for Telegram here: the presenter sends within each chat's budget."""
        self.turns.arm(live)
        self.reveals.begin(live, events)
        between = bool(live.round_no) and not (live.in_round or live.engine.closed)
        if between:
            await self.breath.holds(live)  # (its end, shown on the table, armed)
        elif live.pause_until:
            live.pause_until = 0.0
            self.breath.let_go(live.table_id)
        self.credit_elsewhere(live, events)
        if any(isinstance(event, RoundStarted) for event in events):
            for person in live.seated():  # whose DM Telegram refused before: named from the deal on
                if self.dms.refused(person):
                    self.chat_events.no_dm(live, person)
        screen = await self.screen(live.chat_id)
        if any(isinstance(event, RoundStarted) for event in events):
            self.presenter.keep_last_round_dms(live)
            self.presenter.keep_last_round_table(
                live, screen
            )  # each round its own message; the last keeps its results
        self.presenter.want_table(live, screen)
        await self.turns.call(live)
        kind = KINDS[live.game]
        await self.send_private(live, [*kind.private_people(live), *live.dm_ids, *kind.acting(live)])
        self.watchers.changed(live)  # the open Mini Apps (bot/web/miniapp/hub.py)
        if any(isinstance(event, DeckRevealed) for event in events):
            await self._stand_up_idle(live)
        if live.round_no and not (live.in_round or live.engine.closed) and not await self.breath.holds(live):
            await self._ready_again(live)

    async def _stand_up_idle(self, live: LiveTable) -> None:
        """A round is over: everyone on autopilot (托管) for ``AUTOPILOT_ROUNDS`` whole rounds gets up
        (free between rounds: they escaped nothing). All of them are decided against this round and
        leave before anything is shown, so no new round can start between two of them."""
        rising = [
            person
            for person, since in live.view.autopilot.items()
            if live.round_no - since >= AUTOPILOT_ROUNDS and live.engine.core.seat_of(person) is not None
        ]
        events: list[Event] = []
        for person in rising:
            notice = Notice("notice.autopilot_up", person, 0, live.round_no)
            live.view.notices.append(notice)  # saved with their leaving
            try:
                events += await self.tables.apply(live, Leave(person))
            except Exception as failed:
                live.view.notices.remove(notice)
                log.log(
                    logging.INFO if isinstance(failed, RuleError) else logging.ERROR,
                    "table %s: %s could not get up: %r",
                    live.table_id,
                    person,
                    failed,
                )
        if events:
            await self.present(live, events)

    async def _ready_again(self, live: LiveTable) -> None:
        """Between rounds, whoever chose 再来一局 ✓ 自动准备, or is on autopilot, is ready for the next
        one (once the pause after the results is over: ``bot/tables/breath.py``); it starts once
        everyone seated is, as always (when someone left a lobby where all the others were ready,
        their Start is pressed again: that starts it)."""
        view, core = live.view, live.engine.core
        for person in [*view.auto_ready, *view.autopilot]:
            seat = core.seat_of(person)
            if live.in_round or live.engine.closed:
                return
            if seat is not None and (not seat.ready or core.everyone_ready()):
                await self._try(live, Ready(person, self.shuffle(live.game)))

    async def _try(self, live: LiveTable, action: Action) -> None:
        """An action the bot takes for someone: refused (their seat is gone, the table closes) or not
        saved (it is tried again at the table's next change), it is only logged."""
        try:
            await self.perform(live, action)
        except RuleError as refused:
            log.info("table %s: %s was refused: %s", live.table_id, action, refused)
        except Exception:
            log.exception("table %s: %s for someone failed", live.table_id, action)

    def stop_clocks(self) -> None:
        """At shutdown: no turn's deadline, reveal's card or pause's end fires any more."""
        self.turns.stop()
        self.reveals.moments.stop()
        self.breath.moments.stop()

    async def save_between_actions(self, live: LiveTable, *, turn: bool = False, view: bool = False) -> None:
        """A part of the table's state changed with no action (the turn's clock moved, someone came
        back from autopilot): saved now, and kept as saved (what a failed save goes back to); kept in
        memory if this fails, the next action saves it."""
        parts: dict[str, dict[str, Plain]] = {}
        if turn:
            parts[TURN] = live.turn.to_plain()
        if view:
            plain = to_plain(live.view)
            assert isinstance(plain, dict)
            parts["view"] = plain
        live.saved = {**live.saved, **parts}
        try:
            await self.store.update_messages(live.table_id, turn=parts.get(TURN), view=parts.get("view"))
        except Exception:
            log.exception("table %s: %s could not be saved", live.table_id, " and ".join(parts))

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

    def credit_elsewhere(self, live: LiveTable, events: list[Event]) -> None:
        """Paid to people seated at another table (a refund to someone who escaped here): that table
        learns of it, later (its chat's lock is never taken while this one's is held)."""
        for event in events:
            if (
                isinstance(event, Paid)
                and isinstance(event.payee, int)
                and self.tables.table_of(event.payee) not in (None, live)
            ):
                self.background(self.credit_outside(event.payee))

    def background(self, work: Coroutine[Any, Any, object]) -> None:  # (what it returns is dropped)
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
        and the popup instead); none while the group has not seen the round's table message (its
        commitment goes before any card: ``ChatEvents.round_shown`` brings them then)."""
        if live.opening_unseen:
            return
        # The group's title as last seen, kept with the table (a restarted bot names it the same).
        title = live.view.title = self.chat_titles.get(live.chat_id) or live.view.title
        for person in dict.fromkeys(people):
            if person not in live.view.dm_failed and not self.dms.refused(person):
                screen = Rendering(
                    await self.preferences.person_language(person), self.time_text, self.bot.username or ""
                )
                self.presenter.want_dm(live, person, screen, title)

    def _dm_changed(self, person: int, refused: bool) -> None:
        """What the bot knows of ``person``'s DM changed: the table they sit at follows it."""
        live = self.tables.table_of(person)
        if live is not None:
            reaction = self.chat_events.dm_blocked if refused else self.chat_events.dm_opened
            self.background(reaction(live, person))

    async def restore(self) -> list[LiveTable]:
        """At start-up: load every open table and re-arm its timer."""
        return self.adopt(await self.store.open_tables())

    def adopt(self, tables: Iterable[SavedTable], *, handed_over: bool = False) -> list[LiveTable]:
        """Take open tables as saved (at start-up, or a partition's, taken over from another worker)
        and re-arm their turns' clocks from what was saved; each message is then brought to what it
        should show (only what changed is sent: what each shows is saved with the table). Their DMs
        are looked over for a message the bot never learnt of, unless they were ``handed_over``
        cleanly (everything sent and saved before)."""
        adopted = self.tables.adopt(tables)
        for live in adopted:
            self.turns.arm(live)
            self.presenter.adopted(live, unsure=not handed_over)
            # An edit the crash cut off is shown now (in the background: start-up does not wait).
            self.background(self._redraw(live))
        return adopted

    async def let_go(
        self, chats: Callable[[int], bool], timeout: float = 10.0, *, lost: bool = False
    ) -> tuple[list[LiveTable], bool]:
        """Forget the tables of the chats ``chats`` says (another worker takes them over): each
        once its chat's current change is done, its clock disarmed; then what they queued for
        their group and their people's DMs goes out (at most ``timeout`` seconds: what is left is
        not sent from here, the next owner sends it), whatever the other chats have queued. The
        tables let go, and whether all they queued went out. ``lost``: another worker holds them
        already (this one was cut off, or paused past its lease): nothing queued goes out, from
        the first moment (before this worker may send again)."""
        gone = [live for live in list(self.tables.by_chat.values()) if chats(live.chat_id)]
        shown_in = {chat for live in gone for chat in (live.chat_id, *live.dm_ids, *live.seated())}
        tables, groups = {live.table_id for live in gone}, {live.chat_id for live in gone}

        def queued(parcel: Parcel) -> bool:
            """Theirs: anything for their groups (each is the next owner's whole), and in the DMs
            what is of these tables (their messages, and those left behind to bring to an end)."""
            return parcel.chat_id in groups or getattr(parcel.payload, "table_id", None) in tables

        try:
            if lost:
                self.presenter.sender.withdraw_all(shown_in, queued)
            for live in gone:
                async with self.tables.lock(live.chat_id):
                    self.turns.disarm(live.table_id)
                    self.reveals.let_go(live.table_id)
                    self.breath.let_go(live.table_id)
                    self.tables.let_go(live)
            if lost:
                self.presenter.sender.withdraw_all(shown_in, queued)  # (queued meanwhile by work under way)
                return gone, False
            try:
                async with asyncio.timeout(timeout):
                    await self.presenter.sender.drain(shown_in)
            except TimeoutError:  # sent from here too, it would show twice (its shown state unsaved)
                self.presenter.sender.withdraw_all(shown_in, queued)
                return gone, False
            return gone, True
        finally:
            # What they queued is sent or taken: the presenter forgets them (once what is being
            # sent is done with).
            for live in gone:
                self.presenter.gone(live.table_id)

    def _closed(self, live: LiveTable) -> None:
        """A table closed (the caller holds its chat's lock): once the change that closed it has
        queued its last messages, the presenter forgets it when they are sent."""
        self.background(self._forget_closed(live))

    async def _forget_closed(self, live: LiveTable) -> None:
        async with self.tables.lock(live.chat_id):
            await self._announce_summary(live)
            self.presenter.gone(live.table_id)

    async def _announce_summary(self, live: LiveTable) -> None:
        """A table that ended with a round played: its 总结算, one message in its group (after what
        the closing change queued), with the button that opens its card in the Mini App. Its
        people's lines went with their DMs (``GameKind.dm``). A table closed with no round played
        has none."""
        summary = live.summary
        if summary is None or not summary.played:
            return
        try:  # (the group it is in now: one upgraded to a supergroup took its tables along)
            chat = await self.store.chat_of_table(live.table_id) or summary.chat_id
            screen = await self.screen(chat)
        except Exception:
            log.exception("table %s: its summary's group could not be read", live.table_id)
            return
        language = screen.language
        text = summary_text(summary, language, self.zone, live.view.closed_reason)
        link = MINI_APP.of(live.table_id)
        markup = keyboard([[(t(language, "summary.open"), link)]] if link else [])
        self.presenter.reply(chat, text, markup=markup, alone=True)

    async def _redraw(self, live: LiveTable) -> None:
        async with self.tables.lock(live.chat_id):
            if self.tables.get(live.chat_id) is live:
                await self.present(live, [])
