"""The stage of benchmarks 5 and 6: the HTTP emulator, a world that reports what happens in it, and
the bot as a subprocess (``python -m bot``, or another module, from this tree or another one).

``WatchedWorld`` notes the moment each update is first handed to the bot by ``getUpdates`` and
tells its listeners of every Bot API call it answers (or refuses), as it happens: the simulated
people (``bench.crowd``) see a message the moment the emulator changes it.

The bot under test is chosen by ``BotSpec``: the module to run and the source tree to run it from
(``--bot-root``: a copy of another commit, e.g. ``git archive HEAD | tar -x -C /tmp/head``, so the
bot as committed can be measured while the working tree changes).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from faketg.limits import FloodLimits
from faketg.server import Emulator
from faketg.world import JSON, ApiError, World

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "424242:BENCH-SECRET-TOKEN"
WALLET = 1_000_000_000  # the bot's starting grant in benchmarks: nobody runs out of coins

Listener = Callable[[str, JSON, object, ApiError | None, float], None]


class WatchedWorld(World):
    """The fake Telegram, telling its listeners of every call it answers, when it answers it."""

    def __init__(self, clock: Callable[[], float] = time.time, limits: FloodLimits | None = None) -> None:
        super().__init__(clock, limits)
        self.handed: dict[int, float] = {}  # update id -> when getUpdates first handed it out
        self.listeners: list[Listener] = []

    def call(self, method: str, params: JSON) -> object:
        try:
            result = super().call(method, params)
        except ApiError as error:
            self._tell(method, params, None, error)
            raise
        self._tell(method, params, result, None)
        return result

    def _tell(self, method: str, params: JSON, result: object, error: ApiError | None) -> None:
        if method == "getUpdates" or not self.listeners:
            return
        now = self.requests[-1].at
        for listener in self.listeners:
            listener(method, params, result, error, now)

    def api_getUpdates(self, params: JSON) -> list[JSON]:
        updates = super().api_getUpdates(params)
        now = self.clock()
        for update in updates:
            self.handed.setdefault(int(str(update["update_id"])), now)
        return updates


@dataclass(frozen=True)
class BotSpec:
    """Which bot runs: ``python -m <module>`` with ``root`` first on its path."""

    module: str = "bot"
    root: Path = ROOT
    env: tuple[tuple[str, str], ...] = ()
    label: str = ""  # what the tree is, for the results ("as committed at 8d0cab0")

    def describe(self) -> str:
        where = "" if self.root == ROOT else f" from {self.root}"
        return f"`python -m {self.module}`" + (f" {self.label}" if self.label else where)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds so far of a process and of the processes it started (a bot tree
    from 2815ac5 to abda380 has its SQLite writer in a process of its own), those
    ended and waited for included."""
    total = 0.0
    for process in _family(pid):
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rpartition(")")[2].split()
        except OSError:  # (ended meanwhile)
            continue
        total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")
    return total


def peak_rss_mb(pid: int) -> float:
    """The peak resident memory of a process (VmHWM), plus what the processes it started use now
    (their proportional share, Pss: a forked child shares most of its pages with its parent)."""
    total = _status_mb(pid, "VmHWM:", "status")
    for process in _family(pid)[1:]:
        total += _status_mb(process, "Pss:", "smaps_rollup")
    return total


def _status_mb(pid: int, key: str, name: str) -> float:
    try:
        lines = Path(f"/proc/{pid}/{name}").read_text().splitlines()
    except OSError:  # (ended meanwhile)
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in lines if line.startswith(key)), 0.0)


def _family(pid: int) -> list[int]:
    """A process and those it started, theirs included (as they are now)."""
    family, index = [pid], 0
    while index < len(family):
        for children in Path(f"/proc/{family[index]}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                family.extend(int(child) for child in children.read_text().split())
        index += 1
    return family


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system


@dataclass
class BotProcess:
    """The bot under test as a subprocess talking to ``emulator``, on the database ``database``."""

    emulator: Emulator
    database: Path
    log: Path
    spec: BotSpec = field(default_factory=BotSpec)
    process: asyncio.subprocess.Process | None = None
    started_at: float = 0.0  # the world's clock when the process was started
    rss_mb: float = 0.0  # its peak RSS, read before it is stopped

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PAIJU_", "TELEGRAM_"))}
        env.update(
            TELEGRAM_BOT_TOKEN=TOKEN,
            PAIJU_DB=str(self.database),
            PAIJU_BOT_API_URL=self.emulator.url,
            PAIJU_START_GRANT=str(WALLET),
            PAIJU_LOBBY_SECONDS="3600",  # a lobby left alone for the restart must not close meanwhile
            PYTHONPATH=str(self.spec.root),
        )
        env.update(dict(self.spec.env))
        return env

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self, timeout: float = 60.0) -> None:
        """Start the bot and wait until it polls for updates."""
        self.emulator.hurry = False
        polls = self.emulator.polls
        self.started_at = self.emulator.world.clock()
        with self.log.open("a") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                self.spec.module,
                cwd=self.database.parent,
                env=self.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        give_up = time.monotonic() + timeout
        while self.emulator.polls <= polls:
            if self.process.returncode is not None or time.monotonic() > give_up:
                raise RuntimeError(f"the bot did not start: {self.log.read_text()[-2000:]}")
            await asyncio.sleep(0.02)

    def note_rss(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.rss_mb = max(self.rss_mb, peak_rss_mb(self.pid))

    async def stop(self, grace: float = 30.0) -> int:
        """SIGTERM (the bot finishes what it holds back), then SIGKILL if it takes longer than ``grace``."""
        assert self.process is not None
        self.note_rss()
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            await self.emulator.release_polls()
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        return self.process.returncode or 0

    async def kill(self) -> None:
        assert self.process is not None
        self.note_rss()
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()


def head_copy(commit: str, into: Path) -> Path:
    """A copy of the tree at ``commit`` (``git archive``: the repository is left as it is)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True, timeout=60
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True, timeout=60)
    return into
