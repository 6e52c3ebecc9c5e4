"""Several workers on one PostgreSQL database and one token: each owns some of the chats.

On PostgreSQL every ``python -m bot`` is a worker; start as many as the load needs (one is a
group of one). The chats are cut into partitions (``chat_id mod count``, ``storage/partitions.py``).

- **Who owns what.** A worker owns a partition while it holds the partition's advisory lock, on a
  connection of its own (the one that holds the bot's shared lock). The server lets every lock go
  when that connection ends, however the worker ends (a SIGKILL too: the kernel closes its
  socket), so a lost worker's partitions are free at once.
- **A lease, for the worker that is there but does nothing** (stopped, hung, frozen: its
  connection stays open). Each worker renews its lease every ``RENEW_EVERY`` seconds, ``LEASE``
  ahead by the database's clock; at each look the others end the session of any worker whose lease
  lapsed (``storage/partitions.py``), which frees its locks as a SIGKILL would. The worker itself
  stops sending and acting (``may_act``) once ``LEASE - LEASE_MARGIN`` seconds have passed on its own
  clock since the start of its last renewal that went through, before any other worker can take
  over; back and renewed in time, it goes on; taken over, its writes are refused (the fence), its
  session is gone, and it lets its tables go as a worker cut off does.
- **Sharing.** Every ``REBALANCE`` seconds each worker
  counts the workers alive (those holding a worker lock), takes free partitions up to its share
  (``ceil(count / workers)``) and lets go of those beyond it, a few at a time: a new worker gets its
  share, a lost one's share is taken by the others within a couple of ``REBALANCE``.
- **Taking a partition.** Claimed first (a new epoch: from then on every write of the old owner to
  its tables is refused, ``NotOwner``), then its open tables are loaded, their turns' clocks re-armed
  from what was saved, and each message brought to what it should show (only what changed is sent);
  then its waiting updates are handled, oldest first.
- **Letting one go** (its share is smaller now): no new update of it is handed over, those being
  handled finish, its tables are let go once their chats' changes are done and their messages
  sent, every write is committed; then its lock goes, and the next owner claims it.
- **Updates.** Whichever worker Telegram's post reaches puts the update in the inbox
  (``storage/inbox.py``; the webhook answers only once that is committed), routed to the
  partition of the chat whose table it concerns (a press in someone's DM goes with the table's
  group). ``NOTIFY`` wakes the partition's owner, which hands each update to the Application in a
  task of its own, in order (the chat's lock keeps a chat's updates in that order). An update leaves
  the inbox when it is marked taken: in the transaction of the table action it makes, or once it is
  handled (``bot/updates/seen.py``). A worker lost before that commit saved nothing of it, and the
  next owner handles it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
import math
import os
import secrets
import socket
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable, Sequence
from typing import Any, Protocol, TypeVar

import asyncpg
from prometheus_client import Counter, Histogram
from telegram import Bot, Update

from bot.display.presenter import Presenter
from bot.model import callbacks
from bot.model.live_table import LiveTable
from bot.tables.open_tables import Tables
from bot.telegram_facts import ChatKind, chat_kind
from bot.updates import hearing
from bot.updates.hearing import Hearing
from bot.updates.seen import SeenUpdates
from storage import PostgresLock, SavedTable, StorageError, Store, partitions
from storage.inbox import CHANNEL
from storage.on_postgres import run_query
from storage.partitions import Fence, partition_of
from storage.sql import Query

log = logging.getLogger(__name__)
T = TypeVar("T")
REBALANCE = 1.0  # seconds between looks at the share of partitions (and at the inbox, as a safety net)
RELEASE_AT_ONCE = 4  # partitions let go of in one look, at most (a new worker's share comes in steps)
BATCH = 200  # updates read from the inbox at once, per partition
MOVED = "paiju_table_moved"  # a table went to another chat's partition (a group upgraded): its id
HEARD = "paiju_hearing"  # the polling worker's deaf spells ("since until", until "-" while it lasts)
CAPPED = "paiju_new_cap"  # a 429 about the bot capped its new messages: the cap, a second, for all
LEASE = 5.0  # seconds a worker's lease runs past its renewal, by the database's clock
RENEW_EVERY = 1.0  # seconds between renewals
LEASE_MARGIN = 1.0  # a worker stops acting this long before its lease may have lapsed
ANSWER_WITHIN = LEASE  # seconds a query on the worker's own connection may take (its queries are short)


def since_boot() -> float:
    """Seconds by a clock that counts every moment, a suspended machine's included (a process
    stopped, or a VM frozen, finds its lease's time spent)."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def worker_name() -> str:
    """A worker's name in the partitions it claims (and in the server's list of sessions)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Host(Protocol):
    """What the worker needs of the open tables (``Runtime``, ``bot/tables/runtime.py``): it gives
    them the tables of the partitions it takes and takes back those of the partitions it lets go,
    shares out the sender's budgets among the workers, and tells of the bot's deaf spells."""

    @property
    def tables(self) -> Tables: ...

    @property
    def presenter(self) -> Presenter: ...

    @property
    def hearing(self) -> Hearing: ...

    def adopt(self, tables: Iterable[SavedTable], *, handed_over: bool = False) -> list[LiveTable]: ...

    async def let_go(
        self, chats: Callable[[int], bool], timeout: float = 10.0, *, lost: bool = False
    ) -> tuple[list[LiveTable], bool]: ...

    def background(self, work: Coroutine[Any, Any, object]) -> None: ...


class Counts(Protocol):
    """What the worker counts (``Metrics``, ``bot/ops/metrics.py``, in a room above this one)."""

    @property
    def takeovers(self) -> Counter: ...

    @property
    def inbox_lag(self) -> Histogram: ...


class Worker:
    """This process's part of the bot's workers (see the module's docstring). ``lock`` is the bot's
    hold on the database: the worker keeps its own locks on its connection, and listens there;
    ``process_update`` handles an update taken from the inbox (the Application's); ``address`` is
    where the other workers reach this one's HTTP server (the Mini App's requests come there)."""

    def __init__(
        self,
        store: Store,
        lock: PostgresLock,
        runtime: Host,
        seen_updates: SeenUpdates,
        metrics: Counts,
        bot: Bot,
        process_update: Callable[[object], Awaitable[None]],
        *,
        address: str,
        partitions: int,
    ) -> None:
        self.store = store
        self.lock = lock
        self.runtime = runtime
        self.seen_updates = seen_updates
        self.metrics = metrics
        self.bot = bot
        self.process_update = process_update
        self.name = worker_name()
        self.address = address
        self.wanted = partitions
        self.count = 0  # the database's number of partitions (the first worker's choice)
        self.fence = Fence(self.name, 0)
        self.owned: set[int] = set()
        self.in_flight: dict[int, set[asyncio.Task[None]]] = defaultdict(set)
        self.fed: set[int] = set()  # update ids handed over and being handled
        self.notified: set[int] = set()  # partitions with news since the inbox was last read
        self.wake = asyncio.Event()
        self.workers = 1  # alive, at the last look
        self._control = asyncio.Lock()  # one query at a time on the worker's connection
        self._tasks: list[asyncio.Task[None]] = []
        self._notice_at: dict[int, float] = {}
        self._stopping = False
        self._poll_kinds: tuple[str, ...] | None = None  # polling (no webhook): the kinds asked for
        self._poller: asyncio.Task[None] | None = None
        self.acting_until = 0.0  # by ``since_boot``: the lease holds until then, for sure
        self.renewed = asyncio.Event()  # set at each renewal that went through

    # -- start and stop -----------------------------------------------------------------------------
    async def start(self) -> None:
        """Join the workers: be counted, take a share of the partitions, handle their updates."""
        self.count = await self.store.ensure_partitions(self.wanted)
        if self.count != self.wanted:
            log.info(
                "the database has %d partitions (the first worker's number): PAIJU_PARTITIONS ignored",
                self.count,
            )
        self.fence = Fence(self.name, self.count)
        self.store.fence_with(self.fence)
        self.runtime.presenter.sender.told_cap = self._tell_cap
        await self._join()
        await self.renew()
        await self.rebalance()
        self._tasks = [
            asyncio.create_task(self._renewing(), name="lease"),
            asyncio.create_task(self._rebalancing(), name="partitions"),
            asyncio.create_task(self._handing_over(), name="inbox"),
        ]
        log.info("worker %s: %d of %d partitions", self.name, len(self.owned), self.count)

    async def _join(self) -> None:
        """Be counted among the workers (a lock of one's own), hear of new updates, and hear of the
        connection's end: with it, every partition is lost."""
        while not await self._run(partitions.join(1 + secrets.randbits(30))):
            pass  # (another worker drew the same number)
        async with self._control:  # (a renewal on the same connection waits: one query at a time)
            await self.conn.add_listener(CHANNEL, self._notified)
            await self.conn.add_listener(MOVED, self._moved)
            await self.conn.add_listener(HEARD, self._heard_of)
            await self.conn.add_listener(CAPPED, self._cap_heard)
        self.conn.add_termination_listener(self._cut_off)

    def _cut_off(self, conn: object) -> None:
        """The worker's connection ended (the server restarted, the network failed, or it was
        terminated): its locks are gone, so are its partitions, and maybe to another worker by now.
        Nothing of them is handled or written any more (the fence refuses it anyway); their tables
        are let go, and the next look reconnects and takes a share again. (The end of a connection
        taken again since is old news: the one it holds now is not the one that ended.)"""
        if self._stopping or conn is not self.conn:
            return
        log.error("worker %s lost its connection to the database: its partitions go to the others", self.name)
        self.acting_until = 0.0  # (its lease: renewed anew once back)
        lost, self.owned = set(self.owned), set()
        self.fence.epochs.clear()
        if self._poller is not None:
            self._poller.cancel()
        if lost:
            self.runtime.background(
                self.runtime.let_go(lambda chat_id: partition_of(chat_id, self.count) in lost, lost=True)
            )

    async def _reconnect(self) -> None:
        await self.lock.take_again()
        try:
            await self._join()
        except BaseException:  # (half joined: ended, so that the next look starts again from the start)
            self.conn.terminate()
            raise
        if self._poll_kinds is not None:
            self.poll(self._poll_kinds)
        log.info("worker %s is back", self.name)

    async def stop(self) -> None:
        """Stop taking updates; those being handled finish (the locks go with the connection)."""
        self._stopping = True
        tasks = [*self._tasks, *([self._poller] if self._poller is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks, self._poller = [], None
        await self._wait_in_flight(list(self.owned))
        with contextlib.suppress(asyncpg.InterfaceError, asyncpg.PostgresError, OSError):
            await self._run(partitions.forget(self.name))
            await self.conn.remove_listener(CHANNEL, self._notified)
            await self.conn.remove_listener(MOVED, self._moved)
            await self.conn.remove_listener(HEARD, self._heard_of)
            await self.conn.remove_listener(CAPPED, self._cap_heard)

    # -- the lease ------------------------------------------------------------------------------------
    async def renew(self) -> None:
        """Renew the lease; from then on this worker may act ``LEASE - LEASE_MARGIN`` seconds more
        by its own clock, counted from before the request (however long the answer took)."""
        started = since_boot()
        if self.conn.is_closed():  # (ended: it has no server process to name, until taken again)
            raise asyncpg.InterfaceError("the worker's connection is closed")
        pid = self.conn.get_server_pid()
        await self._run(partitions.renew(self.name, pid, LEASE))
        self.acting_until = started + LEASE - LEASE_MARGIN
        self.renewed.set()

    def may_act(self) -> bool:
        """Whether this worker's lease holds for sure: if not, another worker may hold its
        partitions by now, and nothing of them is sent or done until it is renewed."""
        return since_boot() < self.acting_until

    async def until_it_may_act(self) -> None:
        """Wait while the lease is not known to hold (the sender's gate: nothing goes to Telegram
        meanwhile; what is let go meanwhile is taken off the sender's queue)."""
        while not self.may_act():
            self.renewed.clear()
            await self.renewed.wait()

    async def _renewing(self) -> None:
        """Renew every ``RENEW_EVERY`` seconds; the groups' last minute is kept beside it, never in
        its way (a write waiting on a row lock of a paused worker's would hold the lease back)."""
        keeping: asyncio.Task[None] | None = None
        try:
            while True:
                await asyncio.sleep(RENEW_EVERY)
                try:
                    await self.renew()
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, StorageError) as error:
                    log.warning("worker %s could not renew its lease: %s", self.name, error)
                    continue
                except Exception:  # (a fault of ours: the lease is still renewed, at the next try)
                    log.exception("worker %s could not renew its lease", self.name)
                    continue
                if keeping is None or keeping.done():  # (one at a time: the next takes what is new)
                    keeping = asyncio.create_task(self._keep_budgets(), name="budgets")
        finally:
            if keeping is not None:
                keeping.cancel()

    async def _keep_budgets(self, chats: Collection[int] | None = None) -> None:
        """What groups got in the last minute (those sent to since the last time, or ``chats``),
        kept for the worker that holds their tables next, even if this one dies (every second)."""
        try:
            await self.store.keep_budgets(self.runtime.presenter.sender.history(chats))
        except StorageError as error:  # (the next owner then counts from what was kept before)
            log.warning("worker %s: the groups' last minute could not be kept: %s", self.name, error)

    async def _end_lapsed(self) -> None:
        """End the sessions of the workers whose leases lapsed: their locks go, and with them their
        partitions and the receiving of updates, to the workers alive."""
        for name, pid in await self._run(partitions.lapsed(self.name)):
            if await self._run(partitions.end_session(pid)):
                log.warning("worker %s missed its lease: its session ended, its partitions go", name)

    # -- the share of partitions --------------------------------------------------------------------
    async def rebalance(self) -> None:
        """Take free partitions up to this worker's share, or let go of a few beyond it."""
        if not self.may_act():
            return  # (its lease is renewed first: a worker late itself ends nobody)
        await self._end_lapsed()
        await self._check_claims()
        self.workers = max(1, await self._run(partitions.live_workers()))
        self.runtime.presenter.sender.share(self.workers)
        share = math.ceil(self.count / self.workers)
        if len(self.owned) > share:  # (let go of at once: each waits for its groups' budgets)
            going = sorted(self.owned, reverse=True)[: min(RELEASE_AT_ONCE, len(self.owned) - share)]
            await asyncio.gather(*(self.release(partition) for partition in going))
            return
        if len(self.owned) == share:
            return
        held = await self._run(partitions.held())
        for partition in self._in_turn(set(range(self.count)) - held):
            if len(self.owned) >= share:
                break
            if await self._run(partitions.try_partition(partition)):
                try:
                    await self.take_over(partition)
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, StorageError) as error:
                    log.warning(
                        "worker %s could not take partition %d (%s): let go", self.name, partition, error
                    )

    async def _check_claims(self) -> None:
        """A partition another worker has claimed since (this one was cut off, or paused, and the
        other took it) is lost: nothing of it could be written any more (the fence); let it go."""
        owners = await self.store.partition_owners()
        for partition in sorted(self.owned):
            if owners.get(partition) != (self.name, self.fence.epochs.get(partition)):
                log.error("worker %s: partition %d was taken by another worker", self.name, partition)
                await self.release(partition)

    def _in_turn(self, free: Iterable[int]) -> list[int]:
        """Free partitions, from a point of this worker's own (workers starting together rarely
        reach for the same ones)."""
        start = hash(self.name) % max(self.count, 1)
        return sorted(free, key=lambda partition: (partition - start) % self.count)

    async def take_over(self, partition: int) -> None:
        """Own ``partition`` (its lock is held): claim it, load its tables, handle its updates. If
        that fails, the partition is let go at once (its lock too): another worker, or the next
        look, takes it."""
        try:
            handed_over = await self.store.handed_over(partition)
            self.fence.epochs[partition] = await self.store.claim_partition(
                partition, self.name, self.address
            )
            tables = await self.store.open_tables_in({partition}, self.count)
        except BaseException:
            self.fence.epochs.pop(partition, None)
            with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                await self._run(partitions.let_partition_go(partition))
            raise
        await self._carry_budgets([saved.chat_id for saved in tables])
        self.owned.add(partition)
        self.runtime.adopt(tables, handed_over=handed_over)
        if not handed_over:  # (presses its last owner saved, unanswered)
            self.runtime.background(self.seen_updates.answer_owed(self.bot, self.count, {partition}))
        self.metrics.takeovers.inc()
        self.notified.add(partition)
        self.wake.set()
        if tables:
            log.info("worker %s took partition %d with %d open tables", self.name, partition, len(tables))

    async def _carry_budgets(self, chats: list[int]) -> None:
        """The groups' requests of the last minute, as the worker that let their tables go kept
        them: counted here, so a group's 20 a minute holds across owners."""
        try:
            self.runtime.presenter.sender.carry(await self.store.budgets(chats))
        except StorageError as error:
            log.warning("worker %s: the groups' last minute is not known (%s)", self.name, error)

    async def release(self, partition: int) -> None:
        """Let ``partition`` go to another worker, leaving nothing half-done (see the docstring)."""
        self.owned.discard(partition)
        await self._wait_in_flight([partition])
        gone, sent_all = await self.runtime.let_go(
            lambda chat_id: partition_of(chat_id, self.count) == partition
        )
        # What its messages show, and what its groups got in the last minute, for the next owner.
        self.store.save_shown_now(live.table_id for live in gone)
        await self._keep_budgets([live.chat_id for live in gone])
        await self.store.drain()  # every write of it committed (fenced: still ours)
        if sent_all:  # (else what was cut off may show: its next owner looks over the DMs)
            with contextlib.suppress(StorageError):
                await self.store.hand_over(partition)
        self.fence.epochs.pop(partition, None)
        await self._run(partitions.let_partition_go(partition))

    async def _rebalancing(self) -> None:
        while True:
            await asyncio.sleep(REBALANCE)
            try:
                if self.conn.is_closed():
                    if self.owned:  # (its end was not heard of: it is taken as it would have been)
                        self._cut_off(self.conn)
                    await self._reconnect()
                await self.rebalance()
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, StorageError) as error:
                log.warning("worker %s could not look at the partitions: %s", self.name, error)
            except Exception:  # (a fault of ours: the partitions are still looked at, at the next look)
                log.exception("worker %s could not look at the partitions", self.name)
            self.notified |= self.owned  # the safety net: read every owned partition now and then
            self.wake.set()

    # -- the inbox ----------------------------------------------------------------------------------
    def _notified(self, conn: object, pid: int, channel: str, payload: str) -> None:
        if payload.isdigit() and int(payload) in self.owned:
            self.notified.add(int(payload))
            self._notice_at.setdefault(int(payload), time.monotonic())
            self.wake.set()

    async def _handing_over(self) -> None:
        while True:
            await self.wake.wait()
            await self.until_it_may_act()  # (another worker may hold these partitions by now)
            self.wake.clear()
            partitions, self.notified = self.notified & self.owned, set()
            for partition in sorted(partitions):
                try:
                    await self._hand_over(partition)
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, StorageError) as error:
                    log.warning("worker %s could not read the inbox: %s", self.name, error)
                    self.notified.add(partition)  # the next look tries again
                except Exception:  # (a fault of ours: the inbox is still read, at the next look)
                    log.exception("worker %s could not hand its inbox over", self.name)
                    self.notified.add(partition)

    async def _hand_over(self, partition: int) -> None:
        """Hand the partition's waiting updates to the Application, oldest first."""
        noticed = self._notice_at.pop(partition, None)
        # From the oldest each time: Telegram posts several updates at once (up to 40 connections),
        # so an older one may be put in the inbox after a newer one was handed over.
        after = 0
        while partition in self.owned:
            waiting = await self.store.waiting_updates({partition}, after, BATCH)
            taken_here: list[int] = []
            for update_id, _, body in waiting:
                after = update_id
                if partition not in self.owned:  # let go meanwhile: its next owner hands it over
                    return
                if update_id in self.fed:
                    continue
                if self.seen_updates.taken_here(update_id):
                    # Handled here: read before its id was saved, a redelivery put while it was
                    # saved, or its saving failed. Not handed over again: saved (again), which takes
                    # it out of the inbox.
                    taken_here.append(update_id)
                    continue
                self.fed.add(update_id)
                update = Update.de_json(json.loads(body), self.bot)
                task = asyncio.create_task(self._handle(update))
                self.in_flight[partition].add(task)
                task.add_done_callback(self.in_flight[partition].discard)
                # Handled and saved (it left the inbox), or not saved (still there: the next look
                # saves it, above) or not handled at all (handed over again at the next look).
                task.add_done_callback(functools.partial(_forget, self.fed, update_id))
            if taken_here:
                # (one that fails stays: saved at a later look, or by the next owner's handling)
                await asyncio.gather(*(self.seen_updates.save(i) for i in taken_here), return_exceptions=True)
            if noticed is not None and waiting:
                self.metrics.inbox_lag.observe(time.monotonic() - noticed)
                noticed = None
            if len(waiting) < BATCH:
                return

    async def _handle(self, update: Update) -> None:
        """Handle an update from the inbox; its id is saved in its table action's transaction, or
        once it is handled (``bot/updates/seen.py``)."""
        await self.seen_updates.handle(update.update_id, self.process_update(update))

    async def _wait_in_flight(self, partitions: Iterable[int]) -> None:
        tasks = [task for partition in partitions for task in self.in_flight.get(partition, ())]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- by polling: one worker takes the updates from Telegram for all -----------------------------
    def poll(self, kinds: Iterable[str]) -> None:
        """Take updates by polling (no webhook): the worker holding the receiver's lock calls
        getUpdates (Telegram answers one caller at a time) and puts them in the inbox; if it is
        lost, another takes the lock at its next look. A worker cut off from the database stops
        polling (its lock is gone) and waits for the lock again once back."""
        self._poll_kinds = tuple(kinds)
        self._poller = asyncio.create_task(self._polling(self._poll_kinds), name="polling")

    async def _polling(self, kinds: tuple[str, ...]) -> None:
        while not await self._run(partitions.take_receiving()):
            await asyncio.sleep(REBALANCE)
        log.info("worker %s takes the updates from Telegram (polling)", self.name)
        self.runtime.hearing.told = self._tell_hearing  # (every worker's turns wait while this one is deaf)

        async def keep(updates: Sequence[Update]) -> None:  # in one transaction
            await self.put([(update, update.to_dict()) for update in updates])

        await hearing.poll(self.bot, kinds, keep, self.runtime.hearing)

    def _tell_hearing(self, since: float | None, until: float | None) -> None:
        payload = f"{since} {'-' if until is None else until}"
        self.runtime.background(self._notify(HEARD, payload))

    async def _notify(self, channel: str, payload: str) -> None:
        with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
            await self._run(partitions.notify(channel, payload))

    def _heard_of(self, conn: object, pid: int, channel: str, payload: str) -> None:
        if pid == self.conn.get_server_pid():
            return  # (its own)
        with contextlib.suppress(ValueError):
            since_text, until_text = payload.split()
            since, until = float(since_text), None if until_text == "-" else float(until_text)
            if math.isfinite(since) and (until is None or math.isfinite(until)):
                self.runtime.hearing.learn(since, until)

    # -- the bot's cap on new messages, learnt from a 429 by one worker, kept by all ---------------
    def _tell_cap(self, cap: float) -> None:
        self.runtime.background(self._notify(CAPPED, repr(cap)))

    def _cap_heard(self, conn: object, pid: int, channel: str, payload: str) -> None:
        if pid == self.conn.get_server_pid():
            return  # (its own)
        with contextlib.suppress(ValueError):
            self.runtime.presenter.sender.learn_cap(float(payload))

    # -- a table that moves to another partition (its group became a supergroup: a new chat id) ------
    def owns(self, chat_id: int) -> bool:
        return partition_of(chat_id, self.count) in self.owned

    async def hand_off(self, table_id: int, chat_id: int) -> None:
        """A table of this worker's is now in a chat of another worker's partition: let it go (its
        writes would be refused) and tell that worker, which loads it as saved."""
        await self.runtime.let_go(lambda chat: chat == chat_id)
        await self._run(partitions.notify(MOVED, str(table_id)))

    def _moved(self, conn: object, pid: int, channel: str, payload: str) -> None:
        if payload.isdigit():
            self.runtime.background(self._take_table(int(payload)))

    async def _take_table(self, table_id: int) -> None:
        saved = await self.store.load_table(table_id)
        if saved is None or saved.closed or not self.owns(saved.chat_id):
            return
        tables = self.runtime.tables
        async with tables.lock(saved.chat_id):
            if tables.get(saved.chat_id) is None:
                # Its message is in the old chat: the new one gets a message of its own.
                self.runtime.adopt([dataclasses.replace(saved, message_id=None)])
                log.info("worker %s took table %d, moved to chat %d", self.name, table_id, saved.chat_id)

    async def owner_of_table(self, table_id: int) -> str | None:
        """Where the worker holding a table is reached, if another one holds it."""
        owner, address = await self.store.owner_of_table(table_id, self.count)
        return None if owner is None or owner == self.name else address

    # -- updates Telegram delivered (the webhook's, or this worker's polling) ----------------------
    async def put(self, updates: Sequence[tuple[Update, dict[str, Any]]]) -> int:
        """Keep updates Telegram delivered (each with its body as sent) in the inbox, each for its
        chat's owner, in one transaction; how many were new (not there already, nor taken before)."""
        kept = [
            (
                update.update_id,
                partition_of(await chat_of(self.store, update), self.count),
                json.dumps(body, ensure_ascii=False, separators=(",", ":")),
            )
            for update, body in updates
        ]
        return await self.store.put_updates(kept)

    # -- the worker's own connection ----------------------------------------------------------------
    @property
    def conn(self) -> asyncpg.Connection:
        """The connection holding the bot's lock (taken again if it ends): the worker's locks are
        held on it, and it listens there."""
        return self.lock.conn

    async def _run(self, query: Query[T]) -> T:
        """Run ``query`` on the worker's connection, one at a time. One left unanswered for
        ``ANSWER_WITHIN`` seconds (a hung server, a socket open behind a lost peer) ends the
        connection: the lease is not held by a query that never ends (the next look takes the
        connection again, as after any end of it)."""
        async with self._control:
            conn = self.conn
            try:
                async with asyncio.timeout(ANSWER_WITHIN):
                    return await run_query(conn, query)
            except TimeoutError:
                log.error(
                    "worker %s: the database did not answer in %.0f s: its connection is ended",
                    self.name,
                    ANSWER_WITHIN,
                )
                conn.terminate()  # (its end is heard of: the partitions go, as in any cut)
                raise


def _forget(fed: set[int], update_id: int, _handled: object) -> None:
    fed.discard(update_id)


async def chat_of(store: Store, update: Update) -> int:
    """The chat whose owner handles ``update``: its own, or for a press in someone's DM on a
    table's button, the table's group's (that chat's owner holds the table); for the notice in a
    supergroup that it was upgraded from a group, the old group's (both notices go to the worker
    holding the table, whichever comes first)."""
    query = update.callback_query
    if query is not None and query.message is not None:
        chat = query.message.chat
        press = callbacks.decode(query.data) if chat_kind(chat) is ChatKind.PRIVATE else None
        if press is not None:
            group = await store.chat_of_table(press.table_id)
            if group is not None:
                return group
        return chat.id
    message = update.effective_message
    if message is not None and message.migrate_from_chat_id:  # (the old chat's owner holds its table)
        return message.migrate_from_chat_id
    effective = update.effective_chat
    if effective is not None:
        return effective.id
    user = update.effective_user
    return user.id if user is not None else 0
