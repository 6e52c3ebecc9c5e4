"""The tables whose messages the courier keeps up, found by id. A kept message (``TableMessage``,
``PersonalMessage``) names its table; what the courier reads of the table as it sends (the
message's id now, what it shows now, whether the round's opening is still unseen, the running turn)
and writes once Telegram has confirmed it (what it shows, a new message's id) is the table's own
state (``TableState``: ``bot.model.live_table.LiveTable`` is one), read when the request is made.

A table is held from the first message wanted of it (or from when it was taken as saved) until it
is gone from here, closed or let go to another worker, and nothing of it waits to be sent any
more; then what the orphan search kept of it goes too (``bot.send.orphans``).
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from bot.model.shown import Shown
from bot.send.messages import DmKey, Kept, TableKey
from bot.send.orphans import Orphans
from bot.send.rate_policy import Parcel
from bot.send.sender import Sender


class TableState(Protocol):
    """What the courier reads and writes of a table as it sends the table's messages."""

    @property
    def table_id(self) -> int: ...

    message_id: int | None  # the table message's (None: none yet)
    dm_ids: dict[int, int]  # each person's DM for the table
    shown: dict[str, Shown]  # what each kept message shows, as Telegram confirmed it

    @property
    def opening_unseen(self) -> bool: ...

    @property
    def reminded(self) -> bool: ...

    @property
    def timer(self) -> int: ...


T = TypeVar("T", bound=TableState)


def message_of(table: TableState, wanted: Kept) -> int | None:
    """The id of the message ``wanted`` is to show in, as ``table`` knows it now (None: none yet)."""
    return table.message_id if wanted.person is None else table.dm_ids.get(wanted.person)


def forget_message(table: TableState, wanted: Kept) -> None:
    """The message ``wanted`` was to show in is gone (somebody deleted it): there is none now."""
    if wanted.person is None:
        table.message_id = None
    else:
        table.dm_ids.pop(wanted.person, None)


class KeptTables(Generic[T]):
    """The tables held, by id, and where the messages of each have waited (chat and key)."""

    def __init__(self, sender: Sender, orphans: Orphans) -> None:
        self.sender, self.orphans = sender, orphans
        self._tables: dict[int, T] = {}
        self._lanes: dict[int, set[tuple[int, TableKey | DmKey]]] = {}
        self._gone: set[int] = set()  # held, but closed or another worker's now

    def get(self, table_id: int) -> T | None:
        return self._tables.get(table_id)

    def hold(self, table: T, wanted: Kept | None = None) -> None:
        """Hold ``table``; ``wanted``: one of its messages, about to be queued. A table taken again
        here (a new object for its id) replaces the one held before."""
        if self._tables.get(table.table_id) is not table:
            self._tables[table.table_id] = table
            self._gone.discard(table.table_id)
        if wanted is not None:
            self._lanes.setdefault(table.table_id, set()).add((wanted.chat_id, wanted.key))

    def gone(self, table_id: int) -> None:
        """The table is gone from here, closed (its last messages queued) or let go to another
        worker: forgotten once nothing of it waits to be sent here."""
        if table_id in self._tables:
            self._gone.add(table_id)
            self.forget_if_done(table_id)

    def forget_if_done(self, table_id: int, sending: Parcel | None = None) -> None:
        """Forget the table if it is gone and none of its messages waits to be sent or is being
        sent, but ``sending`` (the parcel whose request has just ended: it is not sent again)."""
        if table_id not in self._gone:
            return
        if any(self._waits(chat_id, key, sending) for chat_id, key in self._lanes.get(table_id, ())):
            return
        del self._tables[table_id]
        self._lanes.pop(table_id, None)
        self._gone.discard(table_id)
        self.orphans.forget(table_id)

    def _waits(self, chat_id: int, key: TableKey | DmKey, sending: Parcel | None) -> bool:
        ended = sending is not None and (sending.chat_id, sending.key) == (chat_id, key)
        return self.sender.waiting(chat_id, key, in_flight=not ended) is not None
