"""What the bot shows on Telegram: the messages it keeps up (each table's message, each person's DM
for a table), sent by ``bot.send.sender`` within Telegram's limits (``bot.send.rate_policy``);
replies are ``bot.send.replies``'.

Nothing here waits for Telegram. ``want_table`` / ``want_dm`` render what a kept message should show
now (a ``TableMessage`` / ``PersonalMessage``, ``bot.send.messages``) and queue it in its chat's lane,
where a later change replaces it (latest wins); nothing is sent when the message already shows it
(``Shown``, saved with the table: a restarted bot sends only what changed while it was down, and
what is saved is what Telegram confirmed). A parcel's priority follows what changed: new buttons for
someone are what they must act on, a table whose buttons changed is a change of phase or turn, the
rest informs or only decorates.

What Telegram answers comes back to the tables (``TableEvents``, through the courier): a group that
became a supergroup or shut the bot out, a person who never opened a DM with the bot, a prompt
delivered late, a new round's table seen.
"""

from __future__ import annotations

import logging
import time
from asyncio import timeout as asyncio_timeout
from collections.abc import Callable
from dataclasses import replace

from telegram import Bot

from bot.display.game_kinds import KINDS
from bot.display.views.common import Rendering, replay_keyboard
from bot.display.views.lobby import off_autopilot
from bot.model.live_table import LiveTable
from bot.model.shown import Shown
from bot.send.courier import Courier, LastRound, TableEvents
from bot.send.dm_reach import DmReach
from bot.send.kept_tables import message_of
from bot.send.messages import (
    Cleanup,
    CleanupKey,
    DmKey,
    Kept,
    PersonalMessage,
    TableKey,
    TableMessage,
    is_new_prompt,
    right_after_own,
)
from bot.send.rate_policy import Limits, Parcel, Priority, Share
from bot.send.replies import Replies
from bot.send.sender import Sender
from bot.send.watched import GRACE
from storage import Store

log = logging.getLogger(__name__)


class Presenter:
    def __init__(
        self,
        bot: Bot,
        store: Store,
        limits: Limits,
        chat_events: TableEvents[LiveTable],
        dms: DmReach,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.store = store
        self.clock = clock
        self.sender = Sender(self._deliver, limits, clock)
        self.chat_events = chat_events
        self.dms = dms
        self.replies = Replies(bot, self.sender, self.clean_up, clock, dms)
        self.reply = self.replies.reply
        self.courier: Courier[LiveTable] = Courier(
            bot, store, self.sender, self.replies, self, chat_events, dms, clock
        )
        self.orphans = self.courier.orphans  # the DMs where a message may show whose id was never learnt
        # A last round's message (the table's, a DM) a new round is to leave behind: its id, the text
        # it is then to be edited to (the table: that round's results; a DM: none, it has its end),
        # and its buttons then (the table: "▶ 回放", when the bot has a Mini App).
        self.last_round: dict[TableKey | DmKey, LastRound] = {}
        # A DM saying 托管中 (its button 我回来了): the text it is to keep once that is over (in memory
        # only: after a restart such a DM loses its button only).
        self.autopilot_ends: dict[DmKey, str] = {}
        # Is this person watching this table in the Mini App now (``Watchers.watching``; the runtime
        # sets it)? Their turn's prompt then waits its ``GRACE`` before it may go as a new DM.
        self.watching: Callable[[int, int], bool] = lambda _table_id, _person: False

    async def _deliver(self, parcel: Parcel) -> float | None:
        return await self.courier.deliver(parcel)

    # -- what the bot wants shown -----------------------------------------------------------------
    def want_table(self, live: LiveTable, screen: Rendering, *, anew: bool = False) -> None:
        """The table message should show the table now (``anew``: as a new message at the bottom
        of the chat, the old one deleted)."""
        if anew and live.message_id is not None:
            last = self.last_round.pop(TableKey(live.table_id), None)
            old, live.message_id = live.message_id, None
            if last is not None and last[0] == old:  # the last round's message keeps its results
                self.clean_up(
                    Cleanup(live.chat_id, old, last[1], markup=last[2], table_id=live.table_id),
                    since=self.clock(),
                )
            else:
                self.clean_up(Cleanup(live.chat_id, old, delete=True, table_id=live.table_id))
        kind = KINDS[live.game]
        text, markup = kind.table_text(live, screen), kind.table_keyboard(live, screen.language)
        shown = Shown.of(text, markup, round_no=live.round_no if live.in_round else 0)
        self._want(live, TableMessage(live.table_id, live.chat_id, text, markup, shown, live.timer))

    def want_dm(self, live: LiveTable, person: int, screen: Rendering, chat_title: str) -> None:
        """``person``'s DM for this table should show their cards and moves now (the views give the
        final state once the round is over); with nothing left to show them, its buttons go.

        A DM with buttons asks them to act: each new turn, and its reminder, is a new message (an
        edit notifies nobody) while the bot's new-message budget has room, else an edit of their DM
        (decided as it goes out: ``_send_kept``); once they have acted it is edited to what they
        did, so no DM keeps a stale prompt. Their turn right after their own (they have just
        answered) takes the answered prompt's place in one edit."""
        timer, key = live.engine.core.timer, DmKey(live.table_id, person)
        drawn = KINDS[live.game].dm(live, person, screen, chat_title)
        if drawn is not None:
            text, markup = drawn
            if live.asks(person) or markup is None:
                self.autopilot_ends.pop(key, None)
            else:
                self.autopilot_ends[key] = off_autopilot(text, screen.language)
            # Someone on autopilot (托管) is asked nothing: their one button is never a prompt.
            turn = timer if live.asks(person) else None
            shown = Shown.of(text, markup, turn, live.reminded)
            self._want(live, PersonalMessage(live.table_id, person, text, markup, shown, timer))
            return
        kept, ending = live.shown.get(str(person)), self.autopilot_ends.pop(key, None)
        if person in live.dm_ids and kept is not None and kept.has_buttons and ending is not None:
            # It said 托管中: it no longer does (they left, or the table ended).
            self._want(
                live, PersonalMessage(live.table_id, person, ending, None, Shown.of(ending, None), timer)
            )
        elif person in live.dm_ids and kept is not None and kept.has_buttons:
            self._want(
                live, PersonalMessage(live.table_id, person, None, None, kept.without_buttons(), timer)
            )

    def prompt_waits(self, live: LiveTable) -> bool:
        """Someone's prompt for the running turn still waits to be sent (or is being sent) and their
        DM shows none of this turn (its reminder waiting does not count): they cannot act yet."""
        timer, now = live.engine.core.timer, self.clock()
        for person in live.seated():
            parcel = self.sender.waiting(person, DmKey(live.table_id, person), in_flight=True)
            # (one in its grace does not count: its person watches the table, told of the turn there)
            wanted = None if parcel is None or parcel.waits(now) else parcel.payload
            if not isinstance(wanted, PersonalMessage) or wanted.timer != timer:
                continue
            if wanted.shown.turn is None:  # not a prompt (none, or 托管's button)
                continue
            shown = live.shown.get(str(person))
            if shown is None or shown.turn != timer:
                return True
        return False

    def keep_last_round_table(self, live: LiveTable, screen: Rendering) -> None:
        """A new round gets its own table message (as a prompt does: a new message while the bot's
        new-message budget has room, else an edit of the last one): the last one keeps that round's
        results only (no lobby; its one button "▶ 回放" when the bot has a Mini App). The first round
        goes on in its lobby's message."""
        if live.message_id is None or not live.view.results or live.view.results_round != live.round_no - 1:
            return
        live.shown.pop("table", None)
        self.last_round[TableKey(live.table_id)] = (
            live.message_id,
            KINDS[live.game].results_text(live, screen),
            replay_keyboard(live.table_id, live.view.results_round, screen.language),
        )

    def keep_last_round_dms(self, live: LiveTable) -> None:
        """A new round: its cards go to new DMs while the bot's new-message budget has room, the last
        round's DM keeping its end (still sent if it was still to be), else into the last round's DM
        (decided as each goes out, as for a prompt: an edit notifies nobody, but it is seen at once)."""
        for person, message_id in live.dm_ids.items():
            key = DmKey(live.table_id, person)
            last = self.sender.withdraw(person, key)
            ending = self.autopilot_ends.pop(key, None)  # it said 托管中: its end no longer does
            if (
                last is not None
                and isinstance(last.payload, PersonalMessage)
                and last.payload.text is not None
            ):  # its end not shown yet (a 429)
                self.clean_up(
                    Cleanup(person, message_id, ending or last.payload.text, table_id=live.table_id)
                )
            self.last_round[key] = (message_id, ending, None)

    def stale_buttons(self, chat_id: int, message_id: int) -> None:
        """A DM message pressed that is not the person's DM for the table now (a prompt Telegram
        showed but whose answer never reached the bot, killed or timed out meanwhile, so its id was
        never known; ``bot.send.orphans``): its buttons go, as for an old round's table message, unless
        it is to be brought to its last state already (a record, or deleted: its buttons go then)."""
        self.clean_up(Cleanup(chat_id, message_id), since=self.clock(), newer=False)

    def clean_up(self, cleanup: Cleanup, since: float | None = None, *, newer: bool = True) -> None:
        """Queue ``cleanup``: a cosmetic edit, unless ``since`` is given: an old round's table message
        losing its buttons, which mislead (pressed, they only say the round is over) and go before
        anything wanted after the new round (``since``: when it was), wherever the group has room.
        One already queued for the message is replaced, unless not ``newer``."""
        if since is None:
            parcel = Parcel(cleanup.chat_id, cleanup.key, Priority.COSMETIC, self.clock(), payload=cleanup)
        else:
            parcel = Parcel(cleanup.chat_id, cleanup.key, Priority.PHASE, since, Share.REPLY, payload=cleanup)
        self.sender.want(parcel, newer=newer)

    def drop_cleanup(self, chat_id: int, message_id: int) -> None:
        self.sender.withdraw(chat_id, CleanupKey(chat_id, message_id))

    def last_round_of(self, key: TableKey | DmKey, message_id: int | None) -> LastRound | None:
        """The last round's message ``key`` shows now, if a new round is to leave it behind."""
        last = self.last_round.get(key)
        return last if last is not None and last[0] == message_id else None

    def left_behind(self, key: TableKey | DmKey, last: LastRound) -> None:
        """The new round shows (anew, or in the last round's message): ``last`` is left behind."""
        if self.last_round.get(key) is last:
            del self.last_round[key]

    def anew(self, wanted: Kept, message_id: int | None, shown: Shown | None) -> bool:
        """Is ``wanted`` to be a new message though ``message_id`` exists: a new round's first (the
        last round's then keeps its end), a new prompt in a DM? Asked as it is wanted and again as it
        goes out (a message already posted anew meanwhile is only edited)."""
        if wanted.text is None:  # buttons taken away: always from the message there
            return False
        if self.last_round_of(wanted.key, message_id) is not None:
            return True
        return (
            wanted.person is not None
            and is_new_prompt(shown, wanted.shown)
            and not right_after_own(shown, wanted.shown)
        )

    def adopted(self, live: LiveTable, *, unsure: bool) -> None:
        """``live`` was taken as saved (at start-up, or from another worker): its messages are kept
        up from here; ``unsure``: its DMs are looked over for a message the bot never learnt of
        (``bot.send.orphans``)."""
        self.courier.tables.hold(live)
        if unsure:
            self.orphans.adopted(live.table_id, live.dm_ids, live.seated())

    def gone(self, table_id: int) -> None:
        """The table is gone from here, closed (its last messages queued) or let go to another
        worker: forgotten once nothing of it waits to be sent."""
        self.autopilot_ends = {
            key: text for key, text in self.autopilot_ends.items() if key.table_id != table_id
        }
        self.courier.tables.gone(table_id)

    def _want(self, live: LiveTable, wanted: Kept) -> None:
        """Queue ``wanted``, a state of one of ``live``'s messages (its table held until it is gone
        and nothing of it waits to be sent)."""
        self.courier.tables.hold(live, wanted)
        self._queue(live, wanted)
        self.courier.tables.forget_if_done(live.table_id)

    def _queue(self, live: LiveTable, wanted: Kept) -> None:
        message_id = message_of(live, wanted)
        if isinstance(wanted, PersonalMessage):  # what the DM shown now was still to show, if anything
            parcel = self.sender.waiting(wanted.chat_id, wanted.key)
            queued = None if parcel is None else parcel.payload
            if isinstance(queued, PersonalMessage):
                prompt = queued.shown.turn is not None  # (托管's button asks nothing: it is a record)
                wanted = replace(wanted, record=queued.record if prompt else queued.text)
        shown = live.shown.get(wanted.shown_key)
        if message_id is not None and shown == wanted.shown:
            self.sender.withdraw(wanted.chat_id, wanted.key)
            if wanted.person is not None:
                self.orphans.sure(live.table_id, wanted.person)
            return
        anew = message_id is not None and self.anew(wanted, message_id, shown)
        new_buttons = (
            message_id is None or anew or shown is None or shown.buttons_hash != wanted.shown.buttons_hash
        )
        new = message_id is None or anew
        if wanted.person is None and live.opening_unseen:
            self._want_opening(wanted, new, anew)
            return
        if wanted.person is None:
            priority = _table_priority(live, new_buttons)
        else:
            priority = Priority.ACT if new_buttons and wanted.shown.turn is not None else Priority.INFO
        not_before = 0.0
        prompt = new and priority is Priority.ACT and wanted.shown.turn is not None
        if prompt and wanted.person is not None and self.watching(live.table_id, wanted.person):
            not_before = self.clock() + GRACE  # told in the Mini App: the DM may wait
        self.sender.want(
            Parcel(
                wanted.chat_id, wanted.key, priority, self.clock(), Share.KEPT, new, anew, wanted, not_before
            )
        )

    # -- a turn told in the Mini App (bot/send/watched.py) ------------------------------------------
    def turn_seen(self, live: LiveTable, person: int, timer: int) -> bool:
        """``person``'s open page showed them their turn ``timer``: their prompt still in its grace
        is not sent (no new DM buzzes them; their DM is edited when they act or the turn ends).
        What it carried for the DM before it (what they did last, or its old buttons gone) is
        still shown, by an edit. Whether a prompt was withdrawn."""
        key = DmKey(live.table_id, person)
        parcel = self.sender.waiting(person, key)
        if parcel is None or not parcel.waits(self.clock()) or live.engine.core.timer != timer:
            return False
        prompt = parcel.payload
        if not isinstance(prompt, PersonalMessage) or prompt.shown.turn != timer:
            return False
        self.sender.withdraw(person, key)
        shown = live.shown.get(str(person))
        if person not in live.dm_ids or shown is None:
            return True
        if prompt.record is not None:
            ended = Shown.of(prompt.record, None)
            self._want(live, PersonalMessage(live.table_id, person, prompt.record, None, ended, timer))
        elif shown.has_buttons and shown.turn != timer:
            self._want(
                live, PersonalMessage(live.table_id, person, None, None, shown.without_buttons(), timer)
            )
        return True

    def stopped_watching(self, table_id: int, person: int) -> None:
        """``person``'s page of the table is hidden or closed: a prompt in its grace goes now."""
        self.sender.hasten(person, DmKey(table_id, person))

    def _want_opening(self, wanted: Kept, new: bool, anew: bool) -> None:
        """A new round's table message, its base and 🔐 commitment (the round waits for it: nothing
        of it is shown elsewhere, its clock does not run, until the group has seen it): first in
        the group's lane, from anywhere in the group's budget (the replies' share too), counted
        late from when the round began (the turn gets that time back)."""
        queued = self.sender.waiting(wanted.chat_id, wanted.key)
        if queued is not None and queued.share is not Share.REPLY:  # the table before the round: replaced
            self.sender.withdraw(wanted.chat_id, wanted.key)
        now = self.clock()
        opening = Parcel(wanted.chat_id, wanted.key, Priority.ACT, now, Share.REPLY, new, anew, wanted)
        self.sender.want(opening)  # (the opening already queued takes this state, keeping its place)

    async def flush(self, timeout: float = 10.0) -> None:
        """At shutdown: let what is queued go out, waiting at most ``timeout`` (what is left is sent
        after the restart: what each message shows is saved)."""
        try:
            async with asyncio_timeout(timeout):
                await self.sender.drain()
        except TimeoutError:
            log.warning("stopped with messages still queued")
        await self.sender.stop()


def _table_priority(live: LiveTable, new_buttons: bool) -> Priority:
    """A table's change of buttons is urgent (a change of phase or turn) when the table is how
    someone learns they must act: in the lobby and between rounds everyone presses there, and in a
    round whoever cannot be told by DM. A turn everyone acting on is prompted for in their DM only
    informs the group: its edit waits for room, and quick turns become one edit."""
    if not new_buttons:
        return Priority.COSMETIC
    acting = KINDS[live.game].acting(live)
    if acting and not any(person in live.view.dm_failed for person in acting):
        return Priority.INFO
    return Priority.PHASE
