"""Sending what the presenter wants shown (``bot.display.presenter``: the ``Keeper``), one parcel at a
time, as the sender (``bot.send.sender``) hands them out within Telegram's limits; and what
Telegram's answers mean for it (told to the tables: ``TableEvents``).

A kept message (``TableMessage``, ``PersonalMessage``) that is a new prompt or a new round's table
goes as a new message when its parcel holds a new-message token, else as an edit; the message it takes
the place of is left behind (``Cleanup``): the record of what they did, or deleted. Which message it
is, and what that shows, are read from its table as the request is made (``bot.send.kept_tables``:
the message may have changed since it was wanted). What a message shows is saved only once Telegram
has confirmed it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from telegram import Bot
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError

from bot import telegram_facts
from bot.model.shown import Markup, Shown
from bot.send import orphans
from bot.send.aiohttp_request import may_have_arrived
from bot.send.dm_reach import DmReach
from bot.send.kept_tables import KeptTables, T, TableState, forget_message, message_of
from bot.send.messages import (
    Cleanup,
    DmKey,
    Kept,
    PersonalMessage,
    Reply,
    TableKey,
    TableMessage,
    answered,
    edit,
)
from bot.send.rate_policy import Parcel, Priority, Share
from bot.send.replies import Replies
from bot.send.sender import Sender
from storage import Store

log = logging.getLogger(__name__)
RETRY = 3.0  # seconds before a send that failed for a passing reason (a network error) is tried again
LATE = 1.0  # a prompt delivered later than this after its turn began gives the turn that time back


# A last round's message: its id, the text it is to end with, and its buttons then (the replay's).
LastRound = tuple[int, str | None, Markup | None]
T_contra = TypeVar("T_contra", bound=TableState, contravariant=True)


class TableEvents(Protocol[T_contra]):
    """What the tables do about Telegram's answers (``bot.tables.chat_events.ChatEvents``; each
    takes the chat's lock itself), told of the table the message was for."""

    async def group_moved(self, live: T_contra, new_chat_id: int) -> None: ...

    async def group_lost(self, live: T_contra) -> None: ...

    async def dm_blocked(self, live: T_contra, person: int) -> None: ...

    def delivered_late(self, live: T_contra, seconds: float) -> None: ...

    def round_shown(self, live: T_contra) -> None: ...


class Keeper(Protocol):
    """What the courier asks of whoever keeps the messages up (``bot.display.presenter.Presenter``):
    which message a new round leaves behind, whether a message goes anew, the messages left behind."""

    def last_round_of(self, key: TableKey | DmKey, message_id: int | None) -> LastRound | None: ...

    def left_behind(self, key: TableKey | DmKey, last: LastRound) -> None: ...

    def anew(self, wanted: Kept, message_id: int | None, shown: Shown | None) -> bool: ...

    def clean_up(self, cleanup: Cleanup, since: float | None = None, *, newer: bool = True) -> None: ...

    def drop_cleanup(self, chat_id: int, message_id: int) -> None: ...


class Courier(Generic[T]):
    """Sends each parcel the sender hands out, and tells the tables what Telegram answered. The
    tables whose messages it sends are held in ``tables`` (the keeper holds each as it wants one of
    its messages); the DMs where a message may show whose id it never learnt, in ``orphans``."""

    def __init__(
        self,
        bot: Bot,
        store: Store,
        sender: Sender,
        replies: Replies,
        keeper: Keeper,
        events: TableEvents[T],
        dms: DmReach,
        clock: Callable[[], float],
    ) -> None:
        self.bot, self.store, self.sender, self.replies = bot, store, sender, replies
        self.keeper, self.events, self.dms, self.clock = keeper, events, dms, clock
        self.orphans = orphans.Orphans()
        self.tables: KeptTables[T] = KeptTables(sender, self.orphans)

    async def deliver(self, parcel: Parcel) -> float | None:
        """Send what ``parcel`` holds; a 429's (or a passing failure's) wait, else None. A kept
        message's table gone from here is forgotten once its last message is done with."""
        wait = None
        try:
            wait = await self._deliver(parcel)
        finally:
            if wait is None and isinstance(parcel.payload, TableMessage | PersonalMessage):
                self.tables.forget_if_done(parcel.payload.table_id, parcel)
        return wait

    async def _deliver(self, parcel: Parcel) -> float | None:
        try:
            match parcel.payload:
                case Reply() as reply:
                    await self.replies.send(parcel, reply)
                case Cleanup() as cleanup:
                    await self._send_cleanup(cleanup)
                case TableMessage() | PersonalMessage() as wanted:
                    await self._send_kept(parcel, wanted)
        except TelegramError as error:
            failure = telegram_facts.classify(error)
            if failure is telegram_facts.Failure.RATE_LIMITED:
                assert isinstance(error, RetryAfter)
                self.sender.rate_limited(parcel.chat_id)
                return telegram_facts.retry_seconds(error)
            if failure is telegram_facts.Failure.PASSING:
                log.warning("chat %s could not be sent to now: %s", parcel.chat_id, error)
                return RETRY
            log.warning("chat %s refused a message: %s", parcel.chat_id, error)
        return None

    async def _send_cleanup(self, cleanup: Cleanup) -> None:
        """Bring a message left behind to its last state: tried again after a 429 or a network
        error (the sender puts it back); let go when the message or the chat is gone."""
        try:
            await cleanup.deliver(self.bot)
        except (Forbidden, ChatMigrated, BadRequest) as error:
            log.info("chat %s: message %s left as it is: %s", cleanup.chat_id, cleanup.message_id, error)

    async def _end_prompt(self, person: int, message_id: int, record: str | None) -> None:
        """An answered (or timed-out) prompt becomes what they did, or loses its buttons, at once: a
        failure to edit a message that is gone or already so is nothing to wait for."""
        try:
            await edit(self.bot, person, message_id, record, None)
        except BadRequest as error:
            if telegram_facts.classify(error) is telegram_facts.Failure.NOT_MODIFIED:
                return
            log.info("DM %s: the prompt %s could not be edited (%s): deleted", person, message_id, error)
            with contextlib.suppress(BadRequest):  # (too old to edit, say)
                await self.bot.delete_message(person, message_id)

    async def _send_kept(self, parcel: Parcel, wanted: Kept) -> None:
        """Show ``wanted``. A new prompt (or round's table) goes as a new message when the parcel has
        its new-message token (the message before is left behind once it is sent), else as an edit
        of it (the sender found the budget too busy); a message gone since it was wanted is sent
        anew."""
        live = self.tables.get(wanted.table_id)
        assert live is not None  # (held while any of its messages waits: ``KeptTables.forget_if_done``)
        person, message_id = wanted.person, message_of(live, wanted)
        shown = live.shown.get(wanted.shown_key)
        earlier, last = None, self.keeper.last_round_of(wanted.key, message_id)
        # Wanted as a new message (whether it goes as one, or as an edit for want of a token)?
        anew = wanted.text is not None and (message_id is None or self.keeper.anew(wanted, message_id, shown))
        if message_id is not None and parcel.new_message and anew:
            earlier, message_id = message_id, None
        elif message_id is None and not parcel.new_message and wanted.text is not None:
            self._send_anew_later(parcel, wanted)  # no token was taken for it
            return
        elif last is not None and wanted.text is not None:  # the new round goes on in the last one's
            self.keeper.drop_cleanup(wanted.chat_id, last[0])  # message: its end is not to come after
        if message_id is not None and earlier is None and last is None and shown == wanted.shown:
            return  # it shows that already (an edit in flight when this was wanted): never sent twice
        ended = earlier is not None and isinstance(wanted, PersonalMessage) and answered(shown, wanted.timer)
        try:
            if ended:  # its buttons go before the next prompt shows: never two live prompts at once
                assert earlier is not None and isinstance(wanted, PersonalMessage)
                async with self.sender.one_more(parcel):  # (two requests for this parcel)
                    await self._end_prompt(wanted.person, earlier, wanted.record)
            message_id = await wanted.deliver(self.bot, message_id)
        except ChatMigrated as moved:
            await self.events.group_moved(live, moved.new_chat_id)
            return
        except Forbidden:
            await self._unreachable(live, person)
            return
        except BadRequest as error:
            failure = telegram_facts.classify(error)
            if failure is telegram_facts.Failure.MESSAGE_GONE:  # somebody deleted it: send it anew
                forget_message(live, wanted)
                self._send_anew_later(parcel, wanted)
                return
            if failure is telegram_facts.Failure.CHAT_GONE and person is not None:
                await self.events.dm_blocked(live, person)
                return
            if failure is not telegram_facts.Failure.NOT_MODIFIED:
                raise
        except NetworkError as error:  # a timeout: a new message may show all the same, its id never known
            if message_id is None and isinstance(wanted, PersonalMessage) and may_have_arrived(error):
                self.orphans.lost(live.table_id, wanted.person, live.dm_ids.get(wanted.person))
            raise
        unseen = live.opening_unseen
        await self._shown(live, wanted, message_id)
        if unseen and not live.opening_unseen:  # (the time it took is given back: ``_late``)
            self.events.round_shown(live)
        if isinstance(wanted, PersonalMessage):
            self.dms.learn(wanted.person, refused=False)
            await self._take_orphans_buttons(parcel, wanted, anew, message_id)
        if last is not None and wanted.text is not None:
            self.keeper.left_behind(wanted.key, last)  # the new round shows (anew or in it)
            if earlier is not None and last[1] is not None:  # the last round's table: its results
                ending = Cleanup(wanted.chat_id, earlier, last[1], markup=last[2], table_id=wanted.table_id)
                self.keeper.clean_up(ending, since=parcel.since)
        elif earlier is not None and isinstance(wanted, PersonalMessage) and not ended:
            self._leave_behind(wanted, earlier, shown)
        self._late(parcel, live, wanted, shown)

    async def _take_orphans_buttons(
        self, parcel: Parcel, wanted: PersonalMessage, anew: bool, sent: int | None
    ) -> None:
        """A new message to an unsure DM (its table taken as saved, or a new message to it timed
        out): one the bot never learnt of loses its buttons (``bot.send.orphans``), each try a request of
        this parcel's; found, it is deleted (the new message says all it said, and more: a prompt
        left with its question, its turn over, would mislead)."""
        for message_id in self.orphans.suspects(wanted.table_id, wanted.person, anew, sent):
            try:
                async with self.sender.one_more(parcel):
                    if await orphans.take_buttons(self.bot, wanted.person, message_id):
                        self.keeper.clean_up(
                            Cleanup(wanted.person, message_id, delete=True, table_id=wanted.table_id)
                        )
                        return
            except TelegramError as error:  # (a 429, Telegram down): not worth waiting for
                log.info("DM %s: no look for a message the bot never learnt of (%s)", wanted.person, error)
                return

    def _leave_behind(self, wanted: PersonalMessage, message_id: int, shown: Shown | None) -> None:
        """A new prompt (``wanted``) has taken the place of its person's DM ``message_id``: the one
        before stays as the record of what they did (no request), gets that state if it was still
        to be sent, or is deleted when it is a live prompt (the new one repeats it)."""
        person, table_id = wanted.person, wanted.table_id
        if wanted.record is not None:
            self.keeper.clean_up(Cleanup(person, message_id, wanted.record, table_id=table_id))
        elif shown is None or shown.has_buttons:
            self.keeper.clean_up(Cleanup(person, message_id, delete=True, table_id=table_id))

    def _late(self, parcel: Parcel, live: T, wanted: Kept, shown: Shown | None) -> None:
        """A turn's first prompt to reach them (a reminder to someone who had the prompt comes late
        by design), or the table's change of turn, that came late: the turn gets the time back."""
        first = not live.reminded or (
            wanted.person is not None and (shown is None or shown.turn != wanted.timer)
        )
        turn_prompt = wanted.timer and wanted.timer == live.timer and first
        if parcel.priority <= Priority.PHASE and turn_prompt:
            # (a prompt's grace, while its person watched the table in the Mini App, is no delay:
            # the page told them at once)
            late = self.clock() - max(parcel.since, parcel.not_before)
            if late > LATE:
                self.events.delivered_late(live, late)

    async def _unreachable(self, live: T, person: int | None) -> None:
        if person is None:
            await self.events.group_lost(live)
        else:
            await self.events.dm_blocked(live, person)

    async def _shown(self, live: T, wanted: Kept, new_id: int | None) -> None:
        """Remember (and save) what the message shows now, as Telegram confirmed it, and the id of a
        new one (saved now: a restart must find it); an edit is saved with the table's next write."""
        live.shown[wanted.shown_key] = wanted.shown
        shown = {wanted.shown_key: wanted.shown.to_saved()}
        if new_id is None:
            self.store.shown_later(live.table_id, shown)
            return
        if wanted.person is None:
            live.message_id = new_id
            saving = self.store.update_messages(live.table_id, shown=shown, message_id=new_id)
        else:
            live.dm_ids[wanted.person] = new_id
            # Pressed before its id came back, it was not theirs yet (a strip queued): it is now.
            self.keeper.drop_cleanup(wanted.chat_id, new_id)
            saving = self.store.update_messages(
                live.table_id, shown=shown, dm_message_ids={wanted.person: new_id}
            )
        try:
            await saving
        except Exception:  # what is shown is kept in memory; the next change saves it again
            log.exception("table %s: what its messages show could not be saved", live.table_id)

    def _send_anew_later(self, parcel: Parcel, wanted: Kept) -> None:
        """Queue ``wanted`` again as a new message (unless a newer state is wanted by then)."""
        self.sender.want(
            Parcel(
                parcel.chat_id, parcel.key, parcel.priority, parcel.since, Share.KEPT, True, payload=wanted
            ),
            newer=False,
        )
