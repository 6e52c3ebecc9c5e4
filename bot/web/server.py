"""The bot's HTTP servers (aiohttp): the webhook and the Mini App; ``GET /healthz`` and ``GET /metrics``.

``build_web_app`` returns the ``web.Application`` with these routes; whatever else the bot serves
is added to it before ``WebServer.start``. It listens on ``PAIJU_HTTP_HOST`` (localhost unless told
otherwise). ``/healthz`` and ``/metrics`` (``PAIJU_METRICS``, off by default; ``local`` answers only
requests made from this machine and not passed on by a proxy) are on it too, unless
``PAIJU_METRICS_LISTEN`` gives them a server of their own (``build_ops_app``): then a reverse proxy
that forwards everything to the public server can never reach them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from bot.botdata import App
from bot.display.views.common import MINI_APP
from bot.settings import Settings
from bot.web import webhook
from bot.web.open_files import connections_cap
from bot.web.refusal_log import RefusalLog

log = logging.getLogger(__name__)
APPLICATION = web.AppKey("application", App)
SETTINGS = web.AppKey("settings", Settings)


# Headers a reverse proxy adds: a request that has one came from elsewhere, whatever its address.
FORWARDED = ("Forwarded", "X-Forwarded-For", "X-Real-IP")


def build_web_app(application: App, settings: Settings) -> web.Application:
    app = web.Application()
    app[APPLICATION], app[SETTINGS] = application, settings
    if settings.metrics_listen is None:
        _add_ops_routes(app, settings)
    if settings.webhook_url is not None:
        assert settings.webhook_secret, "the secret is chosen before the server is built"
        webhook.add_route(app, application, settings.webhook_path, settings.webhook_secret)
    MINI_APP.set(None, None)
    if settings.webapp_url is not None:
        from bot.send.aiohttp_request import AiohttpRequest
        from bot.web.miniapp.members import checking_bot  # (the Mini App's modules only when it is served)
        from bot.web.miniapp.routes import MiniApp

        prefix = urlsplit(settings.webapp_url).path or "/"
        # Its questions to Telegram on a pool of their own; a test's fake Telegram has none to keep.
        checker = checking_bot(settings) if isinstance(application.bot.request, AiohttpRequest) else None
        MiniApp(lambda: application, settings.token, prefix, checker=checker).add_routes(app)
        MINI_APP.set(application.bot.username, settings.webapp_name)
    return app


def build_ops_app(application: App, settings: Settings) -> web.Application:
    """``/healthz`` and ``/metrics`` alone, for ``PAIJU_METRICS_LISTEN``."""
    app = web.Application()
    app[APPLICATION], app[SETTINGS] = application, settings
    _add_ops_routes(app, settings)
    return app


def _add_ops_routes(app: web.Application, settings: Settings) -> None:
    app.router.add_get("/healthz", healthz)
    if settings.metrics != "off":
        app.router.add_get("/metrics", metrics)


async def healthz(request: web.Request) -> web.Response:
    """200 with a small JSON, or 503 with the same JSON naming what fails."""
    data = request.app[APPLICATION].bot_data
    healthy, report = await data.health.check(data.runtime, data.worker)
    return web.json_response(report, status=200 if healthy else 503)


async def metrics(request: web.Request) -> web.Response:
    if request.app[SETTINGS].metrics == "local" and not _from_this_machine(request):
        return web.Response(status=403, text="metrics are served to this machine only (PAIJU_METRICS)")
    data = request.app[APPLICATION].bot_data
    measured = data.metrics
    await measured.refresh(data.runtime, data.worker)
    body, content_type = measured.render(request.headers.get("Accept", ""))
    response = web.Response(body=body)
    response.headers["Content-Type"] = content_type
    return response


def _from_this_machine(request: web.Request) -> bool:
    if any(name in request.headers for name in FORWARDED):
        return False
    try:
        return request.remote is not None and ipaddress.ip_address(request.remote).is_loopback
    except ValueError:  # a Unix socket: only this machine reaches it
        return True


class WebServer:
    """Serves one ``web.Application`` on one address until stopped, holding at most ``cap``
    connections at once (``bot/web/open_files.py``), ``PER_ADDRESS`` of them from one address that is
    not this machine's (behind a reverse proxy every connection is this machine's: the proxy limits
    its clients), each closed after ``IDLE`` seconds without a request, the first one included."""

    def __init__(self, app: web.Application, cap: int | None = None, idle: float | None = None) -> None:
        # No access log: a line per post would drown the log. Requests that are not HTTP are
        # refused by aiohttp (400) and told to ``_HTTP_LOG``, which counts them (``_NotHttp``).
        idle = IDLE if idle is None else idle
        self.runner = web.AppRunner(app, access_log=None, keepalive_timeout=idle, logger=_HTTP_LOG)
        self.cap = connections_cap() if cap is None else cap

    async def start(self, host: str, port: int) -> None:
        await self.runner.setup()
        await _CappedSite(self.runner, host, port, self.cap).start()

    async def stop(self) -> None:
        """Stop taking requests; those being answered are finished first."""
        await self.runner.cleanup()


IDLE = 15.0  # seconds a connection may stay without a request (a stream being answered is not idle)
PER_ADDRESS = 64  # connections held at once for one address that is not this machine's
OPS_CAP = 16  # connections of the server of /healthz and /metrics alone (PAIJU_METRICS_LISTEN)
BUSY = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_refusals = RefusalLog(log)


class _NotHttp(logging.Filter):
    """aiohttp logs a traceback for each request it cannot parse (a byte that is not text in the
    request line or a header, TLS spoken to a plain port): counted as refusals instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            _refusals.refused("requests that are not HTTP (400)")
            return False
        return True


_HTTP_LOG = logging.getLogger("bot.http")
_HTTP_LOG.addFilter(_NotHttp())


class _CappedSite(web.TCPSite):
    """aiohttp's ``TCPSite`` (which has no limit of its own) with a connection past the caps
    answered 503 and closed at once: its file is given back before the next is accepted."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, cap: int) -> None:
        super().__init__(runner, host, port)
        self.cap = cap

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            lambda: _Gate(self, server),
            self._host,
            self._port,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
        )
        if self._server.sockets:
            self._bound_port = self._server.sockets[0].getsockname()[1]

    def refusal(self, server: web.Server, address: str | None) -> str | None:
        """Why a new connection from ``address`` is refused (None: it is taken)."""
        held = server.connections
        if len(held) >= self.cap:
            return f"connections past the HTTP server's {self.cap}"
        if address is None or _is_loopback(address):
            return None
        if sum(_address_of(handler.transport) == address for handler in held) >= PER_ADDRESS:
            return f"connections past {PER_ADDRESS} from one address"
        return None


class _Gate(asyncio.Protocol):
    """A new connection, handed to aiohttp's handler if the site takes it, else answered 503."""

    def __init__(self, site: _CappedSite, server: web.Server) -> None:
        self.site, self.server = site, server

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        refused = self.site.refusal(self.server, _address_of(transport))
        if refused is not None:
            _refusals.refused(refused)
            transport.write(BUSY)
            transport.close()
            return
        handler = self.server()
        transport.set_protocol(handler)  # from now on the loop tells aiohttp's handler
        handler.connection_made(transport)


def _address_of(transport: asyncio.BaseTransport | None) -> str | None:
    peer = transport.get_extra_info("peername") if transport is not None else None
    return str(peer[0]) if isinstance(peer, tuple) and peer else None


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
