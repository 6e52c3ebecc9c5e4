"""Building the Application: one function, so tests and benchmarks can pass their own request object."""

from __future__ import annotations

import asyncio
import logging
from random import Random

from telegram import BotCommand, BotCommandScopeDefault
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder
from telegram.request import BaseRequest

from bot.handlers import account, chat_settings, records, table
from bot.i18n import t
from bot.request import AiohttpRequest, RetryingRequest, env_proxy
from bot.runtime import RUNTIME, Paiju
from bot.settings import Settings
from storage import open_store

log = logging.getLogger(__name__)
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


def build_application(
    settings: Settings,
    *,
    request: BaseRequest | None = None,
    rate_limit: bool = True,
    rng: Random | None = None,
) -> Application:
    """The bot's Application; call :func:`prepare` (done by ``post_init`` when polling) before use."""
    builder = ApplicationBuilder().token(settings.token).concurrent_updates(True)
    if request is not None:
        builder = builder.request(request).get_updates_request(request)
    else:
        proxy = env_proxy(settings.base_url or "https://api.telegram.org")
        # getUpdates: one connection, no retries of its own (the polling loop retries); PTB adds the
        # long poll's timeout to this read timeout, so the poll is never cut short.
        polling = AiohttpRequest(connection_pool_size=1, proxy=proxy)
        builder = builder.request(RetryingRequest(connection_pool_size=64, proxy=proxy))
        builder = builder.get_updates_request(polling)
    if settings.base_url:
        base = settings.base_url.rstrip("/")
        builder = builder.base_url(f"{base}/bot").base_file_url(f"{base}/file/bot")
    if rate_limit:
        builder = builder.rate_limiter(AIORateLimiter(max_retries=3))
    application = builder.post_init(prepare).post_shutdown(close).build()
    application.bot_data["settings"] = settings
    application.bot_data["rng"] = rng
    for handler in (*account.HANDLERS, *records.HANDLERS, *chat_settings.HANDLERS, *table.HANDLERS):
        application.add_handler(handler)
    application.add_error_handler(_log_error)
    return application


async def prepare(application: Application) -> Paiju:
    """Open the database, reload every open table with its timer, register the command menu."""
    settings: Settings = application.bot_data["settings"]
    store = await open_store(
        settings.database,
        start_grant=settings.start_grant,
        daily_bonus=settings.daily_bonus,
        tz=settings.timezone,
    )
    paiju = Paiju(settings, store, application.bot, rng=application.bot_data["rng"])
    application.bot_data[RUNTIME] = paiju
    restored = await paiju.restore()
    log.info("open tables restored: %d", len(restored))
    for code, language in MENU_LANGUAGES.items():
        menu = [BotCommand(name, t(language or settings.language, f"menu.{name}")) for name in COMMANDS]
        await application.bot.set_my_commands(
            menu, scope=BotCommandScopeDefault(), language_code=code or None
        )
    return paiju


async def close(application: Application) -> None:
    paiju: Paiju | None = application.bot_data.get(RUNTIME)
    if paiju is not None:
        await asyncio.gather(*paiju.redraws, return_exceptions=True)
        await paiju.stop_timers()
        await paiju.presenter.flush()
        await paiju.store.close()


async def _log_error(update: object, context: object) -> None:
    log.error("an update failed", exc_info=getattr(context, "error", None))
