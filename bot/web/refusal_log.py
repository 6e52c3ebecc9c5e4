"""Refused requests, logged at a bounded rate: one line per cause per minute, with a count.

A flood of bad requests (forged initData, posts without the webhook's secret, bytes that are not
text) must not become a flood of log lines: the first refusal of a cause is logged at once, those
that follow within ``EVERY`` seconds are only counted, and the count is logged when the minute is
over (by a timer on the running loop, so the last burst of a flood is told too).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

EVERY = 60.0  # seconds: at most one line per cause in this time


class RefusalLog:
    def __init__(
        self, log: logging.Logger, every: float = EVERY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.log, self.every, self.clock = log, every, clock
        self._since: dict[str, float] = {}  # cause -> when its last line was written
        self._counted: dict[str, int] = {}  # cause -> refusals not yet told

    def refused(self, cause: str) -> None:
        """One more refusal for ``cause`` (a short constant text: what was refused and why)."""
        now = self.clock()
        since = self._since.get(cause)
        if since is None or now - since >= self.every:
            self._tell(cause)  # what the last minute counted, if its timer has not told it yet
            self._since[cause] = now
            self.log.warning("refused: %s", cause)
            return
        self._counted[cause] = self._counted.get(cause, 0) + 1
        if self._counted[cause] == 1:
            self._tell_later(cause, since + self.every - now)

    def _tell_later(self, cause: str, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a plain call): told with the next refusal of its cause
            return
        loop.call_later(max(delay, 0.0), self._tell, cause)

    def _tell(self, cause: str) -> None:
        counted = self._counted.pop(cause, 0)
        if counted:
            self._since[cause] = self.clock()
            self.log.warning("refused %d more in the last %g s: %s", counted, self.every, cause)
