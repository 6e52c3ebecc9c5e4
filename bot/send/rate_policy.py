"""When the bot may send what to Telegram: the one place that knows Telegram's limits.

Pure: no I/O, no asyncio; every method takes the time. ``bot.send.sender`` drives it.

Telegram's limits (its FAQ and its maintainers): about one message a second in one chat, with short
bursts; at most 20 a minute in one group, sends, edits and deletes alike; "30 a second" for bulk
messages to many users, not a cap on a bot; ``answerCallbackQuery`` is not limited (so answers never
come here); a 429's ``retry_after`` is for the chat that got it.

So each chat has its own budget and its own queue (a lane). A group's budget is its real one: the
requests it got in the last 60 s (never more than 20) and about one a second after a burst of 3.
What the bot keeps up there (the table message) is smoothed to at most 15 a minute (a burst of 3,
then one every 5 s) and never takes the last 5 of any minute: replies to commands (and other
messages sent once) go at once while the group has room, and always find those 5; under load the
table is edited less often, not the replies held back, though a flood of replies leaves the table
at least ``table_floor`` a minute. No reply is ever dropped: a reply that has
waited ``REPLY_PATIENCE`` goes ahead of the table's changes (the presenter sends every reply of a
chat waiting then as one message). A private chat gets one a second after a burst of 3. New
messages (not edits) are not capped across chats by default: a 429 that is clearly not about one
chat caps them at half the rate the bot was sending at, and a calm spell lifts that cap gradually
(``NewMessages``); while there is a cap, a new prompt (or a new round's table message) that would
wait longer than ``PROMPT_WAIT`` for it goes as an edit of the message before it instead (seen,
though not notified). An operator may cap every request across
chats (``requests_per_second``, where Telegram holds a bot to 30 a second of everything): then every
request takes a place in that window too (``EveryRequest``). A 429 blocks only its own chat, for its
``retry_after``. Within a lane the most urgent parcel goes first (``Priority``), then the longest
waiting; a parcel for something kept up is coalesced: one parcel per message, whatever changed
meanwhile, and it sends the latest state when its turn comes.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

SENDS_AT_ONCE = 48  # sends in flight at once (of the request pool's connections)
ANSWER_CONNECTIONS = 16  # kept for answers to presses and the handlers' own calls
REPLY_PATIENCE = 3.0  # a reply waiting this long goes ahead of the table's changes (they are coalesced)
WINDOW = 60.0  # a group's limit is per minute, in any 60 s
# A request leaves a group's window this much later than 60 s after it was sent: Telegram counts it
# from when it arrived, a little later (and a window closed at both ends still holds it at 60 s).
WINDOW_MARGIN = 0.5
NEW_FLOOR = 3.0  # the least a 429 about the bot caps its new messages at, a second
NEW_RECOVERY = 1.0  # the least a calm spell gives back of that cap, a second
CALM = 10.0  # seconds without a 429 about the bot that raise its cap
# A new message that may be an edit instead (a prompt, a new round's table message) goes as one when
# its new-message token would wait longer than this: seen at once, though an edit notifies nobody.
PROMPT_WAIT = 1.0
# A request leaves the bot's own one-second window this much later than a second after it left:
# Telegram counts it from when it arrived, which a busy process and the network delay (at 0.05 s,
# benchmark 5 (b) still drew a 429 about every 5 s from requests that arrived bunched).
BOT_WINDOW_MARGIN = 0.15
OPEN_POLL = 0.05  # how soon the bot's window is asked again when its room waits on a request in flight


@dataclass(frozen=True)
class Limits:
    """Telegram's limits as the bot keeps them (``unlimited()``: tests that read every change)."""

    group_per_minute: int = 20  # every request of the bot in one group, in any 60 s
    reply_share: int = 5  # of those, the last of any minute, which the table never takes
    table_per_minute: int = 15  # the table's most (at most group_per_minute - reply_share)
    group_burst: int = 3  # table edits a quiet group may get at once
    table_floor: int = 6  # a minute's requests a flood of replies leaves the table
    private_per_second: float = 1.0  # about one message a second in one chat (a group's too)
    private_burst: int = 3
    # New messages across all chats: none by default (Telegram sets none; a 429 about the bot sets
    # one, ``NewMessages``); a number caps them for good (tests; a bot Telegram holds to one).
    new_per_second: float | None = None
    # Every request across all chats in any second (0: no such cap, new messages only): an operator's
    # choice (PAIJU_BOT_REQUESTS_PER_SECOND) where Telegram holds a bot to 30 a second of everything.
    requests_per_second: int = 0

    @classmethod
    def of_settings(cls, table_per_minute: int, requests_per_second: int = 0) -> Limits:
        """Telegram's limits with the table's share an operator chose (above 15 a minute, a group
        may see more than Telegram's 20: the operator's call), and the bot's cap on every request."""
        defaults = cls()
        group = max(defaults.group_per_minute, table_per_minute + defaults.reply_share)
        return cls(
            group_per_minute=group, table_per_minute=table_per_minute, requests_per_second=requests_per_second
        )

    @classmethod
    def unlimited(cls) -> Limits:
        huge = 10**9
        return cls(
            group_per_minute=2 * huge,
            reply_share=huge,
            table_per_minute=huge,
            group_burst=huge // 2,
            table_floor=0,
            private_per_second=float(huge),
            private_burst=huge,
            new_per_second=float(huge),
        )

    def budget(self, chat_id: int, now: float) -> Budget:
        if chat_id >= 0:  # a private chat: one budget
            return PrivateBudget(Bucket(self.private_per_second, self.private_burst, now))
        return GroupBudget(self, now)


class Priority(IntEnum):
    """What goes first in a chat (and for the new-messages budget across chats)."""

    ACT = 0  # someone must act on it now: their prompt, a new round's cards
    PHASE = 1  # the table's change of phase or turn (its buttons changed)
    REPLY = 2  # an answer to a command
    INFO = 3  # a DM that only informs
    COSMETIC = 4  # a table edit that changes no button


class Share(IntEnum):
    """The part of a chat's budget a parcel spends (a private chat has one)."""

    KEPT = 0  # what the bot keeps up: the table message, a DM
    REPLY = 1  # what is sent once: replies to commands, notices, an old round's buttons taken away


class Bucket:
    """A token bucket: ``burst`` at once, then ``per_second``; at most burst + rate × t in any t."""

    __slots__ = ("at", "burst", "per_second", "tokens")

    def __init__(self, per_second: float, burst: float, now: float) -> None:
        self.per_second, self.burst = per_second, burst
        self.tokens, self.at = burst, now

    def _refill(self, now: float) -> None:
        if now > self.at:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.per_second)
            self.at = now

    def wait(self, now: float, ahead: int = 0) -> float:
        """Seconds until a token is there for the one after ``ahead`` others (0: now)."""
        self._refill(now)
        missing = ahead + 1 - self.tokens
        # a token short by a rounding error is there: such a wait would not move the clock on
        return 0.0 if missing <= 1e-9 else missing / self.per_second

    def take(self, now: float) -> None:
        self._refill(now)
        self.tokens -= 1

    def taken_late(self, now: float) -> None:
        """The token taken last is spent only ``now``: as if taken now (nothing taken since)."""
        if now > self.at:
            self.tokens = min(self.burst - 1, self.tokens + (now - self.at) * self.per_second)
            self.at = now


class Budget(Protocol):
    """A chat's budget: when a parcel of a share may go, and what it spent."""

    def wait(self, share: Share, now: float, kept_waiting: bool) -> float:
        """Seconds until a parcel of ``share`` may go (0: now); ``kept_waiting``: a kept parcel is queued."""
        ...

    def take(self, share: Share, now: float) -> None: ...

    def taken_late(self, share: Share, now: float) -> None:
        """The request taken last goes out only ``now`` (it waited for the bot's budget)."""
        ...


class PrivateBudget:
    """A private chat: one a second after a burst, whatever it is."""

    def __init__(self, bucket: Bucket) -> None:
        self.bucket = bucket

    def wait(self, share: Share, now: float, kept_waiting: bool) -> float:
        return self.bucket.wait(now)

    def take(self, share: Share, now: float) -> None:
        self.bucket.take(now)

    def taken_late(self, share: Share, now: float) -> None:
        self.bucket.taken_late(now)


class GroupBudget:
    """A group: the requests it got in the last 60 s (``sent``, with their share), at most
    ``group_per_minute``; about one a second (``pace``); the table smoothed (``table``) and only
    while the last 60 s leave ``reply_share`` free (so replies always find those, and under load
    the table is edited less often); replies anywhere, though while the table has something to
    send they leave it ``table_floor`` of a minute."""

    def __init__(self, limits: Limits, now: float) -> None:
        kept = min(limits.table_per_minute, limits.group_per_minute - limits.reply_share)
        burst = max(1, min(limits.group_burst, kept - 1))  # below 4 a minute, a smaller burst
        self.table = Bucket(max(1, kept - burst) / WINDOW, burst, now)  # at most kept in any 60 s
        # about one a second (faster only when an operator allows a group more than 60 a minute)
        pace = max(limits.private_per_second, limits.group_per_minute / WINDOW)
        self.pace = Bucket(pace, limits.private_burst, now)
        self.limit = limits.group_per_minute
        self.reserve = limits.reply_share
        self.reply_ceiling = max(1, limits.group_per_minute - limits.reply_share - limits.table_floor)
        self.sent: deque[tuple[float, Share]] = deque()
        self.replies = 0  # of ``sent``, the replies'

    def _forget_before(self, now: float) -> None:
        while self.sent and self.sent[0][0] + WINDOW + WINDOW_MARGIN <= now:
            _, share = self.sent.popleft()
            self.replies -= share is Share.REPLY

    def _fits(self, share: Share, total: int, replies: int, kept_waiting: bool) -> bool:
        if share is Share.KEPT:  # the last ``reserve`` of any minute are the replies'
            return total < self.limit - self.reserve
        return total < self.limit and (replies < self.reply_ceiling or not kept_waiting)

    def _window_wait(self, share: Share, now: float, kept_waiting: bool) -> float:
        """Seconds until the last 60 s have room for a parcel of ``share``."""
        self._forget_before(now)
        total, replies = len(self.sent), self.replies
        if self._fits(share, total, replies, kept_waiting):
            return 0.0
        for at, spent in self.sent:  # as the oldest requests leave the window, one by one
            total, replies = total - 1, replies - (spent is Share.REPLY)
            if self._fits(share, total, replies, kept_waiting):
                return at + WINDOW + WINDOW_MARGIN - now
        return WINDOW  # (not reached: an empty window has room)

    def wait(self, share: Share, now: float, kept_waiting: bool) -> float:
        waits = [self.pace.wait(now), self._window_wait(share, now, kept_waiting)]
        if share is Share.KEPT:
            waits.append(self.table.wait(now))
        return max(waits)

    def take(self, share: Share, now: float) -> None:
        self._forget_before(now)
        self.pace.take(now)
        if share is Share.KEPT:
            self.table.take(now)
        self.sent.append((now, share))
        self.replies += share is Share.REPLY

    def history(self, now: float) -> list[tuple[float, int]]:
        """The requests of the last minute, each as (when, share): what the next owner of the
        group's table must count (``carry``)."""
        self._forget_before(now)
        return [(at, int(share)) for at, share in self.sent]

    def carry(self, history: list[tuple[float, int]], now: float) -> None:
        """Count requests another worker made to this group (``history``, by this budget's clock)
        as made here."""
        for at, share in history:
            if now - WINDOW - WINDOW_MARGIN < at <= now:
                self.sent.append((at, Share(share)))
                self.replies += share == Share.REPLY
        self.sent = deque(sorted(self.sent, key=lambda sent: sent[0]))

    def taken_late(self, share: Share, now: float) -> None:
        self.pace.taken_late(now)
        if share is Share.KEPT:
            self.table.taken_late(now)
        if self.sent:  # (one request of a chat in flight at a time: the last one is this one's)
            at, spent = self.sent[-1]
            self.sent[-1] = (max(at, now), spent)


@dataclass(slots=True)
class Parcel:
    """Something to send to one chat, waiting in its lane (not a job: PTB's ``Job`` is a timer's).
    ``key`` names it: a kept message is one parcel
    however often it changes (coalesced: the latest payload wins); a reply has a key of its own (or
    one that repeats it drops)."""

    chat_id: int
    key: Hashable
    priority: Priority
    since: float  # when it was first wanted (its place among equals)
    share: Share = Share.KEPT
    new_message: bool = False  # a sendMessage: takes a token of the new-messages budget too
    may_edit: bool = False  # a new message that may go as an edit instead, when the budget is busy
    payload: object = None  # what is to be sent (the latest one wanted: the lane is the one place it waits)
    # Not sent before this time (0: no such wait): a turn's prompt to someone watching the table in
    # the Mini App waits its grace there (``bot.display.presenter.GRACE``), withdrawn if they answer.
    not_before: float = 0.0

    def waits(self, now: float) -> bool:
        """Is it held back until ``not_before``?"""
        return self.not_before > now

    def order(self, now: float) -> tuple[float, float]:
        """Its place in its lane: the most urgent first, then the longest waiting; a reply that
        has waited ``REPLY_PATIENCE`` goes ahead of the table's changes (never of a prompt)."""
        if self.priority > Priority.ACT and self.share is Share.REPLY and now - self.since >= REPLY_PATIENCE:
            return Priority.ACT + 0.5, self.since
        return self.priority, self.since


@dataclass
class ChatLane:
    """One chat's queue and budget. At most one request of a chat is in flight at a time."""

    chat_id: int
    budget: Budget
    parcels: dict[Hashable, Parcel] = field(default_factory=dict)
    blocked_until: float = 0.0  # a 429's retry_after
    in_flight: Parcel | None = None  # the parcel taken off the queue to be sent (one at a time)
    started: bool = False  # its request has started (until then it may still change, or be taken)
    called_off: bool = False  # taken before its request started: it is not sent
    taken_back: bool = False  # taken while its request was under way: a 429 does not queue it again

    @property
    def busy(self) -> bool:
        return self.in_flight is not None

    def put(self, parcel: Parcel, *, newer: bool = True) -> bool:
        """Queue ``parcel``, or merge it into the queued one with its key (the more urgent priority
        and the earlier place; its payload if ``newer``, else the queued one's stays: a parcel put back
        after a failure never replaces what was wanted since); False when it merged."""
        known = self.parcels.get(parcel.key)
        if known is None:
            self.parcels[parcel.key] = parcel
            return True
        if newer:
            known.payload = parcel.payload
            known.not_before = _grace(known.not_before, parcel.not_before)
        known.priority = min(known.priority, parcel.priority)
        known.since = min(known.since, parcel.since)
        known.new_message = known.new_message or parcel.new_message  # (a 429's parcel is older)
        known.may_edit = known.may_edit or parcel.may_edit
        return False

    def hasten(self, key: Hashable) -> bool:
        """The parcel queued for ``key`` waits no longer for its ``not_before`` (the person stopped
        watching the table); whether one did."""
        parcel = self.parcels.get(key)
        if parcel is None or parcel.not_before <= 0:
            return False
        parcel.not_before = 0.0
        return True

    def next(self, now: float) -> tuple[Parcel | None, float]:
        """The parcel to send now, taken off the queue with its budget spent; else (None, seconds to
        wait before asking again: 0 when there is nothing to wait for, or a request is in flight)."""
        if self.busy or not self.parcels:
            return None, 0.0
        if now < self.blocked_until:
            return None, self.blocked_until - now
        kept_waiting = any(parcel.share is Share.KEPT for parcel in self.parcels.values())
        ready_in = {share: self.budget.wait(share, now, kept_waiting) for share in Share}
        best: Parcel | None = None
        wait = float("inf")
        for parcel in self.parcels.values():
            if parcel.waits(now):  # (its grace: asked again when it is over, or when woken)
                wait = min(wait, parcel.not_before - now)
            elif ready_in[parcel.share] > 0:
                wait = min(wait, ready_in[parcel.share])
            elif best is None or parcel.order(now) < best.order(now):
                best = parcel
        if best is None:
            return None, wait
        del self.parcels[best.key]
        self.budget.take(best.share, now)
        self.in_flight, self.started, self.called_off, self.taken_back = best, False, False, False
        return best, 0.0

    def more_urgent(self, parcel: Parcel, now: float, *, new_message: bool) -> Parcel | None:
        """Another parcel queued while ``parcel`` (picked, its budget spent) waited for the bot's token, more
        urgent than it and spending the same part of the chat's budget (a new message only if the
        token was one): it takes ``parcel``'s place, which goes back to the queue."""
        best: Parcel | None = None
        for other in self.parcels.values():
            if (
                other.key != parcel.key  # (a newer state of the same message replaces its payload)
                and not other.waits(now)
                and other.order(now) < parcel.order(now)
                and (other.share is parcel.share or isinstance(self.budget, PrivateBudget))
                and (new_message or not other.new_message)
                and (best is None or other.order(now) < best.order(now))
            ):
                best = other
        if best is None:
            return None
        del self.parcels[best.key]
        self.put(parcel, newer=False)
        self.in_flight = best
        return best

    def late(self, parcel: Parcel, now: float) -> None:
        """``parcel``'s request goes out only now (it waited for the bot's budget): the chat's budget
        counts it from now, or a burst after the wait could pass the chat's limit."""
        self.budget.taken_late(parcel.share, now)

    def done(self, parcel: Parcel, now: float, retry_after: float | None = None) -> None:
        """The request of ``parcel`` is over; a 429 blocks this chat and queues the parcel again,
        unless it was taken back meanwhile (nothing is to be sent for it any more)."""
        again = retry_after is not None and not self.taken_back
        self.in_flight, self.started, self.called_off, self.taken_back = None, False, False, False
        if retry_after is not None:
            self.blocked_until = max(self.blocked_until, now + retry_after)
        if again:
            self.put(parcel, newer=False)


def _grace(queued: float, wanted: float) -> float:
    """The ``not_before`` of a queued parcel a newer payload replaces: the newer one's say (none:
    at once, as when they have answered or stopped watching), but a grace running is never made
    longer by a newer state of the same message."""
    if wanted <= 0 or queued <= 0:
        return wanted
    return min(queued, wanted)


class EveryRequest:
    """The bot's own cap on every request across chats, when an operator sets one: at most
    ``per_second`` in any second (counted as Telegram would, a little longer), so that a bot held
    to a global 30 a second sends at most that and is never refused for it.

    Telegram counts a request from when it arrived, which the bot knows only to lie between the
    moment it took its place and its answer: a request holds its place until its answer came
    (``open``), then counts from then. Counted from when it started, requests held up on their way
    (connections opening under a burst) arrived bunched and drew 429s."""

    def __init__(self, per_second: int) -> None:
        self.whole = per_second  # the operator's cap for the bot
        self.count = per_second  # this process's part of it: ``count`` requests in a window of
        self.seconds = 1.0  # ``seconds`` (longer than one when there are more workers than requests)
        self.times: deque[float] = deque()  # when the answers of the last second's requests came
        self.open = 0  # requests that have their place and no answer yet

    def wait(self, now: float, ahead: int = 0) -> float:
        """Seconds until there is room for the one after ``ahead`` others (0: now; while the room
        waits on a request still open, ``OPEN_POLL``: ask again then)."""
        span = self.seconds + BOT_WINDOW_MARGIN
        while self.times and self.times[0] + span <= now:
            self.times.popleft()
        later = 0.0  # each ``count`` of those ahead not yet in the window push it a window on
        while ahead >= self.count:
            ahead, later = ahead - self.count, later + span
        index = len(self.times) + self.open + ahead - self.count  # the one that must leave first
        if index < 0:
            return later
        if index >= len(self.times):  # (an open one: it leaves a window after its answer)
            return later + OPEN_POLL
        return later + max(0.0, self.times[index] + span - now)

    def share(self, workers: int) -> None:
        """One of ``workers`` processes sending for the bot: its part is a ``workers``-th (with more
        workers than requests a second, one request in a window of ``workers / whole`` seconds)."""
        workers = max(1, workers)
        self.count = max(1, self.whole // workers)
        self.seconds = max(1.0, workers / self.whole)

    def take(self, now: float) -> None:
        """A request takes its place (``done`` when its answer came)."""
        self.open += 1

    def done(self, now: float) -> None:
        """The answer of a request that took its place came ``now`` (or it was not sent after all):
        it counts from now."""
        self.open -= 1
        self.times.append(now)


class NewMessages:
    """The bot's budget for new messages across all chats. Telegram sets none (its "30 a second" is
    for bulk notifications to many users; what it enforces is per chat, which the lanes keep), so
    by default there is no cap, until Telegram says otherwise: a 429 that is not about one chat
    (``throttled``) caps the bot at half the rate it was sending at (``NEW_FLOOR`` at least); each
    ``CALM`` seconds without another raise the cap by a quarter (``NEW_RECOVERY`` at least), and once
    it is twice what drew the 429 the cap is off again. Workers share what one of them learnt
    (``learn``); each keeps to its part of the bot's cap (``share``). ``fixed``: a cap that stays (a
    test's, or a bot held to one); the learnt one is never above it."""

    def __init__(self, now: float, fixed: float | None = None) -> None:
        self.fixed = fixed  # the bot's own cap, if it has one
        self.learnt: float | None = None  # the bot's cap a 429 set (None: none now)
        self.drew_429 = 0.0  # the bot's rate when the 429 came
        self.workers = 1
        self.calm_since = now
        self.sent: deque[float] = deque()  # when this process's new messages of the last second went
        self.bucket: Bucket | None = None
        self._capped(now)

    @property
    def cap(self) -> float | None:
        """The bot's cap now (None: none)."""
        caps = [cap for cap in (self.fixed, self.learnt) if cap is not None]
        return min(caps) if caps else None

    @property
    def per_second(self) -> float | None:
        """This process's part of the cap (None: no cap)."""
        return None if self.bucket is None else self.bucket.per_second

    def share(self, workers: int) -> None:
        """One of ``workers`` processes sending for the bot: it keeps to a ``workers``-th of the cap."""
        self.workers = max(1, workers)
        self._capped(self.calm_since, keep_tokens=True)

    def rate(self, now: float) -> float:
        """Its cap now, what a calm spell gave back counted (the metrics': infinite when none)."""
        self._recover(now)
        return math.inf if self.per_second is None else self.per_second

    def wait(self, now: float, ahead: int = 0) -> float:
        """Seconds until a token is there for the one after ``ahead`` waiting before it."""
        self._recover(now)
        return 0.0 if self.bucket is None else self.bucket.wait(now, ahead)

    def take(self, now: float) -> None:
        self.sent.append(now)
        while self.sent and self.sent[0] <= now - 1.0:
            self.sent.popleft()
        if self.bucket is not None:
            self.bucket.take(now)

    def throttled(self, now: float) -> float:
        """A 429 about the bot: the cap becomes half the rate it was sending at (the bot's, as this
        process's times the workers), or half the cap it had; the bot's new cap."""
        while self.sent and self.sent[0] <= now - 1.0:
            self.sent.popleft()
        sending = max(len(self.sent), 1) * self.workers
        before = min(sending, self.cap) if self.cap is not None else sending
        self.drew_429 = max(before, NEW_FLOOR)
        return self.learn(max(NEW_FLOOR, before / 2), now)

    def learn(self, cap: float, now: float) -> float:
        """The bot is capped at ``cap`` new messages a second (learnt here, or by another worker):
        kept unless it had a lower one; the calm spell starts again. The bot's cap."""
        self.learnt = cap if self.learnt is None else min(self.learnt, cap)
        self.drew_429 = max(self.drew_429, self.learnt)
        self.calm_since = now
        self._capped(now)
        return self.learnt

    def _recover(self, now: float) -> None:
        if self.learnt is None:
            return
        steps = int((now - self.calm_since) / CALM)
        if steps <= 0:
            return
        for _ in range(steps):
            self.learnt += max(NEW_RECOVERY, self.learnt / 4)
        self.calm_since += steps * CALM
        if self.learnt >= 2 * self.drew_429:  # (well past what drew the 429: no cap now)
            self.learnt = None
        self._capped(now, keep_tokens=True)

    def _capped(self, now: float, *, keep_tokens: bool = False) -> None:
        """The bucket for this process's part of the cap (none without a cap)."""
        cap = self.cap
        if cap is None:
            self.bucket = None
            return
        part = cap / self.workers
        tokens = self.bucket.tokens if keep_tokens and self.bucket is not None else None
        self.bucket = Bucket(part, max(1.0, part), now)
        if tokens is not None:
            self.bucket.tokens = min(tokens, self.bucket.burst)
