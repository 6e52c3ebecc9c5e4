"""Who is watching a table in the Mini App now: the heartbeats of visible pages (pure: no I/O; every
answer reads the clock it was given).

A page that is open and visible posts a heartbeat every ``HEARTBEAT`` seconds (``POST api/watch``,
``bot/web/miniapp/routes.py``), one at once when it becomes visible, and says when it is hidden.
Someone is watching a table while their last heartbeat for it is at most ``FRESH`` seconds old and
a page of theirs has its event stream open (the hub knows the streams): their turn is told there,
and its DM prompt waits (``bot/send/watched.py``). What one person may post is capped: ``BURST`` at
once, then ``PER_SECOND`` (a heartbeat every ``HEARTBEAT`` s uses a third; an acknowledgement of a
turn, a page shown or hidden fit in the burst); past that they are refused (429).
"""

from __future__ import annotations

from collections.abc import Callable

HEARTBEAT = 3.0  # seconds between a visible page's heartbeats (told to the page in each answer)
FRESH = 2 * HEARTBEAT  # a heartbeat older than this: the page is not watching any more
PER_SECOND = 1.0  # a person's posts to ``api/watch``, after a burst of
BURST = 3
KEPT_MAX = 20_000  # heartbeats and allowances kept at most (older ones are forgotten first)


class Heartbeats:
    """The last heartbeat of each (table, person), and what each person may still post."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.last: dict[tuple[int, int], float] = {}
        self.allowance: dict[int, tuple[float, float]] = {}  # person -> (posts left, when counted)

    def allowed(self, person: int) -> bool:
        """May ``person`` post once more now (counted if so)?"""
        now = self.clock()
        left, at = self.allowance.get(person, (float(BURST), now))
        left = min(float(BURST), left + max(0.0, now - at) * PER_SECOND)
        if left < 1:
            return False
        if person not in self.allowance and len(self.allowance) >= KEPT_MAX:
            full = BURST / PER_SECOND  # (an allowance this old is whole again: nothing to keep)
            self.allowance = {key: kept for key, kept in self.allowance.items() if now - kept[1] < full}
        self.allowance[person] = (left - 1, now)
        return True

    def beat(self, table_id: int, person: int) -> None:
        now = self.clock()
        if (table_id, person) not in self.last and len(self.last) >= KEPT_MAX:
            self.last = {key: at for key, at in self.last.items() if now - at <= FRESH}
        self.last[(table_id, person)] = now

    def hidden(self, table_id: int, person: int) -> None:
        self.last.pop((table_id, person), None)

    def fresh(self, table_id: int, person: int) -> bool:
        at = self.last.get((table_id, person))
        return at is not None and self.clock() - at <= FRESH
