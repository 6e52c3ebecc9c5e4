"""One run of benchmark 5 or 6: the emulator (with Telegram's limits, or not), the bot process, and
the simulated people, with the moments that frame the figures.

    async with Session(tables=100, limits=FloodLimits(), bot=BotSpec()) as run:
        run.crowd.open_tables(over=20)
        await run.until(run.t0 + 40)
        window = await run.measure(60)        # the bot's CPU over exactly this span
        await run.finish()                     # people stop, presses in flight are let finish
    figures = run.figures()
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from types import TracebackType

from bench.crowd import GIVE_UP, Crowd, PressRecord, seat_people
from bench.figures import Figures, Span
from bench.people import TableSpec, table_specs
from bench.stage import BotProcess, BotSpec, WatchedWorld, cpu_seconds, own_cpu
from faketg.limits import FloodLimits
from faketg.server import Emulator

DRAIN = 20.0  # seconds the people wait at the end for the answers still owed


class Session:
    def __init__(
        self,
        tables: int,
        limits: FloodLimits | None,
        bot: BotSpec,
        *,
        specs: list[TableSpec] | None = None,
        pace: tuple[float, float] | None = None,
        rounds: int | None = None,
        database: Path | None = None,
        workers: int = 1,
    ) -> None:
        self.specs = specs if specs is not None else table_specs(tables)
        self.limits, self.spec = limits, bot
        self.pace, self.rounds = pace, rounds
        self.world = WatchedWorld(limits=limits)
        seat_people(self.world, self.specs)
        self.emulator = Emulator(self.world)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.database = database
        self.bot: BotProcess | None = None
        self.workers = workers  # bot processes (several: workers on PostgreSQL, ``bench.workers``)
        self.bots: list[BotProcess] = []
        self.crowd: Crowd | None = None
        self.t0 = 0.0
        self.end = 0.0
        self.bot_cpu: dict[Span, float] = {}
        self.cpu_by_bot: dict[Span, list[float]] = {}
        self.driver_cpu: dict[Span, float] = {}

    async def __aenter__(self) -> Session:
        await self.emulator.start()
        if self.database is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="paiju-bench-")
            self.database = Path(self._tmp.name) / "paiju.sqlite3"
        for number in range(self.workers):
            log = self.database.with_suffix(f".{number}.log" if number else ".log")
            self.bots.append(BotProcess(self.emulator, self.database, log, self.spec))
            await self.bots[-1].start()  # (a worker after the first: started once someone polls again)
        self.bot = self.bots[0]
        self.t0 = self.world.clock()
        kwargs = {} if self.pace is None else {"pace": self.pace}
        self.crowd = Crowd(self.world, self.emulator, self.specs, rounds=self.rounds, **kwargs)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.crowd is not None:
            self.crowd.stop()
        for bot in self.bots or ([self.bot] if self.bot is not None else []):
            if bot.process is not None:
                await bot.kill()
        await self.emulator.release_polls()  # a long poll left open would hold up the server's shutdown
        await self.emulator.stop()
        if self.crowd is not None:
            self.crowd.handed_times()
        if not self.end:
            self.end = self.world.clock()
        if self._tmp is not None:
            self._tmp.cleanup()

    async def restart(self, bot: BotSpec, limits: FloodLimits | None) -> BotProcess:
        """Stop the bot (SIGTERM: it finishes what it holds back), then start ``bot`` on the same
        database, with ``limits`` from then on."""
        assert self.bot is not None and self.database is not None
        await self.bot.stop()
        self.world.limits = limits
        self.bot = BotProcess(self.emulator, self.database, self.database.with_suffix(".log"), bot)
        await self.bot.start()
        self.bots = [self.bot]
        return self.bot

    async def quiet(self, seconds: float, limit: float) -> bool:
        """Wait until the bot has sent nothing (but polls) for ``seconds``; False after ``limit``."""
        give_up = self.now + limit
        while self.now < give_up:
            last = self.world.last_request_at(exclude="getUpdates")
            if self.now - last >= seconds:
                return True
            await asyncio.sleep(0.25)
        return False

    @property
    def now(self) -> float:
        return self.world.clock()

    async def until(self, moment: float) -> None:
        """Sleep until the world's clock reads ``moment``."""
        while (left := moment - self.now) > 0:
            await asyncio.sleep(min(left, 1.0))

    async def measure(self, seconds: float) -> Span:
        """Let ``seconds`` pass, noting the bot's and this process's CPU over them."""
        assert self.bot is not None
        bots = self.bots or [self.bot]
        start, before, mine = self.now, [cpu_seconds(bot.pid) for bot in bots], own_cpu()
        await self.until(start + seconds)
        span = Span(start, self.now)
        self.cpu_by_bot[span] = [cpu_seconds(bot.pid) - cpu for bot, cpu in zip(bots, before, strict=True)]
        self.bot_cpu[span] = sum(self.cpu_by_bot[span])
        self.driver_cpu[span] = own_cpu() - mine
        for bot in bots:
            bot.note_rss()
        return span

    async def finish(self, drain: float = DRAIN) -> None:
        """The people stop pressing; the presses in flight get ``drain`` s to be answered."""
        assert self.crowd is not None and self.bot is not None
        self.crowd.stop()
        give_up, presses = self.now + drain, self.crowd.seen.presses
        while self.now < give_up and self._owed(presses, self.now - GIVE_UP):
            await asyncio.sleep(0.25)
        self.bot.note_rss()
        self.end = self.now

    @staticmethod
    def _owed(presses: list[PressRecord], since: float) -> bool:
        """Is a press made since ``since`` still unanswered?"""
        for record in reversed(presses):
            if record.made < since:
                return False
            if record.answered is None:
                return True
        return False

    def figures(self) -> Figures:
        assert self.crowd is not None
        return Figures(self.world, self.crowd.seen, self.specs, self.end or self.now)

    def cpu_share(self, span: Span) -> float:
        """The bot's CPU over ``span``, as a share of one core."""
        return self.bot_cpu[span] / (span.end - span.start)

    def driver_share(self, span: Span) -> float:
        return self.driver_cpu[span] / (span.end - span.start)
