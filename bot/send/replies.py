"""Replies: messages sent once (an answer to a command, a notice, a turn's call in the group).

Never dropped: each goes at once while its chat's budget has room, else as soon as it has; in a
group, the replies waiting then go as one message naming whom each answers (within Telegram's
length). A reply about one person goes to their DM when they have one; the group gets a short line
saying so (with a reply waiting there, in the same message). A turn's call is withdrawn
(deleted) when the turn is over.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import replace

from telegram import Bot
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter

from bot.send.dm_reach import DmReach
from bot.send.messages import CallKey, Cleanup, RepeatKey, Reply, ReplyKey
from bot.send.rate_policy import Parcel, Priority, Share
from bot.send.sender import Sender
from bot.telegram_facts import MESSAGE_CHARACTERS, is_private_id, utf16_length

log = logging.getLogger(__name__)
REPEAT = 5.0  # the same reply to the same person in one chat is sent once in this many seconds
AnyReplyKey = ReplyKey | RepeatKey | CallKey


class Replies:
    def __init__(
        self,
        bot: Bot,
        sender: Sender,
        clean_up: Callable[[Cleanup], None],
        clock: Callable[[], float],
        dms: DmReach,
    ) -> None:
        self.bot = bot
        self.sender = sender
        self.clean_up = clean_up  # a message left behind (a turn's call, once over) goes
        self.clock = clock
        self._serials = itertools.count()
        self._repeats: dict[RepeatKey, float] = {}  # when each reply sent once in a while was last queued
        self.dms = dms  # whose DM Telegram refused (a reply about them goes to the group)
        self._calls: dict[int, tuple[int, int]] = {}  # each table's turn call sent: (chat, message)

    def reply(
        self,
        chat_id: int,
        text: str,
        *,
        markup: dict[str, list[list[dict[str, str]]]] | None = None,
        reply_to: int | None = None,
        once: object | None = None,
        priority: Priority = Priority.REPLY,
        seen: Callable[[], None] | None = None,
        asker: str | None = None,
        dm: tuple[int, str, str] | None = None,
        alone: bool = False,
    ) -> None:
        """Send ``text`` to a chat, never dropped. ``once``: the same reply (this key) is sent once in
        ``REPEAT`` seconds; ``priority``: ``ACT`` for a question someone must answer; ``seen``:
        called once it has reached the chat (or, repeated, once the same reply has). ``dm``: a reply
        about one person only, ``(person, its text for them, the group's short line)``: it goes to
        their DM when they have one (then the line goes to the group, in one message with the
        replies waiting there if any), else ``text`` goes to the group. ``alone``: sent as a message
        of its own, never with other replies waiting (a table's 总结算: it is screenshotted)."""
        now = self.clock()
        key: AnyReplyKey
        if once is not None:
            key = RepeatKey(chat_id, once)
            queued = self.sender.waiting(chat_id, key)
            if queued is not None or now - self._repeats.get(key, float("-inf")) < REPEAT:
                if seen is not None:  # the same reply: told once that one has reached the chat
                    if queued is None:
                        seen()
                    else:
                        assert isinstance(queued.payload, Reply)
                        queued.payload = queued.payload.also_seen(seen)
                return
            self._repeats[key] = now
            if len(self._repeats) > 1_000:
                self._repeats = {k: at for k, at in self._repeats.items() if now - at < REPEAT}
        else:
            key = ReplyKey(next(self._serials))
        note = Reply(
            chat_id, text, markup, reply_to, priority=priority, since=now, asker=asker, seen=seen, alone=alone
        )
        if dm is not None and not is_private_id(chat_id) and not self.dms.refused(dm[0]):
            person, theirs, line = dm
            note = replace(
                note, chat_id=person, text=theirs, reply_to=None, group=(chat_id, reply_to, line, text)
            )
        self._queue(key, note)

    def _queue(self, key: AnyReplyKey, note: Reply, *, newer: bool = True) -> None:
        parcel = Parcel(
            note.chat_id, key, note.priority, note.since, Share.REPLY, new_message=True, payload=note
        )
        self.sender.want(parcel, newer=newer)

    def call(self, chat_id: int, table_id: int, text: str, reply_to: int | None) -> None:
        """A short message calling people to their turn, in the reply share: a mention notifies in a
        new message only (never in an edit of the table). ``withdraw`` deletes it."""
        self.withdraw(chat_id, table_id)
        self._queue(
            CallKey(table_id), Reply(chat_id, text, None, reply_to, call=table_id, since=self.clock())
        )

    def withdraw(self, chat_id: int, table_id: int) -> None:
        """The turn is over: its call goes (deleted once sent, dropped while still queued)."""
        self.sender.withdraw(chat_id, CallKey(table_id))
        sent = self._calls.pop(table_id, None)
        if sent is not None:
            self.clean_up(Cleanup(*sent, delete=True))

    # -- sending ------------------------------------------------------------------------------------
    async def send(self, parcel: Parcel, first: Reply) -> None:
        """Send ``first``, with the replies waiting in its group that can go with it as one message."""
        await self._send(parcel, [(parcel.key, first), *self._waiting_with(first)])

    def _waiting_with(self, first: Reply) -> list[tuple[object, Reply]]:
        """The other replies waiting in ``first``'s group that can go with it as one message (the
        longest waiting first, as long as the message stays within Telegram's length), taken off
        the queue."""
        if not first.mergeable:
            return []
        waiting = sorted(
            [
                (parcel.key, parcel.payload)
                for parcel in self.sender.waiting_in(first.chat_id)
                if isinstance(parcel.payload, Reply) and parcel.payload.mergeable
            ],
            key=lambda item: item[1].since,
        )
        taken: list[tuple[object, Reply]] = []
        length = utf16_length(first.part)
        for key, note in waiting:
            length += 2 + utf16_length(note.part)
            if length > MESSAGE_CHARACTERS:  # the rest waits
                break
            taken.append((key, note))
            self.sender.withdraw(note.chat_id, key)
        return taken

    async def _send(self, parcel: Parcel, notes: list[tuple[object, Reply]]) -> None:
        """Send one reply, or several waiting together as one message (each part naming whom it
        answers; the message answers the first command)."""
        first = notes[0][1]
        text = first.text if len(notes) == 1 else "\n\n".join(note.part for _, note in notes)
        try:
            message_id = await first.deliver(self.bot, text)
        except (Forbidden, ChatMigrated, BadRequest) as error:
            if first.group is not None:  # a DM they never opened: the reply goes to the group
                self.dms.learn(first.chat_id, refused=True)
                group, reply_to, _, text = first.group
                assert isinstance(parcel.key, AnyReplyKey)
                self._queue(
                    parcel.key, replace(first, chat_id=group, text=text, reply_to=reply_to, group=None)
                )
                return
            if isinstance(error, BadRequest):
                if len(notes) > 1:  # which part was refused is not known: each goes on alone
                    self._again(notes, alone=True)
                    return
                raise
            return  # nobody left to read it there
        except (
            RetryAfter,
            NetworkError,
        ):  # the sender puts ``first`` back: tried when the chat's wait is over
            self._again(notes[1:])
            raise
        if is_private_id(first.chat_id):
            self.dms.learn(first.chat_id, refused=False)
        if first.call is not None:
            self._calls[first.call] = (first.chat_id, message_id)
        if first.group is not None:  # their DM has it: the group is told so, answering the command
            group, reply_to, line, _ = first.group
            self._queue(ReplyKey(next(self._serials)), Reply(group, line, None, reply_to, since=self.clock()))
        for _, note in notes:
            if note.seen is not None:
                note.seen()

    def _again(self, notes: list[tuple[object, Reply]], *, alone: bool = False) -> None:
        for key, note in notes:
            again = replace(note, alone=True) if alone else note
            self._queue(
                key if isinstance(key, AnyReplyKey) else ReplyKey(next(self._serials)), again, newer=False
            )
