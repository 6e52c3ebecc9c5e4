"""An asyncio event loop whose clock jumps ahead whenever it would only wait for a timer.

With it, the bot in process can be played at human speed (people thinking for seconds between
presses, the presenter spacing its edits by seconds) in a fraction of the real time, against the
real presenter: give the presenter and the fake Telegram ``loop.time`` as their clock.

The loop first waits ``grace`` real seconds for I/O and for threads (aiosqlite answers from its
own thread, which wakes the loop); only if nothing came does it move its clock to the next timer.
"""

from __future__ import annotations

import asyncio
import selectors
import time
from typing import Any

GRACE = 0.02  # real seconds to wait for a thread or a socket before time jumps


class _JumpingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        ready = super().select(0)
        if ready or (timeout is not None and timeout <= 0):
            return ready
        ready = super().select(GRACE if timeout is None else min(timeout, GRACE))
        if ready:
            return ready
        if timeout is None:
            return super().select(None)  # no timer at all: wait for real
        self._loop.jumped += max(0.0, timeout - GRACE)
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """``time()`` is the monotonic clock plus every jump made so far."""

    def __init__(self) -> None:
        self.jumped = 0.0
        super().__init__(selector=_JumpingSelector(self))

    def time(self) -> float:
        return time.monotonic() + self.jumped
