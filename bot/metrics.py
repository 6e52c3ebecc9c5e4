"""What the bot counts and times, served as ``GET /metrics`` in Prometheus' text format.

Each Application has its own ``CollectorRegistry``: several bots in one process (tests) never share
a series. Counted as it happens: the updates by kind; every answer of the Bot API by method and by
the outbox priority its request was sent at (``direct``: outside the outbox, such as the answers to
presses, a handler's own calls, ``getUpdates``); the 429s by scope (the group, the private chat, or
none); each press's time until its answer; each queued message's time from wanted to sent, by
priority (``act``: the prompts someone must act on); the new messages that went as edits, the
budget being busy; each write batch of the database. Read when scraped (``refresh``): the open
tables by game and phase, the coins they hold in escrow, the messages queued, the new-message
budget, and the rounds settled (from the database: the count goes on across restarts).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from telegram import Update
from telegram.request import RequestData

from bot.outbox import Parcel
from bot.sender import SENDING
from bot.telegram import ANSWER_WITHIN, is_private_id

if TYPE_CHECKING:
    from bot.runtime import Runtime

KINDS = tuple(Update.ALL_TYPES)
PRESSES_KEPT = 10_000  # presses waiting for their answer before the oldest are forgotten
LATENCY = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
DELIVERY = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
WRITES = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


class Metrics:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.registry = registry = CollectorRegistry()
        self.updates = Counter("paiju_updates", "Updates handled, by kind", ["kind"], registry=registry)
        self.press_answer = Histogram(
            "paiju_press_answer_seconds",
            "From a button press reaching the bot to Telegram taking its answer",
            buckets=LATENCY,
            registry=registry,
        )
        self.delivery = Histogram(
            "paiju_delivery_seconds",
            "From a message wanted to Telegram taking it, by priority (act: a prompt to act on)",
            ["priority"],
            buckets=DELIVERY,
            registry=registry,
        )
        self.requests = Counter(
            "paiju_bot_api_requests",
            "Bot API requests answered, by method and outbox priority (direct: not queued)",
            ["method", "priority"],
            registry=registry,
        )
        self.rate_limited = Counter(
            "paiju_bot_api_rate_limited",
            "429 answers of the Bot API, by scope (group, private, none)",
            ["scope"],
            registry=registry,
        )
        self.as_edit = Counter(
            "paiju_sent_as_edit",
            "New messages sent as an edit of the last one (seen, not notified): the new-message budget"
            " was busy; by message (dm: a prompt, table: a new round's table message)",
            ["message"],
            registry=registry,
        )
        for message in ("dm", "table"):  # (a series from the start: at 0 it says "never yet")
            self.as_edit.labels(message)
        self.new_budget = Gauge(
            "paiju_new_messages_per_second",
            "The bot's budget for new messages across chats (below 30: backed off after 429s about the bot)",
            registry=registry,
        )
        self.queued = Gauge("paiju_send_queue_depth", "Messages waiting to be sent", registry=registry)
        self.tables = Gauge(
            "paiju_open_tables", "Open tables, by game and phase", ["game", "phase"], registry=registry
        )
        self.escrow = Gauge("paiju_escrow_coins", "Coins in escrow at the open tables", registry=registry)
        self.rounds = Counter("paiju_rounds_finished", "Rounds settled, by game", ["game"], registry=registry)
        self.writes = Histogram(
            "paiju_database_write_seconds",
            "Each batch of database writes, from handed to the writer's thread to committed",
            buckets=WRITES,
            registry=registry,
        )
        self.redelivered = Counter(
            "paiju_updates_redelivered", "Updates Telegram delivered again, dropped", registry=registry
        )
        self.write_errors = Counter(
            "paiju_database_write_errors", "Write batches that failed", registry=registry
        )
        self.last_answer: float | None = None  # when the Bot API last answered a request with success
        self._pressed: dict[str, float] = {}  # callback query id -> when its update reached the bot
        self._rounds_read = 0  # the last round id counted
        self._refreshing = asyncio.Lock()  # two scrapes at once must not count the same rounds

    # -- as it happens ----------------------------------------------------------------------------
    def update_received(self, update: Update) -> None:
        kind = next((kind for kind in KINDS if getattr(update, kind, None) is not None), "other")
        self.updates.labels(kind).inc()
        if update.callback_query is not None:
            if len(self._pressed) >= PRESSES_KEPT:
                self._forget_presses()
            self._pressed[update.callback_query.id] = self.clock()

    def answered(self, method: str, sent: RequestData | None, status: int) -> None:
        """The Bot API answered a request (``bot.request.Observer``)."""
        job = SENDING.get()
        self.requests.labels(method, job.priority.name.lower() if job is not None else "direct").inc()
        if 200 <= status < 300:
            self.last_answer = self.clock()
            if method == "answerCallbackQuery" and sent is not None:
                pressed = self._pressed.pop(str(sent.parameters.get("callback_query_id")), None)
                if pressed is not None:
                    self.press_answer.observe(self.last_answer - pressed)
        elif status == 429:
            self.rate_limited.labels(_scope(sent)).inc()

    def sent(self, job: Parcel, seconds: float) -> None:
        """The outbox sent ``job`` (as it went: a new message or not), ``seconds`` after it was first
        wanted (``Sender.on_sent``)."""
        self.delivery.labels(job.priority.name.lower()).observe(seconds)
        if job.may_edit and not job.new_message:
            self.as_edit.labels("dm" if is_private_id(job.chat_id) else "table").inc()

    def written(self, seconds: float, committed: bool) -> None:
        """A write batch ended (``Store.on_batch``)."""
        if committed:
            self.writes.observe(seconds)
        else:
            self.write_errors.inc()

    def _forget_presses(self) -> None:
        """Presses never answered by us (refused by Telegram, the bot stopping) are dropped."""
        oldest = self.clock() - ANSWER_WITHIN
        self._pressed = {query: at for query, at in self._pressed.items() if at >= oldest}

    # -- when scraped -----------------------------------------------------------------------------
    async def refresh(self, runtime: Runtime | None) -> None:
        """Read what is measured as a state: the open tables, escrow, the queue, the rounds settled
        (all of them, the first time: the counter goes on across restarts, never back)."""
        if runtime is None:  # not started yet
            return
        async with self._refreshing:
            await self._read(runtime)

    async def _read(self, runtime: Runtime) -> None:
        self.tables.clear()
        escrow = 0
        for live in list(runtime.tables.by_chat.values()):
            self.tables.labels(live.game, str(live.engine.phase)).inc()
            escrow += live.engine.core.escrow_total
        self.escrow.set(escrow)
        sender = runtime.presenter.sender
        self.queued.set(sum(len(lane.jobs) for lane in sender.lanes.values()))
        self.new_budget.set(sender.new.rate(sender.clock()))
        self._rounds_read, settled = await runtime.store.finished_rounds(self._rounds_read)
        for game, count in settled.items():
            self.rounds.labels(game).inc(count)

    def render(self, accept: str) -> tuple[bytes, str]:
        """The registry in the format the scraper accepts, and its content type."""
        encode, content_type = choose_encoder(accept)
        return encode(self.registry), content_type


def _scope(sent: RequestData | None) -> str:
    chat = sent.parameters.get("chat_id") if sent is not None else None
    if isinstance(chat, int):
        return "private" if is_private_id(chat) else "group"
    return "none"
