"""A breath between rounds (issue 49, point 4): after a round's results, the bot readies nobody
for the next round (those on 再来一局 ✓ 自动准备, and those on autopilot, 托管) until the chat's
pause has passed (``/settings``, ``ChatSettings.pause_seconds``; 0: at once). No turn clock runs
meanwhile: the next round, and its clock, start only once everyone is ready.

Only the bot's own readying waits: a person's 准备 counts at once, and a round whose people all
pressed it themselves starts at once. The pause counts from ``ViewState.ended_at``, saved with the
action that ended the round (an all-in's reveal moves it to the reveal's end), so a bot restarted
during a pause arms its end again (``Runtime.adopt`` presents every table, which asks here), and
one restarted after it readies them at once: the next round still starts.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from telegram.ext import JobQueue

from bot.model.live_table import LiveTable
from bot.tables.moments import TableMoments

if TYPE_CHECKING:
    from bot.model.live_table import Event
    from bot.tables.open_tables import Tables
    from bot.tables.preferences import Preferences


class BreathHost(Protocol):
    """What the pause needs of the bot (``bot.tables.runtime.Runtime``)."""

    tables: Tables
    preferences: Preferences
    clock: Callable[[], float]
    may_act: Callable[[], bool]

    async def present(self, live: LiveTable, events: list[Event]) -> None: ...

    def background(self, work: Coroutine[Any, Any, None]) -> None: ...


def readied_by_the_bot(live: LiveTable) -> list[int]:
    """Whom the bot readies between rounds: those on auto-ready or autopilot who are seated and not
    ready yet."""
    core = live.engine.core
    return [
        person
        for person in dict.fromkeys([*live.view.auto_ready, *live.view.autopilot])
        if (seat := core.seat_of(person)) is not None and not seat.ready
    ]


class Breath:
    """Each table's pause after its results: a JobQueue job at its end (``breath <table id>``)."""

    def __init__(self, host: BreathHost, jobs: JobQueue[Any] | None) -> None:
        self.host = host
        self.moments = TableMoments(jobs, "breath", host, self._over)

    async def holds(self, live: LiveTable) -> bool:
        """Whether the bot waits before readying anyone at this table now (between rounds, the
        caller holds the chat's lock): an all-in's reveal under way (its end presents the table
        again), or the pause since the results not over (its end is armed, and shown on the table:
        ``LiveTable.pause_until``)."""
        if live.reveal is not None:
            return True
        waiting = live.view.ended_at and not live.in_round and readied_by_the_bot(live)
        until = 0.0
        if waiting:
            pause = (await self.host.preferences.chat_settings(live.chat_id)).pause_seconds or 0
            until = live.view.ended_at + pause
        left = until - self.host.clock()
        if left <= 0:
            live.pause_until = 0.0
            self.moments.disarm(live.table_id)
            return False
        if live.pause_until != until:
            live.pause_until = until
            self.moments.arm(live.chat_id, live.table_id, left)
        return True

    def let_go(self, table_id: int) -> None:
        self.moments.disarm(table_id)

    async def _over(self, live: LiveTable) -> None:
        """The pause is over: the table is presented again, which readies those the bot readies."""
        live.pause_until = 0.0
        await self.host.present(live, [])
