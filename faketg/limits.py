"""Telegram's rate limits, as the emulator enforces them when asked to (``World(limits=FloodLimits())``).

What Telegram documents or its maintainers have stated, and how it is modelled here:

- A group (or supergroup, or channel): at most 20 requests in any 60 s, sends, edits and deletes
  alike (``group_requests`` in a sliding ``group_window``).
- A private chat: "avoid sending more than one message per second; short bursts over this limit
  are allowed, but eventually you'll begin receiving 429 errors" (the Bot FAQ). Modelled as a
  token bucket: ``private_burst`` requests at once (3), then one a second (``private_rate``).
- Only requests that change what a chat shows count against these budgets: the methods whose
  names begin with ``send``, ``edit``, ``delete``, ``forward``, ``copy``, ``pin`` or ``unpin``.
  Reading a chat (``getChatMember``...) is not limited here.
- ``answerCallbackQuery`` is never limited; but a query can only be answered for a short time
  after the press (10 to 15 s as observed): later, Telegram answers 400 "query is too old".
- A refused request answers 429 "Too Many Requests: retry after N" with ``parameters.retry_after``
  the whole seconds until the budget lets one through (rounded up). Refused requests do not count
  against any budget (Telegram does not deliver them).
- ``pessimistic``: on top of the per-chat budgets, a global 30 requests in any 1 s over every
  request that names a chat (what PTB's AIORateLimiter assumes; Telegram states that its 30 a
  second is about bulk notifications, not a cap on a bot). Refused with retry_after 1.
- ``force(chat, seconds)``: every counted request to one chat answers 429 for a while (a group that
  got a long retry_after, as Telegram gives for repeated edits), with the time left as retry_after.

Time is the world's clock, passed in as ``now``: tests drive it by hand.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from faketg.world import Chat, Request

JSON = dict[str, object]
COUNTED_PREFIXES = ("send", "edit", "delete", "forward", "copy", "pin", "unpin")
TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"


def counted(method: str) -> bool:
    """Does this method spend the chat's budget (it changes what the chat shows)?"""
    return method.startswith(COUNTED_PREFIXES)


class TelegramRefusal(Exception):
    """A request the limits turn down: the HTTP status, Telegram's description, its parameters."""

    def __init__(self, code: int, description: str, parameters: JSON | None = None) -> None:
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


def too_many(retry_after: int) -> TelegramRefusal:
    return TelegramRefusal(429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after})


def _seconds(wait: float) -> int:
    """Telegram's retry_after: whole seconds, at least 1."""
    return max(1, math.ceil(wait - 1e-9))


@dataclass
class SlidingWindow:
    """At most ``count`` requests in any ``seconds``."""

    count: int
    seconds: float
    times: deque[float] = field(default_factory=deque)

    def wait(self, now: float) -> float:
        """Seconds until one more request fits (0: now)."""
        while self.times and self.times[0] <= now - self.seconds:
            self.times.popleft()
        if len(self.times) < self.count:
            return 0.0
        return self.times[0] + self.seconds - now

    def spend(self, now: float) -> None:
        self.times.append(now)


@dataclass
class FloodBucket:
    """``burst`` requests at once, then ``rate`` a second."""

    burst: float
    rate: float
    tokens: float = -1.0
    at: float = 0.0

    def _refill(self, now: float) -> None:
        if self.tokens < 0:
            self.tokens, self.at = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def wait(self, now: float) -> float:
        self._refill(now)
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def spend(self, now: float) -> None:
        self._refill(now)
        self.tokens -= 1


@dataclass
class FloodLimits:
    """The policy ``World.call`` consults before answering (see the module's description)."""

    group_requests: int = 20
    group_window: float = 60.0
    private_burst: int = 3
    private_rate: float = 1.0
    answer_within: float = 15.0  # seconds after the press a callback query can still be answered
    pessimistic: bool = False
    global_requests: int = 30
    global_window: float = 1.0
    refused: dict[str, int] = field(default_factory=dict)  # why requests were refused: counts

    def __post_init__(self) -> None:
        self._groups: dict[int, SlidingWindow] = {}
        self._private: dict[int, FloodBucket] = {}
        self._global = SlidingWindow(self.global_requests, self.global_window)
        self._forced: dict[int, tuple[float, int | None]] = {}  # chat -> (until, fixed retry_after)

    def force(self, chat_id: int, seconds: float, retry_after: int | None = None, *, now: float) -> None:
        """Refuse every counted request to ``chat_id`` for ``seconds`` from ``now``, answering 429
        with ``retry_after`` (default: the seconds left, rounded up)."""
        self._forced[chat_id] = (now + seconds, retry_after)

    def check(self, method: str, chat_id: int | None, private: bool, now: float) -> None:
        """Raise ``TelegramRefusal`` if this request may not go through now; else count it."""
        if chat_id is None:
            return
        windows: list[SlidingWindow | FloodBucket] = []
        if counted(method):
            forced = self._forced.get(chat_id)
            if forced is not None:
                until, retry_after = forced
                if now < until:
                    self._refuse("forced")
                    raise too_many(retry_after if retry_after is not None else _seconds(until - now))
                del self._forced[chat_id]
            windows.append(self._budget(chat_id, private))
        if self.pessimistic:
            windows.append(self._global)
        waits = [(window.wait(now), window) for window in windows]
        for wait, window in waits:
            if wait > 0:
                self._refuse("global" if window is self._global else "private" if private else "group")
                raise too_many(1 if window is self._global else _seconds(wait))
        for _, window in waits:
            window.spend(now)

    def check_answer(self, pressed_at: float | None, now: float) -> None:
        """A callback query answered more than ``answer_within`` s after its press is too old."""
        if pressed_at is not None and now - pressed_at > self.answer_within:
            self._refuse("too old")
            raise TelegramRefusal(400, TOO_OLD)

    def _budget(self, chat_id: int, private: bool) -> SlidingWindow | FloodBucket:
        if private:
            bucket = self._private.get(chat_id)
            if bucket is None:
                bucket = self._private[chat_id] = FloodBucket(self.private_burst, self.private_rate)
            return bucket
        window = self._groups.get(chat_id)
        if window is None:
            window = self._groups[chat_id] = SlidingWindow(self.group_requests, self.group_window)
        return window

    def _refuse(self, why: str) -> None:
        self.refused[why] = self.refused.get(why, 0) + 1


def group_peaks(
    requests: Iterable[Request],
    chats: Mapping[int, Chat],
    window: float = 60.0,
    *,
    accepted_only: bool = True,
) -> dict[int, int]:
    """For each group, the most requests it got in any ``window`` seconds that spent its budget:
    counted methods, and (``accepted_only``) not refused with 429 — Telegram never delivered those."""
    peaks: dict[int, int] = {}
    times: dict[int, deque[float]] = {}
    for request in requests:
        if request.chat_id is None or not counted(request.method):
            continue
        if accepted_only and request.error == 429:
            continue
        chat = chats.get(request.chat_id)
        if chat is None or chat.type == "private":
            continue
        seen = times.setdefault(chat.id, deque())
        seen.append(request.at)
        while seen[0] <= request.at - window:
            seen.popleft()
        peaks[chat.id] = max(peaks.get(chat.id, 0), len(seen))
    return peaks
