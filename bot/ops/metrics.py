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

The cost of a round: the requests about a game's table are counted by game and kind (``GAME_KINDS``:
a new message, an edit, a delete, in the group or a DM; the answers to presses), and when scraped
divided by the rounds of that game settled since this process started counting them
(``paiju_requests_per_round``). A request is about a table when its chat has one: a group's open
table, the table a DM's person sits at, for an answer the table of the chat the press came from
(as it was when the press reached the bot). Other requests (a reply in the DM of someone not
seated, ``getUpdates``, ``getChatMember``...) are not in these two figures, nor are 429s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics import MetricWrapperBase
from telegram import Update
from telegram.request import RequestData

from bot.send.rate_policy import Parcel
from bot.send.sender import SENDING
from bot.telegram_facts import ANSWER_WITHIN, is_private_id

if TYPE_CHECKING:
    from bot.cluster.workers import Worker
    from bot.tables.runtime import Runtime

KINDS = tuple(Update.ALL_TYPES)
PRESSES_KEPT = 10_000  # presses waiting for their answer before the oldest are forgotten
LATENCY = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
DELIVERY = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
WRITES = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
# What a request about a table did, by the method: a new message, an edit, a delete (other methods,
# reading a chat or the bot's own settings, are not part of a round's cost).
CHANGES = {
    "sendMessage": "new",
    "editMessageText": "edit",
    "editMessageReplyMarkup": "edit",
    "deleteMessage": "delete",
}
ANSWER = "answer"  # answerCallbackQuery: a press answered
GAME_KINDS = (
    *(f"{chat}_{change}" for chat in ("group", "dm") for change in ("new", "edit", "delete")),
    ANSWER,
)
LIMITED = "limited"  # every kind but the answers: what Telegram's per-chat limits count


class Metrics:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._kept_series: dict[tuple[MetricWrapperBase, tuple[str, ...]], Any] = {}
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
            "This process's part of the bot's cap on new messages a second across chats (+Inf: none,"
            " Telegram sets none; a 429 about the bot sets one, lifted gradually)",
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
            "Each batch of database writes, from handed to the writer to committed",
            buckets=WRITES,
            registry=registry,
        )
        self.redelivered = Counter(
            "paiju_updates_redelivered", "Updates Telegram delivered again, dropped", registry=registry
        )
        # One of several workers on PostgreSQL (bot/cluster/workers.py); no samples otherwise.
        self.partitions = Gauge(
            "paiju_worker_partitions", "Partitions of the chats this worker owns", registry=registry
        )
        self.workers = Gauge(
            "paiju_workers", "Workers alive, as this worker last counted them", registry=registry
        )
        self.inbox_depth = Gauge(
            "paiju_inbox_depth", "Updates waiting in the inbox, for every worker", registry=registry
        )
        self.takeovers = Counter(
            "paiju_worker_takeovers",
            "Partitions this worker took (at start-up, or from another)",
            registry=registry,
        )
        self.inbox_updates = Counter(
            "paiju_inbox_updates", "Updates this worker took from the inbox and handled", registry=registry
        )
        self.inbox_lag = Histogram(
            "paiju_inbox_lag_seconds",
            "From the inbox's notice of an update to this worker handing it over",
            buckets=LATENCY,
            registry=registry,
        )
        self.write_errors = Counter(
            "paiju_database_write_errors", "Write batches that failed", registry=registry
        )
        self.game_requests = Counter(
            "paiju_game_requests",
            "Bot API requests about a game's table, by game and kind (group_ or dm_ new, edit, delete;"
            " answer: a press answered): in a group with the game's table open, in the DM of someone"
            " seated at it, answering a press from either; every answer but 429s"
            " (paiju_bot_api_rate_limited)",
            ["game", "kind"],
            registry=registry,
        )
        self.round_cost = Gauge(
            "paiju_requests_per_round",
            "paiju_game_requests_total divided by the game's rounds settled since this process started,"
            " by game and kind (limited: every kind but answer); no sample until a round of the game"
            " is settled",
            ["game", "kind"],
            registry=registry,
        )
        self.runtime: Runtime | None = None  # the open tables, for requests by game (``attach``)
        self._settled: dict[str, int] = {}  # game -> rounds settled since the rounds were first read
        self.last_answer: float | None = None  # when the Bot API last answered a request with success
        # callback query id -> when its update reached the bot, and the game of the chat it came from
        self._pressed: dict[str, tuple[float, str | None]] = {}
        self._rounds_read: int | None = None  # the last round id counted (None: none read yet)
        self._refreshing = asyncio.Lock()  # two scrapes at once must not count the same rounds

    async def attach(self, runtime: Runtime, *, read_rounds: bool = True) -> None:
        """The runtime is built (before its tables are restored): from now on requests are counted
        by game. With ``read_rounds`` (the metrics are served), the rounds settled so far are read
        now, as the first scrape would: requests per round divide by the rounds settled after.
        Without it the first scrape reads them, and only the rounds settled after that divide."""
        self.runtime = runtime
        if read_rounds:
            async with self._refreshing:
                await self._read_rounds(runtime)

    # -- as it happens ----------------------------------------------------------------------------
    def _series(self, metric: MetricWrapperBase, *labels: str) -> Any:
        """``metric.labels(*labels)``, looked up once (prometheus_client checks the labels and takes
        a lock at each call; these run for every update and request). Only for metrics never
        cleared: a cleared metric's series are new objects."""
        key = (metric, labels)
        series = self._kept_series.get(key)
        if series is None:
            series = self._kept_series[key] = metric.labels(*labels)
        return series

    def update_received(self, update: Update) -> None:
        kind = next((kind for kind in KINDS if getattr(update, kind, None) is not None), "other")
        self._series(self.updates, kind).inc()
        query = update.callback_query
        if query is not None:
            if len(self._pressed) >= PRESSES_KEPT:
                self._forget_presses()
            game = None
            if self.runtime is not None and query.message is not None:
                game = self._game_of(query.message.chat.id)
            self._pressed[query.id] = (self.clock(), game)

    def answered(self, method: str, sent: RequestData | None, status: int) -> None:
        """The Bot API answered a request (``bot.send.aiohttp_request.Observer``)."""
        parcel = SENDING.get()
        self._series(
            self.requests, method, parcel.priority.name.lower() if parcel is not None else "direct"
        ).inc()
        pressed = None
        if method == "answerCallbackQuery" and sent is not None and status != 429:
            query = str(sent.parameters.get("callback_query_id"))
            # (kept until answered with success: a failed answer may be tried again)
            pressed = self._pressed.pop(query, None) if 200 <= status < 300 else self._pressed.get(query)
        if 200 <= status < 300:
            self.last_answer = self.clock()
            if pressed is not None:
                self.press_answer.observe(self.last_answer - pressed[0])
        elif status == 429:
            self._series(self.rate_limited, _scope(sent)).inc()
            return
        if pressed is not None:
            if pressed[1] is not None:
                self._series(self.game_requests, pressed[1], ANSWER).inc()
            return
        change = CHANGES.get(method)
        if change is None or sent is None or self.runtime is None:
            return
        chat = sent.parameters.get("chat_id")
        if not isinstance(chat, int):
            return
        game = self._game_of(chat)
        if game is not None:
            self._series(
                self.game_requests, game, f"{'dm' if is_private_id(chat) else 'group'}_{change}"
            ).inc()

    def _game_of(self, chat_id: int) -> str | None:
        """The game of the table ``chat_id`` is about now: a group's open table, or the one the
        person whose DM it is sits at."""
        assert self.runtime is not None
        tables = self.runtime.tables
        live = tables.table_of(chat_id) if is_private_id(chat_id) else tables.get(chat_id)
        return live.game if live is not None else None

    def sent(self, parcel: Parcel, seconds: float) -> None:
        """The outbox sent ``parcel`` (as it went: a new message or not), ``seconds`` after it was first
        wanted (``Sender.on_sent``)."""
        self._series(self.delivery, parcel.priority.name.lower()).observe(seconds)
        if parcel.may_edit and not parcel.new_message:
            self._series(self.as_edit, "dm" if is_private_id(parcel.chat_id) else "table").inc()

    def written(self, seconds: float, committed: bool) -> None:
        """A write batch ended (``Store.on_batch``)."""
        if committed:
            self.writes.observe(seconds)
        else:
            self.write_errors.inc()

    def _forget_presses(self) -> None:
        """Presses never answered by us (refused by Telegram, the bot stopping) are dropped."""
        oldest = self.clock() - ANSWER_WITHIN
        self._pressed = {query: seen for query, seen in self._pressed.items() if seen[0] >= oldest}

    # -- when scraped -----------------------------------------------------------------------------
    async def refresh(self, runtime: Runtime | None, worker: Worker | None = None) -> None:
        """Read what is measured as a state: the open tables, escrow, the queue, the rounds settled
        (all of them, the first time: the counter goes on across restarts, never back), and the
        requests per round settled since this process started."""
        if runtime is None:  # not started yet
            return
        async with self._refreshing:
            await self._read(runtime)
            if worker is not None:
                self.partitions.set(len(worker.owned))
                self.workers.set(worker.workers)
                self.inbox_depth.set(await runtime.store.inbox_depth())

    async def _read(self, runtime: Runtime) -> None:
        self.tables.clear()
        escrow = 0
        for live in list(runtime.tables.by_chat.values()):
            self.tables.labels(live.game, str(live.engine.phase)).inc()
            escrow += live.engine.core.escrow_total
        self.escrow.set(escrow)
        sender = runtime.presenter.sender
        self.queued.set(sum(len(lane.parcels) for lane in sender.lanes.values()))
        self.new_budget.set(sender.new.rate(sender.clock()))
        await self._read_rounds(runtime)
        self.round_cost.clear()
        for game, rounds in self._settled.items():
            spent = {kind: self._game_requests(game, kind) for kind in GAME_KINDS}
            for kind, count in spent.items():
                self.round_cost.labels(game, kind).set(count / rounds)
            limited = sum(count for kind, count in spent.items() if kind != ANSWER)
            self.round_cost.labels(game, LIMITED).set(limited / rounds)

    def _game_requests(self, game: str, kind: str) -> float:
        counted = self.registry.get_sample_value("paiju_game_requests_total", {"game": game, "kind": kind})
        return counted or 0.0

    async def _read_rounds(self, runtime: Runtime) -> None:
        """Count the rounds settled since the last read (the first read: every round the database
        holds, which this process did not see being played)."""
        first = self._rounds_read is None
        self._rounds_read, settled = await runtime.store.finished_rounds(self._rounds_read or 0)
        for game, count in settled.items():
            self.rounds.labels(game).inc(count)
            if not first:
                self._settled[game] = self._settled.get(game, 0) + count

    def render(self, accept: str) -> tuple[bytes, str]:
        """The registry in the format the scraper accepts, and its content type."""
        encode, content_type = choose_encoder(accept)
        return encode(self.registry), content_type


def _scope(sent: RequestData | None) -> str:
    chat = sent.parameters.get("chat_id") if sent is not None else None
    if isinstance(chat, int):
        return "private" if is_private_id(chat) else "group"
    return "none"
