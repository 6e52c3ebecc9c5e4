"""Everything the bot shows on Telegram for a table: the table message (edited in place, coalesced)
and each player's private cards by DM.

A group must never see more than 20 bot requests a minute, so edits of one table message are
coalesced: the latest state wins, at most one edit every ``interval`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from telegram import Bot
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.kinds import KINDS
from bot.live import LiveTable
from bot.views.common import Screen
from storage import Store

log = logging.getLogger(__name__)
ScreenFor = Callable[[str], Awaitable[Screen]]  # a chat's screen (chat id -> language and clock)


class Presenter:
    def __init__(self, bot: Bot, store: Store, interval: float, clock: Callable[[], float] = time.monotonic):
        self.bot = bot
        self.store = store
        self.interval = interval
        self.clock = clock
        self._last_edit: dict[int, float] = {}
        self._pending: dict[int, asyncio.Task[None]] = {}
        self._dm_shown: dict[tuple[int, int], tuple[str, str]] = {}  # what each DM shows now

    # -- the table message ----------------------------------------------------------------------
    async def post_table(self, live: LiveTable, screen: Screen) -> None:
        """Send the table message anew at the bottom of the chat; later edits go to this one."""
        kind = KINDS[live.game]
        old = live.message_id
        message = await self.bot.send_message(
            live.chat_id,
            kind.table_text(live, screen),
            parse_mode=ParseMode.HTML,
            reply_markup=kind.table_keyboard(live, screen.language),
        )
        live.message_id = message.message_id
        self._last_edit[live.chat_id] = self.clock()
        await self.store.update_messages(live.table_id, message_id=message.message_id)
        if old is not None:
            with contextlib.suppress(TelegramError):
                await self.bot.delete_message(live.chat_id, old)

    async def refresh(self, live: LiveTable, screen: Screen) -> None:
        """Show the table's current state: now, or at the end of the coalescing interval."""
        if live.message_id is None:
            await self.post_table(live, screen)
            return
        chat = live.chat_id
        if chat in self._pending:
            return  # the edit already scheduled will show the latest state
        wait = self._last_edit.get(chat, float("-inf")) + self.interval - self.clock()
        if wait <= 0:
            await self._edit(live, screen)
        else:
            self._pending[chat] = asyncio.create_task(self._edit_later(live, screen, wait))

    async def _edit_later(self, live: LiveTable, screen: Screen, wait: float) -> None:
        await asyncio.sleep(wait)
        self._pending.pop(live.chat_id, None)
        await self._edit(live, screen)

    async def _edit(self, live: LiveTable, screen: Screen) -> None:
        kind = KINDS[live.game]
        text, markup = kind.table_text(live, screen), kind.table_keyboard(live, screen.language)
        self._last_edit[live.chat_id] = self.clock()
        try:
            await self.bot.edit_message_text(
                text, live.chat_id, live.message_id, parse_mode=ParseMode.HTML, reply_markup=markup
            )
        except BadRequest as error:
            if "not modified" in error.message:
                return
            if "not found" in error.message:  # somebody deleted it: post it again
                live.message_id = None
                await self.post_table(live, screen)
                return
            raise

    async def flush(self) -> None:
        """Carry out every edit still waiting (at shutdown, and in tests)."""
        while self._pending:
            await asyncio.gather(*list(self._pending.values()), return_exceptions=True)

    # -- private cards --------------------------------------------------------------------------
    async def sync_private(self, live: LiveTable, person: int, screen: Screen, chat_title: str) -> bool:
        """Bring ``person``'s DM up to date (sent, or edited if changed); False when it cannot be sent."""
        drawn = KINDS[live.game].dm(live, person, screen, chat_title)
        if drawn is None:
            return True
        text, markup = drawn
        shown = (text, markup.to_json() if markup else "")
        known = live.dm_ids.get(person)
        if known is not None and self._dm_shown.get((live.table_id, person)) == shown:
            return True
        try:
            if known is not None:
                try:
                    await self.bot.edit_message_text(
                        text, person, known, parse_mode=ParseMode.HTML, reply_markup=markup
                    )
                except BadRequest as error:
                    if "not modified" not in error.message:
                        raise
                self._dm_shown[(live.table_id, person)] = shown
                return True
            message = await self.bot.send_message(
                person, text, parse_mode=ParseMode.HTML, reply_markup=markup
            )
        except Forbidden:
            return False
        self._dm_shown[(live.table_id, person)] = shown
        live.dm_ids[person] = message.message_id
        await self.store.update_messages(live.table_id, dm_message_ids={person: message.message_id})
        return True

    async def forget_dms(self, live: LiveTable) -> None:
        """A new round: its cards go to new DMs."""
        for person in live.dm_ids:
            self._dm_shown.pop((live.table_id, person), None)
        if live.dm_ids:
            forgotten: dict[int, int | None] = dict.fromkeys(live.dm_ids)
            live.dm_ids = {}
            await self.store.update_messages(live.table_id, dm_message_ids=forgotten)
