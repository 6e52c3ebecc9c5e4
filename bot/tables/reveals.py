"""An all-in's reveal (issue 49, point 4): when everyone answered an all-in, the engine deals the
cards left and shows the hands down in one action; the table shows them one card at a time
instead (``LiveTable.reveal``: display only, the engine stays as it is), about
``Settings.reveal_seconds`` apart, face-down cards still down, then the show-down with the results.

Each step is a JobQueue job (``reveal <table id>``) that presents the table again, which edits the
group's message (and pushes the open Mini Apps). The group's budget decides the pace beyond that: a
step waits while the last one's edit is still queued (``REVEAL_PATIENCE`` at most), so every card
is seen rather than coalesced away. The DMs follow it (each person's cards so far, their result
only at the end: ``showhand_reveal.staged_dm``), and the pause before auto-ready
(``bot/tables/breath.py``) counts from its end. Nothing of it is saved: a restarted bot, or a
worker taking the table over, shows the end at once.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from telegram.ext import JobQueue

from bot.display.views.showhand_reveal import FULL_HAND, run_out
from bot.model.live_table import LiveTable, Reveal
from bot.send.messages import TableKey
from bot.tables.moments import TableMoments

if TYPE_CHECKING:
    from bot.display.presenter import Presenter
    from bot.model.live_table import Event
    from bot.tables.open_tables import Tables

REVEAL_PATIENCE = 8.0  # seconds after the answer by which the results are shown, whatever the budget


class RevealHost(Protocol):
    """What a reveal needs of the bot (``bot.tables.runtime.Runtime``)."""

    tables: Tables
    presenter: Presenter
    clock: Callable[[], float]
    may_act: Callable[[], bool]

    async def present(self, live: LiveTable, events: list[Event]) -> None: ...

    async def save_between_actions(
        self, live: LiveTable, *, turn: bool = False, view: bool = False
    ) -> None: ...

    def background(self, work: Coroutine[Any, Any, None]) -> None: ...


class Reveals:
    """Every table's reveal under way (see the module's docstring)."""

    def __init__(self, host: RevealHost, jobs: JobQueue[Any] | None, step_seconds: float) -> None:
        self.host = host
        self.step_seconds = step_seconds
        self.moments = TableMoments(jobs, "reveal", host, self._step)

    def begin(self, live: LiveTable, events: list[Event]) -> None:
        """An action was presented: if it dealt the cards left of an all-in everyone answered, its
        reveal begins (none when the bot has no JobQueue to pace it, or paces it at 0 s); a new
        round, or the table's end, ends one under way."""
        if live.reveal is not None and (live.in_round or live.engine.closed):
            self.end(live)
        shown = run_out(events)
        if shown is None or self.step_seconds <= 0 or self.moments.jobs is None or live.engine.closed:
            return
        live.reveal = Reveal(live.round_no, shown, self.host.clock())
        self.moments.arm(live.chat_id, live.table_id, self.step_seconds)

    def end(self, live: LiveTable) -> None:
        live.reveal = None
        self.moments.disarm(live.table_id)

    def let_go(self, table_id: int) -> None:
        self.moments.disarm(table_id)

    async def step(self, chat_id: int, table_id: int) -> None:
        """The next card (a test fires it by hand); the last one shows the results."""
        await self.moments.fire(chat_id, table_id)

    async def _step(self, live: LiveTable) -> None:
        reveal = live.reveal
        if reveal is None:
            return
        now = self.host.clock()
        late = now - reveal.began >= REVEAL_PATIENCE
        if self._still_queued(live) and not late:
            self.moments.arm(live.chat_id, live.table_id, self.step_seconds / 2)  # (the group's budget)
            return
        reveal.shown += 1  # (past a whole hand: the show-down, the face-down cards and results)
        if reveal.shown <= FULL_HAND and not late:
            self.moments.arm(live.chat_id, live.table_id, self.step_seconds)
        else:
            self.end(live)
            live.view.ended_at = now  # the results are shown now: the pause counts from here
            await self.host.save_between_actions(live, view=True)
        await self.host.present(live, [])

    def _still_queued(self, live: LiveTable) -> bool:
        """The table message's last change has not gone to Telegram yet."""
        return self.host.presenter.sender.waiting(live.chat_id, TableKey(live.table_id)) is not None
