"""What the bot shows on Telegram: the messages it keeps up (each table's message, each person's DM
for a table) and its replies, sent by ``bot.sender`` within Telegram's limits (``bot.outbox``).

Nothing here waits for Telegram. ``want_table`` / ``want_dm`` render what a kept message should show
now (its wanted state) and queue one job for it: a later change replaces what the job will send
(latest wins), and nothing is sent when the message already shows it (its shown state: a hash,
saved with the table, so a restarted bot sends only what changed while it was down). A job's
priority follows what changed: new buttons for someone are what they must act on, a table whose
buttons changed is a change of phase or turn, the rest informs or only decorates.

What Telegram answers comes back to the runtime (``Reactions``): a group that became a supergroup
or shut the bot out, a person who never opened a DM with the bot, a prompt delivered late.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import time
import warnings
from asyncio import timeout as asyncio_timeout
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Protocol

from telegram import Bot, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter
from telegram.warnings import PTBDeprecationWarning

from bot import raw
from bot.kinds import KINDS
from bot.live import LiveTable
from bot.outbox import Job, Limits, Priority, Share
from bot.sender import Sender
from bot.telegram import MESSAGE_CHARACTERS, utf16_length
from bot.views.common import Markup, Rendering
from storage import Store

log = logging.getLogger(__name__)
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)  # the DM link on a table needs no preview card
RETRY = 3.0  # seconds before a send that failed for a passing reason (a network error) is tried again
LATE = 1.0  # a prompt delivered later than this after its turn began gives the turn that time back
REPEAT = 5.0  # the same reply to the same person in one chat is sent once in this many seconds
RIDE = 60.0  # a group's line saying a reply went to someone's DM goes with a reply sent within this
TABLE = "table"  # the key of the table message in ``LiveTable.shown`` (a DM's is the person's id)


def retry_seconds(error: RetryAfter) -> float:
    """A 429's wait in seconds, whether PTB gives it as a number or (from v23) a timedelta."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = error.retry_after
    return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)


class Reactions(Protocol):
    """What the runtime does about Telegram's answers (each takes the chat's lock itself)."""

    async def group_moved(self, live: LiveTable, new_chat_id: int) -> None: ...

    async def group_lost(self, live: LiveTable) -> None: ...

    async def dm_blocked(self, live: LiveTable, person: int) -> None: ...

    def delivered_late(self, live: LiveTable, seconds: float) -> None: ...


@dataclass(slots=True)
class Wanted:
    """What a kept message should show; ``text`` None: keep the text, take the buttons away."""

    live: LiveTable
    person: int | None  # None: the table message
    text: str | None
    markup: Markup | None
    digest: str
    timer: int  # the table's deadline when this was wanted (a late prompt gives its turn time back)
    # What the DM shown now keeps if this prompt is posted anew (what they did, if still to be sent).
    record: str | None = None

    @property
    def chat_id(self) -> int:
        return self.live.chat_id if self.person is None else self.person

    @property
    def shown_key(self) -> str:
        return TABLE if self.person is None else str(self.person)


@dataclass(slots=True)
class Once:
    """A message left behind, brought to its last state once: deleted (a prompt posted anew), or
    edited to ``text`` with no buttons (a last round's table message, a last round's DM), or, with
    no text, only its buttons taken away."""

    chat_id: int
    message_id: int
    text: str | None = None
    delete: bool = False


@dataclass(slots=True)
class Note:
    """A message sent once: a reply to a command, a notice."""

    chat_id: int
    text: str
    markup: Markup | None
    reply_to: int | None
    call: Hashable | None = None  # a turn's call: its message is kept to be withdrawn
    priority: Priority = Priority.REPLY
    since: float = 0.0  # when it was wanted
    asker: str | None = None  # who it answers (named when replies waiting together go as one)
    seen: Callable[[], None] | None = None  # called when it has reached the chat
    # A reply about one person sent to their DM instead: the group chat, the command's message
    # there, the short line the group gets, and the reply it gets instead if they have no DM.
    group: tuple[int, int | None, str, str] | None = None

    alone: bool = False  # sent by itself (it went with others once, and that message was refused)
    rider: bool = False  # never sent by itself: it goes with the next reply sent to its group

    @property
    def mergeable(self) -> bool:
        """Sent with others waiting in its group as one message (no buttons of its own)."""
        return self.chat_id < 0 and self.markup is None and self.call is None and not self.alone


def _hash(value: object) -> str:
    return hashlib.blake2b(json.dumps(value, ensure_ascii=False).encode(), digest_size=6).hexdigest()


def digest(text: str | None, markup: Markup | None) -> str:
    """What a message shows, as ``<text hash>:<buttons hash>`` (so a change of buttons is seen)."""
    return f"{_hash(text)}:{_hash(markup)}"


def _buttons(shown: str | None) -> str | None:
    return shown.split(":")[1] if shown else None


def _prompt(shown: str | None) -> str | None:
    """Which prompt a DM's digest (``<text>:<buttons>:<timer>.<reminded>``) shows, if it is one."""
    parts = (shown or "").split(":")
    return parts[2] if len(parts) > 2 else None


def _new_prompt(shown: str | None, wanted: str) -> bool:
    """Is ``wanted`` a prompt that ``shown`` is not: a new turn, or its reminder?"""
    prompt = _prompt(wanted)
    return prompt is not None and _prompt(shown) != prompt


def _turn(shown: str | None) -> str | None:
    """The turn (its timer) whose prompt ``shown`` is, if it is one."""
    prompt = _prompt(shown)
    return None if prompt is None else prompt.split(".")[0]


NO_BUTTONS = _hash(None)


def _answered(shown: str | None, wanted: Wanted) -> bool:
    """Does a DM that ``wanted`` (a new prompt) is to leave behind show a prompt of another turn,
    whose buttons the engine now refuses? (A reminder leaves the same turn's prompt: still good.)"""
    return _buttons(shown) != NO_BUTTONS and _turn(shown) != str(wanted.timer)


def _both(first: Callable[[], None] | None, then: Callable[[], None]) -> Callable[[], None]:
    def both() -> None:
        if first is not None:
            first()
        then()

    return both


def _part(note: Note) -> str:
    """A reply as part of a message of several: headed by whom it answers."""
    return note.text if note.asker is None else f"▸ {note.asker}\n{note.text}"


class Presenter:
    def __init__(
        self,
        bot: Bot,
        store: Store,
        limits: Limits,
        reactions: Reactions,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.store = store
        self.clock = clock
        self.sender = Sender(self._deliver, limits, clock)
        self.reactions = reactions
        self._kept: dict[Hashable, Wanted] = {}  # what each queued kept message is to show
        self._notes: dict[Hashable, Note] = {}  # the replies queued
        self._no_dm: set[int] = set()  # people a reply to their DM could not reach (never opened one)
        self._once: dict[Hashable, Once] = {}  # messages left behind, to bring to their last state
        self._calls: dict[Hashable, tuple[int, int]] = {}  # each turn's call sent: (chat, message)
        self._repeats: dict[Hashable, float] = {}  # when each deduplicated reply was last queued
        self._ids = itertools.count()
        # A last round's message (the table's, a DM) a new round is to leave behind: its id, and the
        # text it is then to be edited to (the table: that round's results; a DM: none, it has its end).
        self._retired: dict[Hashable, tuple[int, str | None]] = {}
        self._sending: dict[Hashable, Wanted] = {}  # kept messages whose request is in flight

    # -- what the bot wants shown -----------------------------------------------------------------
    def want_table(self, live: LiveTable, screen: Rendering, *, anew: bool = False) -> None:
        """The table message should show the table now (``anew``: as a new message at the bottom
        of the chat, the old one deleted)."""
        if anew and live.message_id is not None:
            retired = self._retired.pop(("t", live.table_id), None)
            old, live.message_id = live.message_id, None
            if retired is not None and retired[0] == old:  # the last round's message keeps its results
                self._bring(Once(live.chat_id, old, retired[1]), since=self.clock())
            else:
                self._delete(live.chat_id, old)
        kind = KINDS[live.game]
        text, markup = kind.table_text(live, screen), kind.table_keyboard(live, screen.language)
        self._want(live, None, text, markup)

    def want_dm(self, live: LiveTable, person: int, screen: Rendering, chat_title: str) -> None:
        """``person``'s DM for this table should show their cards and moves now (the views give the
        final state once the round is over); with nothing left to show them, its buttons go.

        A DM with buttons asks them to act: each new turn, and its reminder, is a new message (an
        edit notifies nobody) while the bot's new-message budget has room, else an edit of their DM
        (decided as it goes out: ``_send_kept``); once they have acted it is edited to what they
        did, so no DM keeps a stale prompt."""
        drawn = KINDS[live.game].dm(live, person, screen, chat_title)
        if drawn is not None:
            text, markup = drawn
            # What a prompt shows names the prompt too (``<text>:<buttons>:<timer>.<reminded>``): a
            # new turn or its reminder is a new message, though the same buttons may be pressed;
            # buttons that change within a turn (an all-in after a bonus) are an edit of it.
            prompt = f"{live.engine.core.timer}.{int(live.reminded)}" if markup is not None else None
            self._want(live, person, text, markup, f"{digest(text, markup)}:{prompt}" if prompt else None)
            return
        shown = live.shown.get(str(person))
        if person in live.dm_ids and shown is not None and _buttons(shown) != NO_BUTTONS:
            self._want(live, person, None, None, f"{shown.split(':', 1)[0]}:{NO_BUTTONS}")

    def prompt_waits(self, live: LiveTable) -> bool:
        """Someone's prompt for the running turn still waits to be sent (or is being sent) and their
        DM shows none of this turn (its reminder waiting does not count): they cannot act yet."""
        timer = live.engine.core.timer
        for person in live.seated():
            key = ("d", live.table_id, person)
            wanted = self._kept.get(key) or self._sending.get(key)
            if wanted is None or wanted.timer != timer or wanted.markup is None:
                continue
            if _turn(live.shown.get(str(person))) != str(timer):
                return True
        return False

    async def _end_prompt(self, person: int, message_id: int, record: str | None) -> None:
        """An answered (or timed-out) prompt becomes what they did, or loses its buttons, at once: a
        failure to edit a message that is gone or already so is nothing to wait for."""
        try:
            await self._edit(person, message_id, record, None)
        except BadRequest as error:
            if "not modified" in error.message.lower():
                return
            log.info("DM %s: the prompt %s could not be edited (%s): deleted", person, message_id, error)
            with contextlib.suppress(BadRequest):  # (too old to edit, say)
                await self.bot.delete_message(person, message_id)

    def _leave_behind(self, person: int, message_id: int, shown: str | None, record: str | None) -> None:
        """A new prompt has taken the place of ``person``'s DM: the one before stays as the record
        of what they did (no request), gets that state if it was still to be sent, or is deleted
        when it is a live prompt (the new one repeats it)."""
        if record is not None:
            self._bring(Once(person, message_id, record))
        elif _buttons(shown) != NO_BUTTONS:
            self._delete(person, message_id)

    def retire_table(self, live: LiveTable, screen: Rendering) -> None:
        """A new round gets its own table message (as a prompt does: a new message while the bot's
        new-message budget has room, else an edit of the last one): the last one keeps that round's
        results only (no lobby, no buttons). The first round goes on in its lobby's message."""
        if live.message_id is None or not live.view.results or live.view.results_round != live.round_no - 1:
            return
        live.shown.pop(TABLE, None)
        self._retired[("t", live.table_id)] = (live.message_id, KINDS[live.game].results_text(live, screen))

    def _retired_of(self, key: Hashable, message_id: int | None) -> tuple[int, str | None] | None:
        """The last round's message ``key`` shows now, if a new round is to leave it behind."""
        retired = self._retired.get(key)
        return retired if retired is not None and retired[0] == message_id else None

    def _anew(self, key: Hashable, wanted: Wanted, message_id: int | None, shown: str | None) -> bool:
        """Is ``wanted`` to be a new message though ``message_id`` exists: a new round's first (the
        last round's then keeps its end), a new prompt in a DM? Asked as it is wanted and again as it
        goes out (a message already posted anew meanwhile is only edited)."""
        if wanted.text is None:  # buttons taken away: always from the message there
            return False
        if self._retired_of(key, message_id) is not None:
            return True
        return wanted.person is not None and _new_prompt(shown, wanted.digest)

    def _delete(self, chat_id: int, message_id: int) -> None:
        self._bring(Once(chat_id, message_id, delete=True))

    def _drop_once(self, chat_id: int, message_id: int) -> None:
        key = ("o", chat_id, message_id)
        if self._once.pop(key, None) is not None:
            self.sender.forget(chat_id, key)

    def stale_buttons(self, chat_id: int, message_id: int) -> None:
        """A DM message whose button was refused and that is not the person's DM for the table now
        (a prompt Telegram showed but whose answer never reached a bot killed meanwhile, so its id
        was never known): its buttons go, as for an old round's table message."""
        self._bring(Once(chat_id, message_id), since=self.clock())

    def _bring(self, once: Once, since: float | None = None) -> None:
        """Queue ``once``: a cosmetic edit, unless ``since`` is given: an old round's table message
        losing its buttons, which mislead (pressed, they only say the round is over) and go before
        anything wanted after the new round (``since``: when it was), wherever the group has room."""
        key = ("o", once.chat_id, once.message_id)
        self._once[key] = once
        if since is None:
            self.sender.want(Job(once.chat_id, key, Priority.COSMETIC, self.clock()))
        else:
            self.sender.want(Job(once.chat_id, key, Priority.PHASE, since, Share.REPLY))

    def _want(
        self,
        live: LiveTable,
        person: int | None,
        text: str | None,
        markup: Markup | None,
        wanted_digest: str | None = None,
    ) -> None:
        key = ("t", live.table_id) if person is None else ("d", live.table_id, person)
        message_id = live.message_id if person is None else live.dm_ids.get(person)
        record = None
        if person is not None:  # what the DM shown now was still to show, if anything
            queued = self._kept.get(key)
            record = None if queued is None else queued.record if queued.markup is not None else queued.text
        wanted = Wanted(
            live, person, text, markup, wanted_digest or digest(text, markup), live.engine.core.timer, record
        )
        shown = live.shown.get(wanted.shown_key)
        if message_id is not None and shown == wanted.digest:
            self._kept.pop(key, None)
            self.sender.forget(wanted.chat_id, key)
            return
        anew = message_id is not None and self._anew(key, wanted, message_id, shown)
        new_buttons = message_id is None or anew or _buttons(shown) != _buttons(wanted.digest)
        if person is None:
            priority = Priority.PHASE if new_buttons else Priority.COSMETIC
        else:
            priority = Priority.ACT if new_buttons and markup else Priority.INFO
        self._kept[key] = wanted
        new = message_id is None or anew
        self.sender.want(Job(wanted.chat_id, key, priority, self.clock(), Share.KEPT, new, may_edit=anew))

    def reply(
        self,
        chat_id: int,
        text: str,
        *,
        markup: Markup | None = None,
        reply_to: int | None = None,
        once: Hashable | None = None,
        priority: Priority = Priority.REPLY,
        seen: Callable[[], None] | None = None,
        asker: str | None = None,
        dm: tuple[int, str, str] | None = None,
    ) -> None:
        """Send ``text`` to a chat, never dropped: at once while the chat's budget has room, else as
        soon as it has (in a group, with the other replies waiting then, as one message naming each
        ``asker``). ``once``: the same reply (this key) is sent once in ``REPEAT`` seconds;
        ``priority``: ``ACT`` for a question someone must answer; ``seen``: called once it has
        reached the chat (or, repeated, once the same reply has). ``dm``: a reply about one person
        only, ``(person, its text for them, the group's short line)``: it goes to their DM when
        they have one (the line goes with the group's next reply, costing it no request), else
        ``text`` goes to the group."""
        now = self.clock()
        if once is not None:
            key: Hashable = ("r", chat_id, once)
            if key in self._notes or now - self._repeats.get(key, float("-inf")) < REPEAT:
                if seen is not None:  # the same reply: told once that one has reached the chat
                    queued = self._notes.get(key)
                    if queued is None:
                        seen()
                    else:
                        queued.seen = _both(queued.seen, seen)
                return
            self._repeats[key] = now
            if len(self._repeats) > 1_000:
                self._repeats = {k: at for k, at in self._repeats.items() if now - at < REPEAT}
        else:
            key = ("r", next(self._ids))
        note = Note(chat_id, text, markup, reply_to, priority=priority, since=now, asker=asker, seen=seen)
        if dm is not None and chat_id < 0 and dm[0] not in self._no_dm:
            person, theirs, line = dm
            note = replace(
                note, chat_id=person, text=theirs, reply_to=None, group=(chat_id, reply_to, line, text)
            )
        self._queue(key, note)

    def _queue(self, key: Hashable, note: Note) -> None:
        self._notes[key] = note
        self.sender.want(Job(note.chat_id, key, note.priority, note.since, Share.REPLY, new_message=True))

    def call(self, chat_id: int, key: Hashable, text: str, reply_to: int | None) -> None:
        """A short message calling people to their turn, in the reply share: a mention notifies in a
        new message only (never in an edit of the table). ``withdraw(key)`` deletes it."""
        self.withdraw(key)
        note_key = ("r", "call", key)
        self._notes[note_key] = Note(chat_id, text, None, reply_to, key)
        self.sender.want(Job(chat_id, note_key, Priority.REPLY, self.clock(), Share.REPLY, new_message=True))

    def withdraw(self, key: Hashable) -> None:
        """The turn is over: its call goes (deleted once sent, dropped while still queued)."""
        note = self._notes.pop(("r", "call", key), None)
        if note is not None:
            self.sender.forget(note.chat_id, ("r", "call", key))
        sent = self._calls.pop(key, None)
        if sent is not None:
            self._delete(*sent)

    # -- new rounds ---------------------------------------------------------------------------------
    def retire_dms(self, live: LiveTable) -> None:
        """A new round: its cards go to new DMs while the bot's new-message budget has room, the last
        round's DM keeping its end (still sent if it was still to be), else into the last round's DM
        (decided as each goes out, as for a prompt: an edit notifies nobody, but it is seen at once)."""
        for person, message_id in live.dm_ids.items():
            key = ("d", live.table_id, person)
            last = self._kept.pop(key, None)
            self.sender.forget(person, key)
            if last is not None and last.text is not None:  # the last round's end not shown yet (a 429)
                self._bring(Once(person, message_id, last.text))
            self._retired[key] = (message_id, None)

    # -- sending ------------------------------------------------------------------------------------
    async def _deliver(self, job: Job) -> float | None:
        """Send what ``job`` stands for; a 429's (or a passing failure's) wait, else None."""
        kind = job.key[0]  # type: ignore[index]
        try:
            if kind == "r":
                note = self._notes.pop(job.key, None)
                if note is not None:
                    await self._send_notes(job, [(job.key, note), *self._waiting_with(note)])
            elif kind == "o":
                await self._send_once(job)
            else:
                wanted = self._kept.pop(job.key, None)
                if wanted is not None:
                    self._sending[job.key] = wanted
                    try:
                        await self._send_kept(job, wanted)
                    finally:
                        del self._sending[job.key]
        except RetryAfter as error:
            self.sender.rate_limited(job.chat_id)
            return retry_seconds(error)
        except NetworkError as error:
            if isinstance(error, BadRequest):
                log.warning("chat %s refused a message: %s", job.chat_id, error)
                return None
            log.warning("chat %s could not be sent to now: %s", job.chat_id, error)
            return RETRY
        return None

    async def _send_once(self, job: Job) -> None:
        """Bring a message left behind to its last state: tried again after a 429 or a network
        error (it stays queued); let go when the message or the chat is gone."""
        once = self._once[job.key]
        try:
            if once.delete:
                await self.bot.delete_message(once.chat_id, once.message_id)
            else:
                await self._edit(once.chat_id, once.message_id, once.text, None)
        except (Forbidden, ChatMigrated, BadRequest) as error:
            log.info("chat %s: message %s left as it is: %s", once.chat_id, once.message_id, error)
        del self._once[job.key]

    def _waiting_with(self, first: Note) -> list[tuple[Hashable, Note]]:
        """The other replies waiting in ``first``'s group that can go with it as one message (the
        longest waiting first, as long as the message stays within Telegram's length), taken off
        the queue."""
        if not first.mergeable:
            return []
        waiting = sorted(
            (
                (key, note)
                for key, note in self._notes.items()
                if note.chat_id == first.chat_id and note.mergeable
            ),
            key=lambda item: item[1].since,
        )
        taken, length = [], utf16_length(_part(first))
        now = self.clock()
        for key, note in waiting:
            if note.rider and now - note.since > RIDE:
                continue
            length += 2 + utf16_length(_part(note))
            if length > MESSAGE_CHARACTERS:
                break
            taken.append((key, note))
            del self._notes[key]
            self.sender.forget(note.chat_id, key)
        return taken

    async def _send_notes(self, job: Job, notes: list[tuple[Hashable, Note]]) -> None:
        """Send one reply, or several waiting together as one message (each part naming whom it
        answers; the message answers the first command)."""
        first = notes[0][1]
        text = first.text if len(notes) == 1 else "\n\n".join(_part(note) for _, note in notes)
        try:
            sent = await raw.call(
                self.bot,
                "sendMessage",
                chat_id=first.chat_id,
                text=text,
                parse_mode=ParseMode.HTML,
                reply_markup=first.markup,
                reply_parameters=(
                    {"message_id": first.reply_to, "allow_sending_without_reply": True}
                    if first.reply_to
                    else None
                ),
                link_preview_options=NO_PREVIEW,
            )
        except (Forbidden, ChatMigrated, BadRequest) as error:
            if first.group is not None:  # a DM they never opened: the reply goes to the group
                self._no_dm.add(first.chat_id)
                group, reply_to, _, text = first.group
                self._queue(job.key, replace(first, chat_id=group, text=text, reply_to=reply_to, group=None))
                return
            if isinstance(error, BadRequest):
                if len(notes) > 1:  # which part was refused is not known: each goes on alone
                    self._again(notes, alone=True)
                    return
                raise
            return  # nobody left to read it there
        except (RetryAfter, NetworkError):
            self._notes.setdefault(job.key, first)  # tried again when the chat's wait is over
            self._again(notes[1:])
            raise
        if first.chat_id > 0:
            self._no_dm.discard(first.chat_id)
        if first.call is not None:
            self._calls[first.call] = (first.chat_id, int(sent["message_id"]))
        if first.group is not None:  # their DM has it: the group's next reply carries a short line
            group, reply_to, line, _ = first.group
            self._ride(Note(group, line, None, reply_to, since=self.clock(), rider=True))
        for _, note in notes:
            if note.seen is not None:
                note.seen()

    def _ride(self, note: Note) -> None:
        """Keep ``note`` to go with the next reply sent to its chat (it costs no request of its own),
        for ``RIDE`` seconds at most."""
        now = self.clock()
        for key in [key for key, kept in self._notes.items() if kept.rider and now - kept.since > RIDE]:
            del self._notes[key]
        self._notes[("r", next(self._ids))] = note

    def _again(self, notes: list[tuple[Hashable, Note]], *, alone: bool = False) -> None:
        for key, note in notes:
            self._queue(key, replace(note, alone=True) if alone else note)

    async def _send_kept(self, job: Job, wanted: Wanted) -> None:
        """Show ``wanted``. A new prompt (or round's table) goes as a new message when the job has
        its new-message token (the message before is left behind once it is sent), else as an edit
        of it (the sender found the budget too busy); a message gone since it was wanted is sent
        anew."""
        live, person = wanted.live, wanted.person
        message_id = live.message_id if person is None else live.dm_ids.get(person)
        shown = live.shown.get(wanted.shown_key)
        earlier, retired = None, self._retired_of(job.key, message_id)
        if message_id is not None and job.new_message and self._anew(job.key, wanted, message_id, shown):
            earlier, message_id = message_id, None
        elif message_id is None and not job.new_message and wanted.text is not None:
            self._again_anew(job, wanted)  # no token was taken for it
            return
        elif retired is not None and wanted.text is not None:  # the new round goes on in the last one's
            self._drop_once(wanted.chat_id, retired[0])  # message: its end is not to come after
        ended = earlier is not None and person is not None and _answered(shown, wanted)
        try:
            if ended:  # its buttons go before the next prompt shows: never two live prompts at once
                assert earlier is not None and person is not None
                await self._end_prompt(person, earlier, wanted.record)
            message_id = await self._send(wanted, message_id)
        except ChatMigrated as moved:
            await self.reactions.group_moved(live, moved.new_chat_id)
            return
        except Forbidden:
            if person is None:
                await self.reactions.group_lost(live)
            else:
                await self.reactions.dm_blocked(live, person)
            return
        except BadRequest as error:
            text = error.message.lower()
            if "not found" in text and "message" in text:  # somebody deleted it: send it anew
                self._forget_message(live, person)
                self._again_anew(job, wanted)
                return
            if "chat not found" in text and person is not None:
                await self.reactions.dm_blocked(live, person)
                return
            if "not modified" not in text:
                raise
        except (RetryAfter, NetworkError):  # tried again when the chat's wait is over
            self._kept.setdefault(job.key, wanted)  # (unless a newer state is wanted by then)
            raise
        await self._shown(live, wanted, message_id)
        if retired is not None and wanted.text is not None:
            if self._retired.get(job.key) is retired:  # the new round shows, anew or in the last one
                del self._retired[job.key]
            if earlier is not None and retired[1] is not None:  # the last round's table: its results
                self._bring(Once(wanted.chat_id, earlier, retired[1]), since=job.since)
        elif earlier is not None and person is not None and not ended:
            self._leave_behind(person, earlier, shown, wanted.record)
        # A turn's first prompt to reach them (a reminder to someone who had the prompt comes late
        # by design), or the table's change of turn.
        first = not live.reminded or (person is not None and _turn(shown) != str(wanted.timer))
        turn_prompt = wanted.timer and wanted.timer == live.engine.core.timer and first
        if job.priority <= Priority.PHASE and turn_prompt:
            late = self.clock() - job.since
            if late > LATE:
                self.reactions.delivered_late(live, late)

    async def _send(self, wanted: Wanted, message_id: int | None) -> int | None:
        """Show ``wanted`` (a new message when there is none yet); the id of the new message."""
        if message_id is None:
            if wanted.text is None:
                return None
            sent = await raw.call(
                self.bot,
                "sendMessage",
                chat_id=wanted.chat_id,
                text=wanted.text,
                parse_mode=ParseMode.HTML,
                reply_markup=wanted.markup,
                link_preview_options=NO_PREVIEW,
            )
            return int(sent["message_id"])
        await self._edit(wanted.chat_id, message_id, wanted.text, wanted.markup)
        return None

    async def _edit(self, chat_id: int, message_id: int, text: str | None, markup: Markup | None) -> None:
        """Edit a message to ``text`` and ``markup``; with no text, only take its buttons away."""
        if text is None:
            await raw.call(self.bot, "editMessageReplyMarkup", chat_id=chat_id, message_id=message_id)
            return
        await raw.call(
            self.bot,
            "editMessageText",
            chat_id=chat_id,
            message_id=message_id,
            text=text,
            parse_mode=ParseMode.HTML,
            reply_markup=markup,
            link_preview_options=NO_PREVIEW,
        )

    async def _shown(self, live: LiveTable, wanted: Wanted, new_id: int | None) -> None:
        """Remember (and save) what the message shows now, and the id of a new one."""
        live.shown[wanted.shown_key] = wanted.digest
        changes: dict[str, object] = {"shown": {wanted.shown_key: wanted.digest}}
        if new_id is not None:
            if wanted.person is None:
                live.message_id = new_id
                changes["message_id"] = new_id
            else:
                live.dm_ids[wanted.person] = new_id
                changes["dm_message_ids"] = {wanted.person: new_id}
        try:
            await self.store.update_messages(live.table_id, **changes)  # type: ignore[arg-type]
        except Exception:  # what is shown is kept in memory; the next change saves it again
            log.exception("table %s: what its messages show could not be saved", live.table_id)

    def _again_anew(self, job: Job, wanted: Wanted) -> None:
        """Queue ``wanted`` again as a new message (unless a newer state is wanted by then)."""
        self._kept.setdefault(job.key, wanted)
        self.sender.want(Job(job.chat_id, job.key, job.priority, job.since, Share.KEPT, True))

    def _forget_message(self, live: LiveTable, person: int | None) -> None:
        if person is None:
            live.message_id = None
        else:
            live.dm_ids.pop(person, None)

    async def flush(self, timeout: float = 10.0) -> None:
        """At shutdown: let what is queued go out, waiting at most ``timeout`` (what is left is sent
        after the restart: what each message shows is saved)."""
        try:
            async with asyncio_timeout(timeout):
                await self.sender.drain()
        except TimeoutError:
            log.warning("stopped with messages still queued")
        await self.sender.stop()
