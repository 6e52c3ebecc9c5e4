"""Drives the outbox (``bot.send.rate_policy``): one task per chat with something to send, none for the
others.

``Sender.want(parcel)`` queues a parcel and returns at once; the chat's task sends it through ``deliver``
(the presenter: it renders nothing, it sends what it holds for that parcel's key) when the chat's
budget allows, the most urgent first. ``deliver`` returns a 429's ``retry_after`` (the parcel is queued
again and only this chat waits) or None. New messages also wait for a token of the bot's budget
across chats, and so does every request when the operator caps them all (``EveryRequest``); tokens
are granted in priority order. A new message that may go as an edit instead (a prompt to someone
who has a DM, a new round's table message) does so when, with the parcels already waiting ahead of
it, its token would be more than ``PROMPT_WAIT`` away and an edit's sooner: decided as it goes
out, whenever it was wanted. A 429 in two chats within a second is taken for one about the bot,
not a chat: the new-messages budget halves.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import functools
import itertools
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Hashable
from contextvars import ContextVar
from dataclasses import replace

from bot.send.rate_policy import (
    PROMPT_WAIT,
    SENDS_AT_ONCE,
    ChatLane,
    EveryRequest,
    GroupBudget,
    Limits,
    NewMessages,
    Parcel,
    Priority,
)
from bot.telegram_facts import is_private_id

log = logging.getLogger(__name__)
Deliver = Callable[[Parcel], Awaitable[float | None]]
# Across chats, how long a parcel of each priority waits behind newer more urgent ones at most (no
# chat's requests starve): a prompt and a table's change of phase are one step; a reply comes 10 s
# behind them; what only informs (a DM, a table's turn everyone acting on was told of by DM) a
# minute behind, cosmetic edits two: under a steady backlog their changes merge meanwhile.
BEHIND = {
    Priority.ACT: 0.0,
    Priority.PHASE: 0.0,
    Priority.REPLY: 10.0,
    Priority.INFO: 60.0,
    Priority.COSMETIC: 120.0,
}
GLOBAL_WINDOW = 1.0  # 429s in two chats this close together are about the bot, not a chat
# One waiting for a token of the bot's budget: its rank, its order among equals, the parcel, whether
# it goes as a new message, and the future its grant sets.
_Waiting = tuple[float, int, Parcel, bool, "asyncio.Future[None]"]
# The parcel whose request the current task is sending (the metrics count requests by its priority).
SENDING: ContextVar[Parcel | None] = ContextVar("sending", default=None)


class Sender:
    def __init__(
        self,
        deliver: Deliver,
        limits: Limits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.deliver = deliver
        self.limits = limits
        self.clock = clock
        self.lanes: dict[int, ChatLane] = {}
        self.groups_sent_to: set[int] = set()  # groups sent to since ``history`` last told of them
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self._wakes: dict[int, asyncio.Event] = {}
        self.new = NewMessages(clock(), limits.new_per_second)
        self.every = EveryRequest(limits.requests_per_second) if limits.requests_per_second else None
        # Those waiting for a token of the bot's budget, by rank (kept sorted: ``_edit_sooner`` counts
        # those ahead of a parcel by bisection, with thousands waiting under load).
        self._waiting: list[_Waiting] = []
        self._new_waiting: list[tuple[float, int]] = []  # of those, the new messages' (rank, order)
        self._waiting_of: dict[int, _Waiting] = {}  # each chat's (at most one: one request at a time)
        self._granter: asyncio.Task[None] | None = None
        self._order = itertools.count()
        self._last_429: tuple[float, int] = (float("-inf"), 0)
        self.received_429 = 0
        self.on_sent: Callable[[Parcel, float], None] | None = None  # a parcel as sent, seconds since wanted
        self.told_cap: Callable[[float], None] | None = None  # a cap learnt here, for the other workers
        # Waited for before each request (a worker's lease: nothing is sent while it is not sure; a
        # parcel called off meanwhile, its table let go, is not sent).
        self.gate: Callable[[], Awaitable[None]] | None = None
        # Requests in flight at once, all chats together: the connection pool keeps room for the
        # answers to presses, which never wait behind a send.
        self._in_flight = asyncio.Semaphore(SENDS_AT_ONCE)

    def _lane(self, chat_id: int) -> ChatLane:
        lane = self.lanes.get(chat_id)
        if lane is None:
            lane = self.lanes[chat_id] = ChatLane(chat_id, self.limits.budget(chat_id, self.clock()))
        return lane

    def history(self, chats: Collection[int] | None = None) -> dict[int, list[tuple[float, int]]]:
        """What these groups got in the last minute (``GroupBudget.history``; None: those sent to
        since the last time), each request as (wall-clock time, share), for the worker that takes
        their tables over, cleanly or after this one died: a group's 20 a minute holds across
        owners."""
        if chats is None:
            chats, self.groups_sent_to = self.groups_sent_to, set()
        now = self.clock()
        to_wall = time.time() - now
        found = {}
        for chat_id in chats:
            lane = self.lanes.get(chat_id)
            if lane is not None and isinstance(lane.budget, GroupBudget):
                found[chat_id] = [(at + to_wall, share) for at, share in lane.budget.history(now)]
        return found

    def carry(self, histories: dict[int, list[tuple[float, int]]]) -> None:
        """Count what other workers sent to these groups in the last minute (``history``'s form)
        as sent from here."""
        now = self.clock()
        to_wall = time.time() - now
        for chat_id, history in histories.items():
            budget = self._lane(chat_id).budget
            if isinstance(budget, GroupBudget):
                budget.carry([(at - to_wall, share) for at, share in history], now)

    def want(self, parcel: Parcel, *, newer: bool = True) -> None:
        """Queue ``parcel`` (merged with the queued one of its key: its payload replaces the queued one's
        unless not ``newer``); its chat's task sends it."""
        lane = self._lane(parcel.chat_id)
        lane.put(parcel, newer=newer)
        self._move_up(lane, parcel)
        task = self.tasks.get(parcel.chat_id)
        if task is None or task.done():  # (a task that has just ended is still listed until its callback)
            self._wakes[parcel.chat_id] = asyncio.Event()
            task = self.tasks[parcel.chat_id] = asyncio.create_task(self._run(lane))
            task.add_done_callback(functools.partial(self._ended, parcel.chat_id))
        else:
            self._wakes[parcel.chat_id].set()

    def withdraw(self, chat_id: int, key: Hashable) -> Parcel | None:
        """The parcel waiting for ``key`` (the latest one), taken back: nothing is to be sent for it any
        more (it shows what it should, or the caller sends it along with another). One already
        picked but whose request has not started (it waits for its token) is called off too; one
        whose request is under way is not tried again if Telegram answers 429."""
        lane = self.lanes.get(chat_id)
        if lane is None:
            return None
        parcel = lane.parcels.pop(key, None)
        picked = lane.in_flight
        if picked is not None and not lane.started and picked.key == key and not lane.called_off:
            parcel = parcel or picked
            lane.called_off = True  # (its token is spent on nothing: it is not sent)
        elif picked is not None and lane.started and picked.key == key:
            lane.taken_back = True  # (its request is under way: refused, it is not tried again)
        if parcel is not None and chat_id in self._wakes:
            self._wakes[chat_id].set()  # its task may have nothing left to wait for
        return parcel

    def hasten(self, chat_id: int, key: Hashable) -> None:
        """The parcel queued for ``key`` goes as soon as its chat's budget allows, whatever its
        ``not_before`` (its person stopped watching the table in the Mini App)."""
        lane = self.lanes.get(chat_id)
        if lane is not None and lane.hasten(key) and chat_id in self._wakes:
            self._wakes[chat_id].set()

    def withdraw_all(self, chats: Collection[int], which: Callable[[Parcel], bool]) -> None:
        """:meth:`withdraw` every parcel of these chats that ``which`` says (queued, or picked)."""
        for chat_id in chats:
            lane = self.lanes.get(chat_id)
            if lane is None:
                continue
            for parcel in [*lane.parcels.values(), *([lane.in_flight] if lane.in_flight else [])]:
                if which(parcel):
                    self.withdraw(chat_id, parcel.key)

    def waiting(self, chat_id: int, key: Hashable, *, in_flight: bool = False) -> Parcel | None:
        """The latest parcel for ``key`` whose request has not started (queued, or picked and
        waiting for its token); with ``in_flight``, also the one being sent."""
        lane = self.lanes.get(chat_id)
        if lane is None:
            return None
        parcel, picked = lane.parcels.get(key), lane.in_flight
        if parcel is None and picked is not None and picked.key == key and not lane.called_off:
            return picked if in_flight or not lane.started else None
        return parcel

    def waiting_in(self, chat_id: int) -> list[Parcel]:
        """The parcels waiting in a chat's queue."""
        lane = self.lanes.get(chat_id)
        return [] if lane is None else list(lane.parcels.values())

    def pending(self, chat_id: int) -> bool:
        return chat_id in self.tasks

    def share(self, workers: int) -> None:
        """The bot's budgets across chats (new messages; every request, if capped) are shared by
        ``workers`` processes: this one keeps to its part (``bot/cluster/workers.py``). A chat's budget
        stays whole: one worker at a time sends to a chat."""
        self.new.share(workers)
        if self.every is not None:
            self.every.share(workers)

    async def drain(self, chats: Collection[int] | None = None) -> None:
        """Until nothing is queued anywhere (tests, and the last sends before shutting down), or in
        these ``chats`` (their table goes to another worker) whatever the others do."""
        while running := [task for chat, task in self.tasks.items() if chats is None or chat in chats]:
            await asyncio.wait(running)  # (cancelled, as by a timeout, it leaves the chats' tasks be)

    async def stop(self) -> None:
        for task in [*self.tasks.values(), *([self._granter] if self._granter else [])]:
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    # -- one chat ---------------------------------------------------------------------------------
    async def _run(self, lane: ChatLane) -> None:
        wake = self._wakes[lane.chat_id]
        while lane.parcels:
            wake.clear()
            parcel, wait = lane.next(self.clock())
            if parcel is not None and isinstance(lane.budget, GroupBudget):
                self.groups_sent_to.add(lane.chat_id)
            if parcel is None:
                if lane.parcels:
                    await _sleep(wake, wait)
                continue
            retry_after: float | None = None
            placed: EveryRequest | None = None  # the bot's window it has a place in, until its answer
            try:
                # As a new message? (one that may be an edit goes as one when the budget is busy)
                as_new = parcel.new_message and not (parcel.may_edit and self._edit_sooner(parcel))
                if as_new or self.every is not None:
                    await self._token(parcel, as_new)
                    placed = self.every
                    lane.late(parcel, self.clock())
                async with self._in_flight:
                    if self.gate is not None:  # (checked last: from here to the request, no wait)
                        await self.gate()
                    urgent = lane.more_urgent(parcel, self.clock(), new_message=as_new)
                    if urgent is not None:  # wanted while this one waited: it goes in its place
                        parcel, as_new = urgent, urgent.new_message
                    # What is sent is what is wanted when the request starts: a newer payload
                    # wanted while this one waited for its token replaces it; one called off is not sent.
                    newer = lane.parcels.get(parcel.key)
                    if newer is not None and newer.waits(self.clock()):
                        newer = None  # (in its grace: it stays queued, this one goes as it was)
                    if newer is not None and newer.new_message and not as_new:
                        # A new prompt wanted while an edit of its DM waited: a new message now if
                        # the new-message budget has room, else an edit if it may be one.
                        if not self._new_waiting and self.new.wait(self.clock()) == 0:
                            self.new.take(self.clock())
                            as_new = True
                        elif not newer.may_edit:
                            continue
                    lane.started = True
                    newer = None if newer is None else lane.parcels.pop(parcel.key, None)
                    if newer is not None:
                        parcel.payload, parcel.priority = newer.payload, min(parcel.priority, newer.priority)
                    elif lane.called_off:
                        continue
                    sent = parcel if as_new == parcel.new_message else replace(parcel, new_message=as_new)
                    sending = SENDING.set(sent)
                    try:
                        retry_after = await self.deliver(sent)
                    finally:
                        SENDING.reset(sending)
                if retry_after is None and self.on_sent is not None:  # (its grace is no delay)
                    self.on_sent(sent, self.clock() - max(parcel.since, parcel.not_before))
            except Exception:
                log.exception("sending to chat %s failed", lane.chat_id)
            finally:
                if placed is not None:  # its answer came (or it was not sent after all)
                    placed.done(self.clock())
                lane.done(parcel, self.clock(), retry_after)

    def _ended(self, chat_id: int, task: asyncio.Task[None]) -> None:
        """A chat's task is over (nothing left, or cancelled even before it ran); its lane stays:
        its budget remembers what was spent."""
        if self.tasks.get(chat_id) is task:
            del self.tasks[chat_id], self._wakes[chat_id]

    def rate_limited(self, chat_id: int) -> None:
        """Telegram answered 429 in this chat (its wait is the parcel's ``retry_after``). Two private
        chats, each kept to its one a second, refused within a second: that is about the bot (a
        group's 429 may be about the group alone: its limit for edits is Telegram's to tighten)."""
        self.received_429 += 1
        if not is_private_id(chat_id):
            return
        now = self.clock()
        at, chat = self._last_429
        if chat != chat_id and now - at < GLOBAL_WINDOW:
            cap = self.new.throttled(now)
            log.warning("429s in two chats at once: the bot's new messages capped at %.0f a second", cap)
            if self.told_cap is not None:  # (the other workers keep to it too)
                self.told_cap(cap)
        self._last_429 = (now, chat_id)

    def learn_cap(self, cap: float) -> None:
        """Another worker learnt that the bot's new messages are capped at ``cap`` a second."""
        if math.isfinite(cap) and cap > 0:
            self.new.learn(cap, self.clock())

    # -- the bot's budget across chats, granted in priority order ---------------------------------
    @staticmethod
    def _rank(parcel: Parcel) -> float:
        """The most urgent first, aged (``BEHIND``)."""
        return parcel.since + BEHIND[parcel.priority]

    def _budget_wait(self, new_message: bool, ahead: int = 0, new_ahead: int = 0) -> float:
        """Seconds until the bot's budget has a token for a request of this kind, after ``ahead``
        requests waiting before it, ``new_ahead`` of them new messages."""
        now = self.clock()
        waits = [self.every.wait(now, ahead)] if self.every is not None else []
        if new_message:
            waits.append(self.new.wait(now, new_ahead))
        return max(waits, default=0.0)

    def _edit_sooner(self, parcel: Parcel) -> bool:
        """Would ``parcel``'s new message wait longer than ``PROMPT_WAIT``, and an edit less (the
        new-message budget is what holds it, not the cap on every request)?"""
        place = (self._rank(parcel), math.inf)
        ahead = bisect.bisect_right(self._waiting, place)
        new = self._budget_wait(True, ahead, bisect.bisect_right(self._new_waiting, place))
        return new > PROMPT_WAIT and self._budget_wait(False, ahead) < new

    def _enqueue(self, waiting: _Waiting) -> None:
        bisect.insort(self._waiting, waiting)
        self._waiting_of[waiting[2].chat_id] = waiting
        if waiting[3]:
            bisect.insort(self._new_waiting, waiting[:2])

    def _dequeue(self, index: int) -> _Waiting:
        waiting = self._waiting.pop(index)
        del self._waiting_of[waiting[2].chat_id]
        if waiting[3]:
            del self._new_waiting[bisect.bisect_left(self._new_waiting, waiting[:2])]
        return waiting

    def _take(self, new_message: bool) -> None:
        """Spend the tokens of a request of this kind (its place in the bot's window, if it is
        capped, until ``EveryRequest.done``)."""
        now = self.clock()
        if self.every is not None:
            self.every.take(now)
        if new_message:
            self.new.take(now)

    async def _token(self, parcel: Parcel, new_message: bool) -> None:
        """Wait for the tokens ``parcel`` needs, granted in rank order."""
        if not self._waiting and self._budget_wait(new_message) == 0:
            self._take(new_message)
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._enqueue((self._rank(parcel), next(self._order), parcel, new_message, granted))
        if self._granter is None:
            self._granter = asyncio.create_task(self._grant())
        await granted

    @contextlib.asynccontextmanager
    async def one_more(self, parcel: Parcel) -> AsyncIterator[None]:
        """``parcel`` takes a second request, made inside this (a prompt's end before the prompt): under
        the cap on every request it waits for a second place in the bot's window, at its rank, held
        until that request's answer came (as the first's)."""
        if self.every is None:
            yield
            return
        await self._token(parcel, False)
        try:
            yield
        finally:
            self.every.done(self.clock())

    def _move_up(self, lane: ChatLane, wanted: Parcel) -> None:
        """The lane's picked parcel waits for a token (its request has not started) and its chat now
        wants something more urgent: the same message (an informing DM become a prompt) or another
        (a prompt behind an old round's cleanup): the lane's place moves up to it (which of the two
        goes is decided when the token comes: ``ChatLane.more_urgent``)."""
        picked = lane.in_flight
        if picked is None or lane.started:
            return
        if picked.key == wanted.key:
            picked.priority = min(picked.priority, wanted.priority)
        waiting = self._waiting_of.get(lane.chat_id)
        rank = min(self._rank(picked), self._rank(wanted))
        if waiting is not None and rank < waiting[0]:  # (found by bisection: thousands may wait)
            index = bisect.bisect_left(self._waiting, waiting[:2])  # (its rank and order: unique)
            _, order, parcel, new_message, granted = self._dequeue(index)
            self._enqueue((rank, order, parcel, new_message, granted))

    def _next_ready(self) -> tuple[int | None, float]:
        """The first waiting in rank order whose token is there (a new message and an edit may
        have different budgets); else None and the seconds until one is."""
        edits = len(self._waiting) - len(self._new_waiting)
        kinds = {new for new, count in ((True, len(self._new_waiting)), (False, edits)) if count}
        wait, seen = math.inf, set()
        for index, (_, _, _, new_message, _) in enumerate(self._waiting):
            if new_message in seen:
                continue
            seen.add(new_message)
            kind_wait = self._budget_wait(new_message)
            if kind_wait == 0:
                return index, 0.0
            wait = min(wait, kind_wait)
            if seen == kinds:
                break
        return None, wait

    async def _grant(self) -> None:
        try:
            while self._waiting:
                index, wait = self._next_ready()
                if index is None:
                    await asyncio.sleep(wait)
                    continue
                _, _, _, new_message, granted = self._dequeue(index)
                if not granted.done():
                    self._take(new_message)
                    granted.set_result(None)
        finally:
            self._granter = None


async def _sleep(wake: asyncio.Event, seconds: float) -> None:
    """Sleep ``seconds``, or less if something new is queued meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), timeout=seconds if seconds > 0 else None)
