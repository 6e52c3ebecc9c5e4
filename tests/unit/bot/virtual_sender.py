"""The sender on a virtual clock, for tests of its pacing: an event loop whose time jumps to the
next timer whenever every task waits (``simulate``, ``now``, ``at``), and a fake Telegram on the
sender's deliver side that notes when each request goes out and refuses the ones a test chooses
(``Telegram``; ``kept`` builds a kept message's parcel).
"""

from __future__ import annotations

import asyncio
import selectors
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from bot.send.rate_policy import Limits, Parcel, Priority, Share
from bot.send.sender import Sender


class _Jumping(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    def __init__(self, loop: VirtualClock) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        ready = super().select(0)
        if ready or (timeout is not None and timeout <= 0):
            return ready
        if timeout is None:
            raise RuntimeError("deadlock: every task waits and no timer is set")
        self._loop.now += timeout
        return []


class VirtualClock(asyncio.SelectorEventLoop):
    """An event loop whose clock only moves when every task waits for a timer: to that timer. Its
    time starts at 0 and never moves by itself (no real sleep, no thread here)."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(selector=_Jumping(self))

    def time(self) -> float:
        return self.now


def simulate(scenario: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``scenario`` on a fresh virtual clock (time 0); what it returns."""
    with asyncio.Runner(loop_factory=VirtualClock) as runner:
        return runner.run(scenario())


def now() -> float:
    """The running loop's time (virtual under ``simulate``)."""
    return asyncio.get_running_loop().time()


async def at(moment: float) -> None:
    """Wait until the clock reads ``moment``."""
    await asyncio.sleep(moment - now())


class Telegram:
    """A fake ``deliver``: notes when each request goes out; refuses some with a 429 (and tells
    the sender, as the presenter does); each request takes ``latency``."""

    def __init__(self, limits: Limits, latency: float = 0.0) -> None:
        self.latency = latency
        self.sent: list[tuple[float, Parcel]] = []
        self.refused: list[tuple[float, Parcel]] = []
        self.sender = Sender(self.deliver, limits, clock=now)
        self.refusals: dict[tuple[int, int], float] = {}  # (chat, its nth request) -> retry_after
        self.calls: Counter[int] = Counter()

    async def deliver(self, job: Parcel) -> float | None:
        moment, nth = now(), self.calls[job.chat_id]
        self.calls[job.chat_id] += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        retry_after = self.refusals.get((job.chat_id, nth))
        if retry_after is not None:
            self.refused.append((moment, job))
            self.sender.rate_limited(job.chat_id)
            return retry_after
        self.sent.append((moment, job))
        return None

    def times(self, chat_id: int) -> list[float]:
        return [moment for moment, job in self.sent if job.chat_id == chat_id]

    def keys(self, chat_id: int) -> list[object]:
        return [job.key for _, job in self.sent if job.chat_id == chat_id]

    def want(self, chat_id: int, count: int, **job: Any) -> None:
        """``count`` jobs (keys 0, 1...), wanted in that order (a microsecond apart, as they are)."""
        for n in range(count):
            self.sender.want(kept(chat_id, n, since=now() + n * 1e-6, **job))


def kept(
    chat_id: int,
    key: object,
    priority: Priority = Priority.PHASE,
    *,
    new: bool = False,
    since: float | None = None,
) -> Parcel:
    """A kept message's parcel (the latest wins for its key), wanted ``since`` (default: now)."""
    return Parcel(chat_id, key, priority, now() if since is None else since, Share.KEPT, new_message=new)
