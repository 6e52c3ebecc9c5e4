"""What the bot's Application holds (PTB's ``bot_data``), typed: one attribute per thing, no string
keys (``ContextTypes(bot_data=BotData)``, so every handler's ``context.bot_data`` is one).

PTB makes it with no arguments when the Application is built (ContextTypes' rule);
``bot.app.build_application`` gives it the settings and what it was built with before it returns
the Application, and ``bot.app.prepare`` (at start-up) the runtime and the store.
"""

from __future__ import annotations

import asyncio
from random import Random
from typing import TYPE_CHECKING, Any

from telegram.ext import Application, CallbackContext, ContextTypes, ExtBot, JobQueue
from telegram.request import BaseRequest

from bot.ops.health import Health
from bot.ops.metrics import Metrics

if TYPE_CHECKING:
    from bot.cluster.workers import Worker
    from bot.send.rate_policy import Limits
    from bot.settings import Settings
    from bot.tables.runtime import Runtime
    from bot.updates.seen import SeenUpdates
    from storage import DatabaseLock, PostgresLock, Store


class BotData:
    settings: Settings  # given by build_application before anything runs

    def __init__(self) -> None:
        self.rng: Random | None = None  # the shuffles' (None: secrets)
        self.limits: Limits | None = None  # Telegram's budgets (None: those of the settings)
        self.metrics = Metrics()
        self.health = Health(self.metrics)
        self.sessions: list[BaseRequest] = []  # the request objects built here, closed by close()
        self.runtime: Runtime | None = None  # from start-up on (bot.app.prepare)
        self.store: Store | None = None  # the open store, closed by close() before the lock goes
        self.database_lock: DatabaseLock | PostgresLock | None = None  # this process's hold on the database
        self.seen_updates: SeenUpdates | None = None  # which updates were taken (bot/updates/seen.py)
        self.worker: Worker | None = None  # on PostgreSQL: this process's chats (bot/cluster/workers.py)
        self.menu: asyncio.Task[None] | None = None  # setting the command menu in the background
        self.polling: asyncio.Task[None] | None = (
            None  # taking updates by getUpdates (bot/updates/hearing.py)
        )
        self.gc_thresholds: tuple[int, int, int] | None = None  # the collector's before start-up


# The type of every handler's and job's ``context``, and of the Application (PTB's order: the bot,
# user_data, chat_data, bot_data; the Application's has the context type second).
Context = CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], BotData]
App = Application[ExtBot[None], Context, dict[Any, Any], dict[Any, Any], BotData, JobQueue[Context]]
CONTEXT_TYPES = ContextTypes(bot_data=BotData)
