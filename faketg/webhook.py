"""Telegram's side of webhook mode, for the emulator: ``setWebhook``, ``deleteWebhook``,
``getWebhookInfo``, and each pending update posted to the registered address as Telegram does it.

Updates go one at a time, oldest first, as a JSON body with the secret token in the
``X-Telegram-Bot-Api-Secret-Token`` header. An update is taken once answered 2xx; any other
answer (or none) is reported by ``getWebhookInfo`` and the update posted again ``RETRY`` seconds
later (Telegram keeps trying too). Kinds the webhook did not ask for (``allowed_updates``) are
dropped unsent. While a webhook is set, ``getUpdates`` is refused (409), as by Telegram.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from faketg.world import JSON, ApiError, World

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
RETRY = 0.2  # seconds before an update the bot did not take is posted again
POST_TIMEOUT = 10.0
CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the"
    " webhook first"
)


@dataclass
class Webhook:
    url: str
    secret: str | None
    allowed: frozenset[str] | None  # None: every kind


@dataclass
class Post:
    """One post of an update to the webhook, and the bot's answer (None: no answer)."""

    update_id: int
    status: int | None
    secret: str | None


@dataclass
class WebhookDelivery:
    """Posts ``world``'s pending updates to the webhook while one is set; ``taken(update_id)`` is
    told of each update the bot took (or that was dropped)."""

    world: World
    wake: asyncio.Condition  # notified when new updates are in the world
    taken: Callable[[int], None]
    webhook: Webhook | None = None
    posts: list[Post] = field(default_factory=list)
    registrations: int = 0  # setWebhook calls
    last_error: tuple[int, str] | None = None  # (unix time, message) of the last failed post
    _task: asyncio.Task[None] | None = None
    _session: aiohttp.ClientSession | None = None

    # -- the Bot API methods ------------------------------------------------------------------------
    def call(self, method: str, params: JSON) -> object:
        self.world.record(method, params)
        if method == "setWebhook":
            return self._set(params)
        if method == "deleteWebhook":
            return self._delete(params)
        return self._info()

    def _set(self, params: JSON) -> bool:
        url = str(params.get("url") or "")
        if not url:
            return self._delete(params)
        if not url.startswith(("https://", "http://")):
            raise ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        allowed = params.get("allowed_updates")
        if isinstance(allowed, str):
            allowed = json.loads(allowed)
        secret = params.get("secret_token")
        self.webhook = Webhook(url, None if secret is None else str(secret), _kinds(allowed))
        self.registrations += 1
        self._drop_pending(params)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._deliver())
        return True

    def _delete(self, params: JSON) -> bool:
        self.webhook = None
        self._drop_pending(params)
        return True

    def _drop_pending(self, params: JSON) -> None:
        if params.get("drop_pending_updates") in (True, "true"):
            for update in list(self.world.updates):
                self.taken(int(update["update_id"]))

    def _info(self) -> JSON:
        info: JSON = {
            "url": self.webhook.url if self.webhook else "",
            "has_custom_certificate": False,
            "pending_update_count": len(self.world.updates),
        }
        if self.webhook is not None and self.webhook.allowed is not None:
            info["allowed_updates"] = sorted(self.webhook.allowed)
        if self.last_error is not None:
            info["last_error_date"], info["last_error_message"] = self.last_error
        return info

    def refuse_polling(self) -> None:
        if self.webhook is not None:
            raise ApiError(409, CONFLICT)

    # -- posting ------------------------------------------------------------------------------------
    async def _deliver(self) -> None:
        while self.webhook is not None:
            update = self._next()
            if update is None:
                async with self.wake:
                    await self.wake.wait_for(lambda: self.webhook is None or bool(self.world.updates))
                continue
            if await self._post(self.webhook, update):
                self.taken(int(update["update_id"]))
            else:
                await asyncio.sleep(RETRY)

    def _next(self) -> JSON | None:
        """The oldest pending update of a kind the webhook takes (the others are dropped)."""
        while self.world.updates and self.webhook is not None:
            update = self.world.updates[0]
            if self.webhook.allowed is None or _kind(update) in self.webhook.allowed:
                return update
            self.taken(int(update["update_id"]))
        return None

    async def _post(self, webhook: Webhook, update: JSON) -> bool:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=POST_TIMEOUT))
        headers = {"Content-Type": "application/json"}
        if webhook.secret is not None:
            headers[SECRET_HEADER] = webhook.secret
        status: int | None = None
        try:
            async with self._session.post(webhook.url, data=json.dumps(update), headers=headers) as answer:
                status = answer.status
        except (aiohttp.ClientError, TimeoutError) as error:
            self.last_error = (int(time.time()), f"Connection failed: {type(error).__name__}")
        self.posts.append(Post(int(update["update_id"]), status, webhook.secret))
        if status is not None and not 200 <= status < 300:
            self.last_error = (int(time.time()), f"Wrong response from the webhook: {status}")
        return status is not None and 200 <= status < 300

    async def close(self) -> None:
        self.webhook = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._session is not None:
            await self._session.close()


def _kind(update: JSON) -> str:
    return next(key for key in update if key != "update_id")


def _kinds(allowed: object) -> frozenset[str] | None:
    """Telegram's rule: an empty or missing list means every kind but a few (all of them here)."""
    return frozenset(str(kind) for kind in allowed) if isinstance(allowed, list) and allowed else None
