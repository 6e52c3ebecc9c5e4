"""What the bot does when a chat changes under a table: the group became a supergroup, the bot was
removed from it, someone's DM cannot be reached, a prompt reached its person late. Telegram's
answers bring these (``bot/send/courier.py``), and so do the handlers of the service messages
(``bot/handlers/table.py``); each takes the chat's lock itself, except where it says the caller
holds it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from bot.display.game_kinds import KINDS
from bot.model.live_table import LiveTable, Notice
from games.table import Cancel

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterable
    from typing import Any

    from bot.display.presenter import Presenter
    from bot.display.views.common import Rendering
    from bot.model.live_table import Event
    from bot.send.dm_reach import DmReach
    from bot.tables.open_tables import Tables
    from bot.tables.preferences import Preferences
    from bot.tables.turn_clock import TurnClock
    from storage import Store


class EventsHost(Protocol):
    """What the chat events need of the bot that runs the tables (``bot.tables.runtime.Runtime``)."""

    tables: Tables
    turns: TurnClock
    presenter: Presenter
    preferences: Preferences
    dms: DmReach
    store: Store
    chat_titles: dict[int, str]

    def background(self, work: Coroutine[Any, Any, None]) -> None: ...

    async def present(self, live: LiveTable, events: list[Event]) -> None: ...

    def credit_elsewhere(self, live: LiveTable, events: list[Event]) -> None: ...

    async def send_private(self, live: LiveTable, people: Iterable[int]) -> None: ...

    async def screen(self, chat_id: int) -> Rendering: ...


log = logging.getLogger(__name__)


class ChatEvents:
    """The runtime's reactions to what happened to a table's chats (``Presenter.chat_events``)."""

    def __init__(self, runtime: EventsHost) -> None:
        self.runtime = runtime

    def delivered_late(self, live: LiveTable, seconds: float) -> None:
        """A prompt reached its person ``seconds`` late: the turn gets that time back."""
        self.runtime.turns.delivered_late(live, seconds)

    def round_shown(self, live: LiveTable) -> None:
        """The group has seen the new round's table message, its base and 🔐 commitment: the round
        is dealt to its people now (their DMs, the Mini App's hands) and its turn's clock runs (the
        time the message took is given back to it, as for a late prompt: ``delivered_late``)."""
        self.runtime.background(self._deal(live))

    async def _deal(self, live: LiveTable) -> None:
        async with self.runtime.tables.lock(live.chat_id):
            if self.runtime.tables.get(live.chat_id) is live and live.in_round:
                await self.runtime.present(live, [])

    async def group_moved(self, live: LiveTable, new_chat_id: int) -> None:
        """The group became a supergroup: the table follows it (or ends: see ``migrate``)."""
        async with self.runtime.tables.lock(live.chat_id):
            if self.runtime.tables.get(live.chat_id) is not live:
                return
            followed = await self.migrate(live.chat_id, new_chat_id)
        if followed is not None:
            async with self.runtime.tables.lock(followed.chat_id):
                await self.runtime.present(followed, [])

    async def group_lost(self, live: LiveTable) -> None:
        """The bot was removed from the group: nobody can play on there."""
        async with self.runtime.tables.lock(live.chat_id):
            if self.runtime.tables.get(live.chat_id) is live:
                await self.abandon(live)

    async def dm_blocked(self, live: LiveTable, person: int) -> None:
        """Telegram refused a message to ``person``'s DM (never opened, or the bot blocked): learnt
        for the whole bot (``bot/send/dm_reach.py``), and the table names them (``no_dm``)."""
        runtime = self.runtime
        runtime.dms.learn(person, refused=True)
        async with runtime.tables.lock(live.chat_id):
            if person not in live.view.dm_failed and runtime.tables.get(live.chat_id) is live:
                self.no_dm(live, person)
                runtime.presenter.want_table(live, await runtime.screen(live.chat_id))
                await runtime.turns.call(live)

    def no_dm(self, live: LiveTable, person: int) -> None:
        """``person`` cannot be told by DM (the caller holds the chat's lock, and shows the table):
        the table says so once (with the link that opens it), and from then on mentions them on
        the line for their turn."""
        if person not in live.view.dm_failed:
            live.view.dm_failed.append(person)
            live.view.notices.append(Notice("dm.failed", person, 0, live.round_no))

    async def dm_opened(self, live: LiveTable, person: int) -> None:
        """``person`` opened their DM with the bot (or one reached it): their cards go there again,
        and the table stops naming them for it."""
        runtime = self.runtime
        async with runtime.tables.lock(live.chat_id):
            if runtime.tables.get(live.chat_id) is not live or person not in live.seated():
                return
            if person in live.view.dm_failed:
                live.view.dm_failed.remove(person)
                notices = live.view.notices
                live.view.notices = [n for n in notices if (n.key, n.person) != ("dm.failed", person)]
                runtime.presenter.want_table(live, await runtime.screen(live.chat_id))
                await runtime.turns.call(live)
            await runtime.send_private(live, [person])

    async def abandon(self, live: LiveTable) -> None:
        """End a table the bot can no longer show (removed from its group): the escrow goes back."""
        log.warning("the bot cannot reach chat %s: its table %s is cancelled", live.chat_id, live.table_id)
        await self.end_now(live)

    async def end_now(self, live: LiveTable) -> None:
        """Cancel a table that cannot go on where it is shown: the escrow goes back (reaching those
        seated elsewhere), no deadline stays armed, no DM keeps its buttons."""
        if not live.engine.closed:
            self.runtime.credit_elsewhere(live, await self.runtime.tables.apply(live, Cancel()))
        self.runtime.turns.arm(live)
        await self.runtime.send_private(live, live.dm_ids)

    async def migrate(self, old: int, new: int) -> LiveTable | None:
        """A group was upgraded to a supergroup (the caller holds the old chat's lock): its table
        follows it, unless the new chat opened one first (one table a chat): then the old one ends,
        its escrow goes back and the group is told, so no table ever plays on unseen."""
        runtime, tables = self.runtime, self.runtime.tables
        async with tables.lock(new):  # (always taken after the old chat's: no cycle)
            live = tables.get(old)
            if live is not None and tables.get(new) is not None:
                await self.end_now(live)
                live.view.closed_reason = "upgraded"  # said once, in the new chat (saved: cancelled)
                runtime.presenter.reply(new, KINDS[live.game].table_text(live, await runtime.screen(new)))
                live = None
            await runtime.store.migrate_chat(old, new)
            runtime.preferences.forget_chat(old)
            runtime.preferences.forget_chat(new)
            runtime.chat_titles.setdefault(new, runtime.chat_titles.get(old, ""))
            if live is not None:
                del tables.by_chat[old]
                live.chat_id, live.message_id = new, None
                tables.by_chat[new] = live
        return live
