"""Running the bot until SIGINT or SIGTERM: by long polling, or by webhook (``PAIJU_WEBHOOK_URL``),
with its HTTP server when it has one, a ping to Telegram when all is quiet, the daily backup.

The steps of PTB's ``run_polling``, in its order, with the server in between: ``initialize``
(getMe), ``post_init`` (``bot.app.prepare``: the database, the open tables), the HTTP server, then
the updates (polling, which deletes the webhook first; or ``setWebhook``), ``Application.start``.
Stopping goes back the same way: no new updates (the updater stops, the server closes after
answering what it took), ``Application.stop`` (every queued update handled), ``post_stop``,
``shutdown``, ``post_shutdown``; whatever step start-up reached.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import UTC, datetime
from typing import Any

from telegram.ext import CallbackContext

from bot.app import HANDLED_UPDATES, listen, stop_listening, stop_menu
from bot.botdata import App
from bot.settings import Settings
from bot.updates import hearing
from bot.web import webhook
from bot.web.server import OPS_CAP, WebServer, build_ops_app, build_web_app
from storage import BackupFailed, backup_if_due, prune

log = logging.getLogger(__name__)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGABRT)
PING_EVERY = 10.0  # seconds between looks at whether Telegram was heard from lately
BACKUP_EVERY = 3600.0  # seconds between looks at whether the daily backup is due
BACKUP_FIRST = 1.0  # seconds after start-up for the first look (a bot down for a day backs up soon)


async def serve(application: App, settings: Settings) -> None:
    """Run ``application`` until a stop signal; ``settings.webhook_secret`` is chosen already."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stopping.set)
    servers: list[WebServer] = []
    try:
        await application.initialize()
        if application.post_init is not None:
            await application.post_init(application)
        if settings.serves_http:
            servers.append(WebServer(build_web_app(application, settings)))
            await servers[-1].start(settings.http_host, settings.port)
            log.info("serving HTTP on %s:%d", settings.http_host, settings.port)
        if settings.metrics_listen is not None:
            host, port = settings.metrics_listen
            servers.append(WebServer(build_ops_app(application, settings), cap=OPS_CAP))
            await servers[-1].start(host, port)
            log.info("serving /healthz and /metrics on %s:%d", host, port)
        await _take_updates(application, settings)
        await application.start()
        _schedule(application, settings)
        await stopping.wait()
    finally:
        await _stop(application, servers)


async def _take_updates(application: App, settings: Settings) -> None:
    worker = application.bot_data.worker
    if worker is not None and settings.webhook_url is None:  # one of several: into the inbox
        worker.poll(HANDLED_UPDATES)
        return
    if settings.webhook_url is not None:
        secret = settings.webhook_secret
        assert secret is not None
        await webhook.register(application.bot, settings.webhook_url, secret, HANDLED_UPDATES)
        return
    listen(application, HANDLED_UPDATES)


async def _stop(application: App, servers: list[WebServer]) -> None:
    try:
        await stop_listening(application)
        for server in servers:
            await server.stop()
        if application.running:
            await application.stop()
            if application.post_stop is not None:
                await application.post_stop(application)
    finally:
        await stop_menu(application)  # (post_stop's, unless start-up failed) before its session closes
        await application.shutdown()
        if application.post_shutdown is not None:
            await application.post_shutdown(application)  # closes the sessions PTB's shutdown left


def _schedule(application: App, settings: Settings) -> None:
    jobs = application.job_queue
    assert jobs is not None
    health = application.bot_data.health
    by_webhook = settings.webhook_url is not None

    async def keep_in_touch(context: CallbackContext[Any, Any, Any, Any]) -> None:
        await health.keep_in_touch(context.bot, by_webhook)

    jobs.run_repeating(keep_in_touch, PING_EVERY, first=PING_EVERY, name="keep in touch")
    runtime = application.bot_data.runtime
    if by_webhook and runtime is not None:

        async def look_at_webhook(context: CallbackContext[Any, Any, Any, Any]) -> None:
            await hearing.look_at_webhook(context.bot, runtime.hearing)

        jobs.run_repeating(look_at_webhook, hearing.WEBHOOK_LOOK, first=hearing.WEBHOOK_LOOK, name="webhook")
    if settings.backup_dir is not None:
        folder, keep_days = settings.backup_dir, settings.backup_keep_days

        async def daily_backup(context: CallbackContext[Any, Any, Any, Any]) -> None:
            await back_up(settings.database, folder, keep_days)

        jobs.run_repeating(daily_backup, BACKUP_EVERY, first=BACKUP_FIRST, name="daily backup")


async def back_up(database: str, folder: str, keep_days: int) -> None:
    """The daily backup, if due (in a thread: copying and checking a big file takes a while), and
    the backups older than ``keep_days`` deleted."""
    now = datetime.now(UTC)
    try:
        taken = await asyncio.to_thread(backup_if_due, database, folder, now)
    except (BackupFailed, OSError) as failed:
        log.error("the daily backup failed: %s", failed)
        return
    if taken is not None:
        log.info("the database is backed up at %s", taken)
    for old in await asyncio.to_thread(prune, database, folder, keep_days, now):
        log.info("deleted %s (a backup older than %d days, or a copy a killed backup left)", old, keep_days)
