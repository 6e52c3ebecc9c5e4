"""Everything the bot shows on Telegram for a table: the table message (edited in place, coalesced)
and each player's private cards by DM.

A group must never see more than 20 bot requests a minute (Telegram's limit). Edits of a table
message are coalesced — the latest state wins — and spaced by the group's budget: at most one
every ``interval`` seconds, and a token bucket of ``per_minute`` table requests (sends, edits,
deletes) a minute after a small burst, leaving room for replies to commands. An edit Telegram
refuses for a passing reason (a network error, 429, 5xx) is tried again later, so a table never
stays wrong on screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from telegram import Bot, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError

from bot import raw
from bot.kinds import KINDS
from bot.live import LiveTable
from bot.views.common import Markup, Screen
from storage import Store

log = logging.getLogger(__name__)
WINDOW = 60.0  # Telegram counts a group's requests per minute
BURST = 3  # table requests a quiet group may see at once (more when the budget is set higher)
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)  # the DM link on a table needs no preview card
RETRY = 3.0  # seconds before an edit that failed for a passing reason is tried again


def passing(error: TelegramError) -> bool:
    """A failure worth trying again later: 429, a timeout, a 5xx or a dropped connection."""
    return isinstance(error, RetryAfter) or (
        isinstance(error, NetworkError) and not isinstance(error, BadRequest)
    )


class Presenter:
    def __init__(
        self,
        bot: Bot,
        store: Store,
        interval: float,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.store = store
        self.interval = interval
        self.per_minute = per_minute
        self.burst = float(max(BURST, per_minute // 5))
        self.clock = clock
        self._bucket: dict[int, tuple[float, float]] = {}  # each group's tokens, and when counted
        self._last: dict[int, float] = {}  # when each group's last table request went out
        self._pending: dict[int, asyncio.Task[None]] = {}  # an edit waiting for the budget, per chat
        self._latest: dict[int, tuple[LiveTable, Screen]] = {}  # what that edit will show
        self._dm_shown: dict[tuple[int, int], tuple[str, Markup | None]] = {}  # what each DM shows now
        self._dm_unsaved: dict[int, dict[int, int]] = {}  # the ids of new DMs, per table, not saved yet

    # -- the group's budget -----------------------------------------------------------------------
    def _spent(self, chat_id: int) -> None:
        """A table request went to the group: it takes a token of the group's bucket."""
        tokens = self._tokens(chat_id)
        self._bucket[chat_id] = (tokens - 1, self.clock())
        self._last[chat_id] = self.clock()

    def _tokens(self, chat_id: int) -> float:
        now = self.clock()
        tokens, at = self._bucket.get(chat_id, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self.per_minute / WINDOW)

    def wait_for_budget(self, chat_id: int) -> float:
        """Seconds until the group may see the next table edit (0: now). A token bucket: a burst of
        ``BURST``, then ``per_minute`` a minute evenly — at most BURST + per_minute in any 60 s, and
        never a long stall once a quick burst is spent."""
        tokens = self._tokens(chat_id)
        wait = (1 - tokens) * WINDOW / self.per_minute if tokens < 1 else 0.0
        gap = self._last.get(chat_id, float("-inf")) + self.interval - self.clock()
        return max(wait, gap, 0.0)

    # -- the table message ----------------------------------------------------------------------
    async def post_table(self, live: LiveTable, screen: Screen) -> None:
        """Send the table message anew at the bottom of the chat; later edits go to this one."""
        kind = KINDS[live.game]
        old = live.message_id
        self._spent(live.chat_id)
        sent = await raw.call(
            self.bot,
            "sendMessage",
            chat_id=live.chat_id,
            text=kind.table_text(live, screen),
            parse_mode=ParseMode.HTML,
            reply_markup=kind.table_keyboard(live, screen.language),
            link_preview_options=NO_PREVIEW,
        )
        live.message_id = sent["message_id"]
        await self.store.update_messages(live.table_id, message_id=live.message_id)
        if old is not None:
            self._spent(live.chat_id)
            with contextlib.suppress(TelegramError):
                await self.bot.delete_message(live.chat_id, old)

    async def refresh(self, live: LiveTable, screen: Screen) -> None:
        """Show the table's current state: now, or as soon as the group's budget allows."""
        self._latest[live.chat_id] = (live, screen)
        if live.chat_id in self._pending:
            return  # the edit already scheduled will show the latest state (even of a new table)
        wait = self.wait_for_budget(live.chat_id)
        if wait > 0:
            self._later(live.chat_id, wait)
            return
        try:
            await self._show(live, screen)
        except TelegramError as error:
            if not passing(error):
                raise
            log.warning("the table of chat %s could not be shown now: %s", live.chat_id, error)
            self._later(live.chat_id, float(error.retry_after) if isinstance(error, RetryAfter) else RETRY)

    def _later(self, chat_id: int, wait: float) -> None:
        self._pending[chat_id] = asyncio.create_task(self._refresh_later(chat_id, float(wait)))

    async def _refresh_later(self, chat_id: int, wait: float) -> None:
        await asyncio.sleep(wait)
        self._pending.pop(chat_id, None)
        live, screen = self._latest[chat_id]
        try:
            await self.refresh(live, screen)
        except TelegramError as error:  # the next change of the table meets it again, and handles it
            log.warning("a delayed edit of chat %s failed: %s", chat_id, error)

    async def _show(self, live: LiveTable, screen: Screen) -> None:
        if live.message_id is None:
            await self.post_table(live, screen)
            return
        kind = KINDS[live.game]
        text, markup = kind.table_text(live, screen), kind.table_keyboard(live, screen.language)
        self._spent(live.chat_id)
        try:
            await raw.call(
                self.bot,
                "editMessageText",
                chat_id=live.chat_id,
                message_id=live.message_id,
                text=text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
                link_preview_options=NO_PREVIEW,
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
        """Wait for every edit still scheduled (at shutdown, and in tests)."""
        while self._pending:
            await asyncio.gather(*list(self._pending.values()), return_exceptions=True)

    async def cancel_pending(self) -> None:
        for task in list(self._pending.values()):
            task.cancel()
        self._pending.clear()

    # -- private cards --------------------------------------------------------------------------
    async def sync_private(self, live: LiveTable, person: int, screen: Screen, chat_title: str) -> bool:
        """Bring ``person``'s DM up to date (sent, or edited if changed); False when it cannot be sent."""
        drawn = KINDS[live.game].dm(live, person, screen, chat_title)
        if drawn is None:
            await self._drop_dm_buttons(live, person)
            return True
        text, markup = drawn
        shown = (text, markup)
        known = live.dm_ids.get(person)
        if known is not None and self._dm_shown.get((live.table_id, person)) == shown:
            return True
        try:
            if known is not None:
                try:
                    await raw.call(
                        self.bot,
                        "editMessageText",
                        chat_id=person,
                        message_id=known,
                        text=text,
                        parse_mode=ParseMode.HTML,
                        reply_markup=markup,
                    )
                except BadRequest as error:
                    if "not modified" not in error.message:
                        raise
                self._dm_shown[(live.table_id, person)] = shown
                return True
            sent = await raw.call(
                self.bot,
                "sendMessage",
                chat_id=person,
                text=text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
            )
        except Forbidden:
            return False
        self._dm_shown[(live.table_id, person)] = shown
        live.dm_ids[person] = sent["message_id"]
        self._dm_unsaved.setdefault(live.table_id, {})[person] = sent["message_id"]
        return True

    async def _drop_dm_buttons(self, live: LiveTable, person: int) -> None:
        """The round is over for ``person``: the buttons of their DM go (its text stays, their cards)."""
        shown = self._dm_shown.get((live.table_id, person))
        known = live.dm_ids.get(person)
        if known is None or shown is None or not shown[1]:
            return
        self._dm_shown[(live.table_id, person)] = (shown[0], None)
        with contextlib.suppress(TelegramError):
            await raw.call(self.bot, "editMessageReplyMarkup", chat_id=person, message_id=known)

    async def forget_dms(self, live: LiveTable) -> None:
        """A new round: its cards go to new DMs (saved at once: after a crash the new round's cards
        must never be written into the last round's DMs)."""
        for person in live.dm_ids:
            self._dm_shown.pop((live.table_id, person), None)
        if live.dm_ids:
            forgotten: dict[int, int | None] = dict.fromkeys(live.dm_ids)
            live.dm_ids = {}
            self._dm_unsaved.pop(live.table_id, None)
            await self.store.update_messages(live.table_id, dm_message_ids=forgotten)

    async def save_dms(self, live: LiveTable) -> None:
        """Save the ids of the DMs sent since the last save, in one write (after a round of DMs); if
        that fails they are kept for the next save."""
        unsaved = self._dm_unsaved.pop(live.table_id, None)
        if not unsaved:
            return
        try:
            await self.store.update_messages(live.table_id, dm_message_ids=unsaved)
        except BaseException:
            self._dm_unsaved[live.table_id] = {**unsaved, **self._dm_unsaved.get(live.table_id, {})}
            raise
