"""Webhook mode: Telegram posts each update to the bot's HTTP server (``PAIJU_WEBHOOK_URL``).

The bot registers its address with a secret token (``setWebhook``: only the kinds of update it
handles, nothing pending dropped). Telegram sends that token in the ``X-Telegram-Bot-Api-Secret-Token``
header of each post; a post without it is refused (403) before its body is read. An update is
handed to the Application as PTB documents for a custom web server (``Application.update_queue``)
and answered 200 as soon as it is queued: handling it never keeps Telegram waiting (a post
unanswered in time is sent again). A worker of several (PostgreSQL, ``bot/cluster/workers.py``) puts it in
the inbox for its chat's owner instead, and answers once that is committed (503 if it cannot be:
Telegram posts it again). Polling deletes the webhook before its first ``getUpdates``
(PTB's ``start_polling``), so a restart moves a bot from one mode to the other, either way.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Sequence

from aiohttp import web
from telegram import Bot, Update

from bot.botdata import App
from bot.web.refusal_log import RefusalLog

log = logging.getLogger(__name__)
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def new_secret() -> str:
    """A secret token as Telegram takes it (1 to 256 of A-Z, a-z, 0-9, _ and -): 43 of them."""
    return secrets.token_urlsafe(32)


def add_route(app: web.Application, application: App, path: str, secret: str) -> None:
    """Take the updates Telegram posts to ``path``. Refusals are logged at a bounded rate: anyone
    may post here, as often as they like."""
    expected = secret.encode()
    refusals = RefusalLog(log)

    async def receive(request: web.Request) -> web.Response:
        if not hmac.compare_digest(_header_bytes(request, SECRET_HEADER), expected):
            refusals.refused("posts to the webhook without its secret token")
            return web.Response(status=403)
        try:
            body = await request.json()
            if not is_update_id(body.get("update_id")):
                raise ValueError("an update's id is a positive integer")
            update = Update.de_json(body, application.bot)
        except Exception:  # Telegram sends JSON updates: whatever else it is, it is not one
            refusals.refused("posts to the webhook that are not an update")
            return web.Response(status=400)
        if application.bot_data.runtime is not None:
            application.bot_data.runtime.hearing.heard()
        worker = application.bot_data.worker
        if worker is None:
            await application.update_queue.put(update)
            return web.Response()
        try:  # one of several workers: the update waits in the inbox for its chat's owner
            await worker.put([(update, body)])
        except Exception as error:  # the database is out of reach: Telegram posts it again
            log.warning("an update could not be put in the inbox (%s): Telegram will post it again", error)
            return web.Response(status=503)
        return web.Response()

    app.router.add_post(path, receive)


def is_update_id(value: object) -> bool:
    """Telegram numbers updates from 1 up (a database keeps them as a 64-bit integer): 0, -1, 1.5,
    ``true`` or ``"7"`` is not an update's id."""
    return type(value) is int and 0 < value < 2**63


def _header_bytes(request: web.Request, name: str) -> bytes:
    """A header's value as the bytes that came (aiohttp keeps bytes that are not UTF-8 as
    surrogates: any value compares, none raises)."""
    return request.headers.get(name, "").encode("utf-8", "surrogateescape")


async def register(bot: Bot, url: str, secret: str, kinds: Sequence[str]) -> None:
    """Tell Telegram where to post, with which secret, which kinds of update."""
    await bot.set_webhook(url, secret_token=secret, allowed_updates=kinds, drop_pending_updates=False)
    log.info("updates come by webhook to %s", url)
