"""The HTTP front door: the fake Telegram served as a Bot API over real HTTP (aiohttp), with long
polling or a webhook (``faketg.webhook``) and switchable faults, so the real ``python -m bot`` runs
against it unchanged (only its ``PAIJU_BOT_API_URL`` differs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

from faketg.limits import FloodLimits
from faketg.webhook import WebhookDelivery
from faketg.world import JSON, ApiError, World

# Parameters whose values are text as sent; every other form value is JSON (numbers, objects...).
TEXT_FIELDS = frozenset(
    {
        "text",
        "callback_query_id",
        "parse_mode",
        "language_code",
        "url",
        "description",
        "callback_data",
        "data",
        "caption",
        "secret_token",
    }
)
WEBHOOK_METHODS = frozenset({"setWebhook", "deleteWebhook", "getWebhookInfo"})
LONG_POLL_LIMIT = 30.0


# The faults ``Faults.always`` may give a method at every call, besides the shared ones:
# ``internal_error``, 500 Internal Server Error; ``at_once``, a getUpdates answered without waiting
# (a proxy or a local Bot API server that does not long-poll: nothing new is an empty list at once).
ALWAYS = frozenset({"rate_limited", "server_error", "internal_error", "slow", "dropped", "at_once"})


@dataclass
class Faults:
    """Shares (0 to 1) of Bot API requests answered badly, each switchable on its own; and
    ``always``: methods that get one fault at every call (``ALWAYS``), spared or not, until
    switched off (a Telegram down for a while: ``{"setMyCommands": "internal_error"}``)."""

    rate_limited: float = 0.0  # 429 Too Many Requests with retry_after
    server_error: float = 0.0  # 502 Bad Gateway
    slow: float = 0.0  # answered after ``slow_seconds``
    dropped: float = 0.0  # the connection is closed with no answer
    retry_after: int = 1
    slow_seconds: float = 1.5
    # Spared by the shares: what start-up needs (without it the bot exits, by design) and polling.
    # The command menu is not: the bot sets it in the background, trying again.
    spare: frozenset[str] = frozenset({"getUpdates", "getMe", *WEBHOOK_METHODS})
    seed: int = 0
    injected: dict[str, int] = field(default_factory=dict)
    always: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        unknown = set(self.always.values()) - ALWAYS
        if unknown:
            raise ValueError(f"no such fault: {sorted(unknown)}")

    def draw(self, method: str) -> str | None:
        """The fault this request gets, if any (counted in ``injected``)."""
        if method in self.always:
            kind = self.always[method]
            self.injected[kind] = self.injected.get(kind, 0) + 1
            return kind
        if method in self.spare:
            return None
        roll = self._random.random()
        for kind in ("rate_limited", "server_error", "slow", "dropped"):
            share = getattr(self, kind)
            if roll < share:
                self.injected[kind] = self.injected.get(kind, 0) + 1
                return kind
            roll -= share
        return None


class Emulator:
    """Serves ``world`` at ``http://127.0.0.1:<port>/bot<token>/<method>``; with ``limits``, the
    world enforces Telegram's rate limits (429 with retry_after, see ``faketg.limits``)."""

    def __init__(
        self,
        world: World,
        faults: Faults | None = None,
        tokens: frozenset[str] | None = None,
        limits: FloodLimits | None = None,
    ) -> None:
        self.world = world
        if limits is not None:
            world.limits = limits
        self.tokens = tokens  # the tokens Telegram accepts (None: any)
        self.faults = faults or Faults()
        self._updates = asyncio.Condition()
        self.taken_offset = 0  # updates below it are taken (by the bot's getUpdates, or its webhook)
        self.webhook = WebhookDelivery(world, self._updates, self._taken)
        self.polls = 0
        self._ended = 0  # long polls ended so far by ``end_polls``: a poll begun before one ends
        self.hurry = False  # answer long polls at once (a bot shutting down should not wait for one)
        self.in_flight = 0  # requests being answered now (getUpdates aside)
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(
        self, port: int = 0, host: str = "127.0.0.1", more: Callable[[web.Application], None] | None = None
    ) -> str:
        """Serve on ``port`` (0: any free one); ``more`` may add routes (the sandbox's page)."""
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        if more is not None:
            more(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        assert server is not None and server.sockets
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        return self.url

    async def stop(self) -> None:
        await self.webhook.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def notify(self) -> None:
        """New updates are in the world: wake the bot's long poll."""
        async with self._updates:
            self._updates.notify_all()

    async def deliver(self, update: JSON, quiet: float = 0.15, timeout: float = 30.0) -> None:
        """Hand ``update`` to the bot and wait until it has been handled: taken by the bot's poll (or
        its webhook), its button press (if any) answered, and the bot quiet for ``quiet`` seconds."""
        await self.notify()
        update_id = int(update["update_id"])
        query = update.get("callback_query")
        query_id = str(query["id"]) if isinstance(query, dict) else None
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout
        while loop.time() < give_up:
            taken = self.taken_offset > update_id
            answered = query_id is None or query_id not in self.world.open_queries
            last = self.world.last_request_at(exclude="getUpdates")
            if taken and answered and self.in_flight == 0 and self.world.clock() - last >= quiet:
                return
            await asyncio.sleep(0.02)
        raise TimeoutError(f"the bot did not handle update {update_id} in {timeout} s")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["method"] == "getUpdates":
            return await self._answer(request)
        self.in_flight += 1
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        if self.tokens is not None and request.match_info["token"] not in self.tokens:
            return _error(ApiError(401, "Unauthorized"))
        params = await _params(request)
        fault = self.faults.draw(method)
        if fault is not None and fault != "at_once":
            self.world.record(method, params, error=fault)
        if fault == "dropped":
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=500)
        if fault == "slow":
            await asyncio.sleep(self.faults.slow_seconds)
        if fault == "rate_limited":
            return _error(
                ApiError(
                    429,
                    f"Too Many Requests: retry after {self.faults.retry_after}",
                    {"retry_after": self.faults.retry_after},
                )
            )
        if fault == "server_error":
            return _error(ApiError(502, "Bad Gateway"))
        if fault == "internal_error":
            return _error(ApiError(500, "Internal Server Error"))
        try:
            if method == "getUpdates":
                self.webhook.refuse_polling()
                return await self._get_updates(params, long_poll=fault != "at_once")
            if method in WEBHOOK_METHODS:
                result = self.webhook.call(method, params)
                await self.notify()  # a webhook set: what is pending goes to it now
            else:
                result = self.world.call(method, params)
        except ApiError as error:
            return _error(error)
        return web.json_response({"ok": True, "result": result})

    async def _get_updates(self, params: JSON, long_poll: bool = True) -> web.Response:
        """With ``long_poll``, held until an update is pending or the timeout asked for is over."""
        offset, ended = int(params.get("offset") or 0), self._ended
        self.taken_offset, self.polls = max(self.taken_offset, offset), self.polls + 1
        wait = min(float(params.get("timeout") or 0), LONG_POLL_LIMIT) if long_poll else 0.0
        async with self._updates:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._updates.wait_for(lambda: self._ended > ended or self._waiting(offset)), wait
                )
        return web.json_response({"ok": True, "result": self.world.call("getUpdates", params)})

    async def end_polls(self) -> None:
        """Answer the long polls in flight now, with what is pending (maybe nothing), as when a
        long poll's time is up: the next poll meets whatever faults are switched on by then."""
        self._ended += 1
        await self.notify()

    async def release_polls(self) -> None:
        """Answer every long poll now, and the next ones at once."""
        self.hurry = True
        await self.notify()

    def _taken(self, update_id: int) -> None:
        """The webhook's bot took this update (or it was dropped): as an offset past it would."""
        self.taken_offset = max(self.taken_offset, update_id + 1)
        self.world.updates = [u for u in self.world.updates if int(u["update_id"]) > update_id]

    def _waiting(self, offset: int) -> bool:
        return self.hurry or any(int(update["update_id"]) >= offset for update in self.world.updates)


async def _params(request: web.Request) -> JSON:
    params: JSON = dict(request.query)
    if request.content_type == "application/json":
        params.update(await request.json())
        return params
    if request.can_read_body:
        for key, value in (await request.post()).items():
            if isinstance(value, str):
                params[key] = value if key in TEXT_FIELDS else _json_or_text(value)
    return params


def _json_or_text(value: str) -> object:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _error(error: ApiError) -> web.Response:
    body: JSON = {"ok": False, "error_code": error.code, "description": error.description}
    if error.parameters:
        body["parameters"] = error.parameters
    return web.json_response(body, status=error.code)
