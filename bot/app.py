"""Building the Application: one function, so tests and benchmarks can pass their own request object."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Sequence
from random import Random

from telegram import BotCommand, BotCommandScopeDefault, Update
from telegram.constants import UpdateType
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import ApplicationBuilder, ApplicationHandlerStop, TypeHandler
from telegram.request import BaseRequest

from bot.botdata import CONTEXT_TYPES, App, Context
from bot.cluster.workers import Worker
from bot.display.i18n import t
from bot.handlers import account, chat_settings, gate, records, table
from bot.handlers.common import RightsUnknown, rights_unknown
from bot.ops.logs import log_context
from bot.send.aiohttp_request import AiohttpRequest, PollingRequest, RetryingRequest, env_proxy
from bot.send.rate_policy import ANSWER_CONNECTIONS, SENDS_AT_ONCE, Limits
from bot.settings import Settings
from bot.tables.runtime import Runtime
from bot.telegram_facts import retry_seconds
from bot.updates import hearing
from bot.updates.seen import HandledUpdates, SeenUpdates
from storage import PostgresLock, hold, open_store

log = logging.getLogger(__name__)
MENU_PAUSES = (2.0, 5.0, 15.0, 60.0, 300.0)  # seconds between tries of the menu; the last repeats
COMMANDS = (
    "newgame",
    "join",
    "leave",
    "table",
    "balance",
    "daily",
    "rules",
    "verify",
    "language",
    "cancel",
    "help",
)
MENU_LANGUAGES = {"": None, "zh": "zh-hans", "en": "en"}  # Telegram language code -> ours (None: default)
# The kinds of update the handlers take (Telegram sends no other: setWebhook's and getUpdates'
# allowed_updates); edits and channel posts would only be stopped by the gate.
HANDLED_UPDATES = (UpdateType.MESSAGE, UpdateType.CALLBACK_QUERY, UpdateType.MY_CHAT_MEMBER)
ONCE = -3  # the handler group that drops an update delivered again (before anything counts it)
OBSERVED = -2  # the handler group that counts each update and names it in the log (before the gate)
CONCURRENT_UPDATES = 256  # updates handled at once, each in its task (as concurrent_updates(True))


def build_application(
    settings: Settings,
    *,
    request: BaseRequest | None = None,
    limits: Limits | None = None,
    rng: Random | None = None,
) -> App:
    """The bot's Application; call :func:`prepare` (its ``post_init``) before use. By webhook
    (``settings.webhook_url``) it has no Updater: the HTTP server (``bot.web``) queues the updates.
    ``limits``: Telegram's budgets the bot keeps to (None: Telegram's, with the table's share the
    settings give); ``rng``: the shuffles' (None: ``secrets``)."""
    sessions: list[AiohttpRequest] = []
    builder = (
        ApplicationBuilder()
        .token(settings.token)
        .concurrent_updates(HandledUpdates(CONCURRENT_UPDATES))
        .context_types(CONTEXT_TYPES)
    )
    if request is not None:
        builder = builder.request(request).get_updates_request(request)
    else:
        proxy = env_proxy(settings.base_url or "https://api.telegram.org")
        pool = SENDS_AT_ONCE + ANSWER_CONNECTIONS  # sends never take the answers' connections
        sending = RetryingRequest(connection_pool_size=pool, proxy=proxy)
        builder = builder.request(sending)
        sessions.append(sending)
        if settings.webhook_url is None:
            # getUpdates: one connection, no retries of its own (the polling loop retries); PTB adds
            # the long poll's timeout to this read timeout, so the poll is never cut short.
            polling = PollingRequest(connection_pool_size=1, proxy=proxy)
            builder = builder.get_updates_request(polling)
            sessions.append(polling)
    builder = builder.updater(None)  # (updates come by webhook, or by bot/updates/hearing.py's polling)
    if settings.base_url:
        base = settings.base_url.rstrip("/")
        builder = builder.base_url(f"{base}/bot").base_file_url(f"{base}/file/bot")
    # PTB awaits its post_init and drops the result (prepare's runtime is for the callers that
    # prepare by hand: tests, the sandbox).
    builder = builder.post_init(prepare).post_stop(halt).post_shutdown(close)  # type: ignore[arg-type]
    # PTB types its builder's JobQueue by the default context types, not those given above; the
    # JobQueue it builds is bound to the Application and makes ours.
    application: App = builder.build()  # type: ignore[assignment]
    data = application.bot_data
    data.settings, data.rng, data.limits = settings, rng, limits
    data.sessions.extend(sessions)
    for session in sessions:
        session.observe = data.metrics.answered
    application.add_handler(TypeHandler(Update, _once), group=ONCE)
    application.add_handler(TypeHandler(Update, _observe), group=OBSERVED)
    application.add_handler(gate.HANDLER, group=gate.GROUP)  # edits and borrowed identities stop here
    for handler in (*account.HANDLERS, *records.HANDLERS, *chat_settings.HANDLERS, *table.HANDLERS):
        application.add_handler(handler)
    application.add_error_handler(_on_error)
    return application


async def prepare(application: App) -> Runtime:
    """Take the database (``DatabaseInUse`` if another bot runs on it), open it, reload every open
    table with its timer; the command menu is set in the background (:func:`set_menu`)."""
    data = application.bot_data
    settings = data.settings
    data.database_lock = await hold(settings.database)  # close() releases it
    data.store = store = await open_store(
        settings.database,
        start_grant=settings.start_grant,
        daily_bonus=settings.daily_bonus,
        tz=settings.timezone,
    )
    data.runtime = runtime = Runtime(
        settings, store, application.bot, rng=data.rng, limits=data.limits, jobs=application.job_queue
    )
    # requests counted by game from now on; the rounds settled so far read now if metrics are served
    await data.metrics.attach(runtime, read_rounds=settings.metrics != "off")
    data.seen_updates = seen_updates = SeenUpdates(store)
    await seen_updates.load()
    if isinstance(application.update_processor, HandledUpdates):
        application.update_processor.seen_updates = seen_updates
    store.on_batch, runtime.presenter.sender.on_sent = data.metrics.written, data.metrics.sent
    if store.backend.postgresql:  # a worker: the open tables come with the partitions it takes
        assert isinstance(data.database_lock, PostgresLock)
        data.worker = worker = Worker(
            store,
            data.database_lock,
            runtime,
            seen_updates,
            data.metrics,
            application.bot,
            application.process_update,
            address=settings.reached_at,
            partitions=settings.partitions,
        )
        runtime.may_act = worker.may_act  # nothing is sent or done while its lease is not sure
        runtime.presenter.sender.gate = worker.until_it_may_act
        if isinstance(application.bot.request, RetryingRequest):  # (each try asks, a retry's too)
            application.bot.request.may_send = worker.may_act
        await worker.start()
    else:
        restored = await runtime.restore()
        log.info("open tables restored: %d", len(restored))
        runtime.background(seen_updates.answer_owed(application.bot))  # (left spinning by a kill)
    runtime.turns.start()
    data.menu = asyncio.create_task(set_menu(application), name="command menu")
    data.gc_thresholds = tune_collector()
    return runtime


async def set_menu(application: App) -> None:
    """Set the command menu, in every language, trying again after ``MENU_PAUSES`` until Telegram
    takes it. Cosmetic: the commands work without it, so a Telegram failing at start-up (a 5xx, a
    timeout, a 429) never holds the tables back; said once in the log, and again when it is set."""
    settings = application.bot_data.settings
    failed = 0
    while True:
        try:
            for code, language in MENU_LANGUAGES.items():
                menu = [
                    BotCommand(name, t(language or settings.language, f"menu.{name}")) for name in COMMANDS
                ]
                await application.bot.set_my_commands(
                    menu, scope=BotCommandScopeDefault(), language_code=code or None
                )
        except (BadRequest, Forbidden, InvalidToken) as error:  # refused: trying again would not help
            log.error("the command menu was refused: %s", error)
            return
        except (NetworkError, RetryAfter) as error:  # a timeout, a 5xx, a dropped connection, a 429
            pause = MENU_PAUSES[min(failed, len(MENU_PAUSES) - 1)]
            if isinstance(error, RetryAfter):
                pause = max(pause, retry_seconds(error))
            if failed == 0:
                log.warning(
                    "the command menu could not be set (%s: %s): trying again in the background",
                    type(error).__name__,
                    error,
                )
            failed += 1
            await asyncio.sleep(pause)
            continue
        except TelegramError as error:  # anything else Telegram says: the menu is only cosmetic
            log.error("the command menu could not be set: %s: %s", type(error).__name__, error)
            return
        log.info("the command menu is set (try %d)", failed + 1)
        return


async def stop_menu(application: App) -> None:
    """Stop setting the command menu (before the connection to Telegram closes)."""
    task, application.bot_data.menu = application.bot_data.menu, None
    if task is None:
        return
    task.cancel()
    outcome = (await asyncio.gather(task, return_exceptions=True))[0]
    if isinstance(outcome, Exception):  # not a failure of Telegram's: a bug
        log.error("setting the command menu failed", exc_info=outcome)


def tune_collector() -> tuple[int, int, int]:
    """Keep Python's cyclic garbage collector out of the way of a long-running bot; returns the
    thresholds it had (for :func:`untune_collector`).

    What start-up made (the hand tables, the open tables, PTB's objects) lives as long as the bot:
    frozen, the collector never walks it again. A young generation of 10,000 objects instead of 700
    (an update allocates hundreds) is collected 14 times less often. In process, 50 tables: frozen,
    7% more updates a second (runs alternated); then the young generation: time in the collector
    400 -> 120 ms in a 5 s window.
    """
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    return previous


def untune_collector(previous: tuple[int, int, int]) -> None:
    gc.set_threshold(*previous)
    gc.unfreeze()


async def halt(application: App) -> None:
    """Polling has stopped and the connection to Telegram is still open: no deadline fires any more
    (those firing finish), and the table edits still held back go out."""
    await stop_menu(application)
    runtime = application.bot_data.runtime
    if runtime is not None:
        runtime.stop_clocks()
        await runtime.presenter.flush()


async def close(application: App) -> None:
    """The last step, whatever step start-up reached: the database saved and let go, the HTTP
    sessions closed (PTB's ``shutdown`` closes them only after a whole ``initialize``: not when
    getMe failed)."""
    data = application.bot_data
    if data.gc_thresholds is not None:
        untune_collector(data.gc_thresholds)
        data.gc_thresholds = None
    try:
        try:
            await stop_menu(application)
            if data.worker is not None:
                await data.worker.stop()  # no update taken any more; those being handled finish
                data.worker = None
            if data.runtime is not None:
                await data.runtime.wait_background()
                await halt(application)  # done already when polling stopped; not when run in process
            if data.seen_updates is not None:
                await data.seen_updates.flush()
        finally:
            if data.store is not None:
                await data.store.close()
                data.store = None
    finally:
        lock, data.database_lock = data.database_lock, None
        if lock is not None and data.store is None:
            lock.release()  # the store is closed: another bot may have the file now
        # (a store that failed to close may still write: the lock goes with this process)
        for session in data.sessions:
            await session.shutdown()  # again after PTB's shutdown: does nothing


async def _once(update: Update, context: Context) -> None:
    """Stop an update Telegram delivered again (see ``bot/updates/seen.py``)."""
    seen_updates = context.bot_data.seen_updates
    if seen_updates is not None and not await seen_updates.first_time(update.update_id):
        seen_updates.leave_to_first()  # (its first delivery's handling saves the id, with its action)
        context.bot_data.metrics.redelivered.inc()
        log.info("update %d was delivered again: handled once already", update.update_id)
        raise ApplicationHandlerStop
    if context.bot_data.worker is not None:
        context.bot_data.metrics.inbox_updates.inc()


async def _observe(update: Update, context: Context) -> None:
    """Count the update, and name its chat, person and table in every log line while it is handled
    (each update is handled in a task of its own: the names stay with it)."""
    context.bot_data.metrics.update_received(update)
    chat, user = update.effective_chat, update.effective_user
    runtime = context.bot_data.runtime
    live = runtime.tables.get(chat.id) if runtime is not None and chat is not None else None
    log_context(
        update_id=update.update_id,
        chat_id=chat.id if chat is not None else None,
        user_id=user.id if user is not None else None,
        table_id=live.table_id if live is not None else None,
    )


async def _on_error(update: object, context: Context) -> None:
    """What a handler raised: a membership check Telegram could not answer gets the person a
    "try again" (one place for every command and button that checks rights); the rest is logged."""
    if isinstance(context.error, RightsUnknown) and isinstance(update, Update):
        await rights_unknown(update, context, context.error)
        return
    log.error("an update failed", exc_info=context.error)


def listen(application: App, kinds: Sequence[str]) -> None:
    """One process by polling: its updates go to the Application's queue, as PTB's updater's do
    (``stop_listening`` ends it). PTB's updater waits up to 30 s between tries once getUpdates
    keeps failing; this one, a few seconds, and it tells the turns' clocks when the bot is deaf."""
    runtime = application.bot_data.runtime
    assert runtime is not None

    async def put(updates: Sequence[Update]) -> None:
        for update in updates:
            await application.update_queue.put(update)

    application.bot_data.polling = asyncio.create_task(
        hearing.poll(application.bot, kinds, put, runtime.hearing), name="polling"
    )


async def stop_listening(application: App) -> None:
    task, application.bot_data.polling = application.bot_data.polling, None
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
