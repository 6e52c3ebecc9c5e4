"""What the bot sends, as values: one frozen dataclass per kind of message, each knowing how it is
delivered, and what a kept message shows (``Shown``, saved with the table as JSON).

A kind of message and its key (what coalesces in the sender's lane: the latest payload wins):

- ``TableMessage`` (``TableKey``): the table's message in its group, kept up to date;
- ``PersonalMessage`` (``DmKey``): a person's DM for a table (their cards, their prompt), kept up;
- ``Reply`` (``ReplyKey``, or ``RepeatKey`` for a reply sent once in a while): sent once;
- ``Cleanup`` (``CleanupKey``): a message left behind, brought to its last state once.

A value carries ids and what it shows, never the table: which message a kept one edits, and what
that message shows now, are the table's to say as it is sent (``bot.send.kept_tables``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from telegram import Bot, LinkPreviewOptions
from telegram.constants import ParseMode

from bot.model.shown import Markup, Shown
from bot.send import raw
from bot.send.rate_policy import Priority
from bot.telegram_facts import is_private_id

NO_PREVIEW = LinkPreviewOptions(is_disabled=True)  # the DM link on a table needs no preview card


def is_new_prompt(shown: Shown | None, wanted: Shown) -> bool:
    """Is ``wanted`` a prompt that ``shown`` is not: a new turn, or its reminder (a new message)?"""
    return wanted.turn is not None and (
        shown is None or (shown.turn, shown.reminded) != (wanted.turn, wanted.reminded)
    )


def right_after_own(shown: Shown | None, wanted: Shown) -> bool:
    """Is ``wanted`` the prompt of the turn right after the one ``shown`` still asks about (its end
    not sent yet)? They have just answered that one, and are looking at it: the new prompt takes its
    place in one edit, instead of an end and a new message that buzzes them again at once."""
    return (
        shown is not None and shown.turn is not None and wanted.turn == shown.turn + 1 and not wanted.reminded
    )


def answered(shown: Shown | None, turn: int) -> bool:
    """Does a DM left behind by a new prompt of ``turn`` show buttons of another turn, which the
    engine now refuses? (A reminder leaves the same turn's prompt: still good.)"""
    return shown is None or (shown.has_buttons and shown.turn != turn)


# -- keys: what coalesces in a chat's lane ------------------------------------------------------------
@dataclass(frozen=True)
class TableKey:
    table_id: int


@dataclass(frozen=True)
class DmKey:
    table_id: int
    person: int


@dataclass(frozen=True)
class CleanupKey:
    chat_id: int
    message_id: int


@dataclass(frozen=True)
class ReplyKey:
    serial: int


@dataclass(frozen=True)
class RepeatKey:
    """A reply sent once in a while (the same ``what`` to a chat): queued once, then dropped for a time."""

    chat_id: int
    what: object


@dataclass(frozen=True)
class CallKey:
    """A turn's call in the group, for someone the bot cannot tell by DM (withdrawn when it is over)."""

    table_id: int


# -- messages -----------------------------------------------------------------------------------------
class KeptUp:
    """A message the bot keeps up: posted once, then edited (both kinds below)."""

    if TYPE_CHECKING:

        @property
        def chat_id(self) -> int: ...

        text: str | None
        markup: Markup | None

    async def deliver(self, bot: Bot, message_id: int | None) -> int | None:
        """Show it (a new message when there is none yet); the id of a new message."""
        return await show(bot, self.chat_id, message_id, self.text, self.markup)


@dataclass(frozen=True)
class TableMessage(KeptUp):
    """The table's message in its group, as it should show now."""

    table_id: int
    chat_id: int  # the group it was wanted for
    text: str
    markup: Markup | None
    shown: Shown
    timer: int  # the engine's timer when it was wanted (a late turn change gives the turn time back)

    person = None  # (not a DM)

    @property
    def key(self) -> TableKey:
        return TableKey(self.table_id)

    @property
    def shown_key(self) -> str:
        return "table"


@dataclass(frozen=True)
class PersonalMessage(KeptUp):
    """A person's DM for a table as it should show now; ``text`` None: keep the text, take the
    buttons away."""

    table_id: int
    person: int
    text: str | None
    markup: Markup | None
    shown: Shown
    timer: int  # the engine's timer when it was wanted
    # What the DM shown now keeps if this prompt is posted anew (what they did, if still to be sent).
    record: str | None = None

    @property
    def chat_id(self) -> int:
        return self.person

    @property
    def key(self) -> DmKey:
        return DmKey(self.table_id, self.person)

    @property
    def shown_key(self) -> str:
        return str(self.person)


Kept = TableMessage | PersonalMessage


@dataclass(frozen=True)
class Reply:
    """A message sent once: a reply to a command, a notice, a turn's call."""

    chat_id: int
    text: str
    markup: Markup | None = None
    reply_to: int | None = None
    call: int | None = None  # a turn's call (its table): its message is kept to be withdrawn
    priority: Priority = Priority.REPLY
    since: float = 0.0  # when it was wanted
    asker: str | None = None  # who it answers (named when replies waiting together go as one)
    seen: Callable[[], None] | None = None  # called when it has reached the chat
    # A reply about one person sent to their DM instead: the group chat, the command's message
    # there, the short line the group gets, and the reply it gets instead if they have no DM.
    group: tuple[int, int | None, str, str] | None = None
    alone: bool = False  # sent by itself (it went with others once, and that message was refused)

    @property
    def mergeable(self) -> bool:
        """Sent with others waiting in its group as one message (no buttons of its own)."""
        return (
            not is_private_id(self.chat_id) and self.markup is None and self.call is None and not self.alone
        )

    @property
    def part(self) -> str:
        """It as part of a message of several: headed by whom it answers."""
        return self.text if self.asker is None else f"▸ {self.asker}\n{self.text}"

    def also_seen(self, then: Callable[[], None]) -> Reply:
        first = self.seen

        def both() -> None:
            if first is not None:
                first()
            then()

        return replace(self, seen=both)

    async def deliver(self, bot: Bot, text: str) -> int:
        """Send it with ``text`` (its own, or several replies' together); the new message's id."""
        return await send_new(bot, self.chat_id, text, self.markup, self.reply_to)


@dataclass(frozen=True)
class Cleanup:
    """A message left behind, brought to its last state once: deleted (a prompt posted anew), or
    edited to ``text`` with ``markup`` (a last round's table message: its replay's button), else
    none (a last round's DM), or, with no text, only its buttons taken away. ``table_id``: the
    table it was a message of (None: none known), whose worker alone may send it (a table let go
    takes it along)."""

    chat_id: int
    message_id: int
    text: str | None = None
    delete: bool = False
    markup: Markup | None = None
    table_id: int | None = None

    @property
    def key(self) -> CleanupKey:
        return CleanupKey(self.chat_id, self.message_id)

    async def deliver(self, bot: Bot) -> None:
        if self.delete:
            await bot.delete_message(self.chat_id, self.message_id)
        else:
            await edit(bot, self.chat_id, self.message_id, self.text, self.markup if self.text else None)


async def show(
    bot: Bot, chat_id: int, message_id: int | None, text: str | None, markup: Markup | None
) -> int | None:
    """Show ``text`` and ``markup`` in a chat: a new message when there is none yet (its id
    returned), else an edit of ``message_id``."""
    if message_id is not None:
        await edit(bot, chat_id, message_id, text, markup)
        return None
    return None if text is None else await send_new(bot, chat_id, text, markup)


async def send_new(
    bot: Bot, chat_id: int, text: str, markup: Markup | None, reply_to: int | None = None
) -> int:
    """A new message (answering ``reply_to`` while it is there); its id."""
    sent = await raw.call(
        bot,
        "sendMessage",
        chat_id=chat_id,
        text=text,
        parse_mode=ParseMode.HTML,
        reply_markup=markup,
        reply_parameters={"message_id": reply_to, "allow_sending_without_reply": True} if reply_to else None,
        link_preview_options=NO_PREVIEW,
    )
    return int(sent["message_id"])


async def edit(bot: Bot, chat_id: int, message_id: int, text: str | None, markup: Markup | None) -> None:
    """Edit a message to ``text`` and ``markup``; with no text, only take its buttons away."""
    if text is None:
        await raw.call(bot, "editMessageReplyMarkup", chat_id=chat_id, message_id=message_id)
        return
    await raw.call(
        bot,
        "editMessageText",
        chat_id=chat_id,
        message_id=message_id,
        text=text,
        parse_mode=ParseMode.HTML,
        reply_markup=markup,
        link_preview_options=NO_PREVIEW,
    )
