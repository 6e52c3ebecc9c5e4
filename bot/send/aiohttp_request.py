"""Talking to the Bot API over HTTP: aiohttp instead of PTB's httpx, with a second chance for
passing failures.

``AiohttpRequest`` is a ``telegram.request.BaseRequest`` on one ``aiohttp.ClientSession``: it does
what PTB's ``HTTPXRequest`` does for less CPU (benchmark 5, 100 tables without the rate limiter,
the same bot otherwise: 5.8 to 6.2 s of its CPU per 1,000 updates on httpx, 1.7 s on aiohttp).
``RetryingRequest`` adds the retries: python-telegram-bot retries a 429 (through its rate
limiter) but not a 5xx, a timeout or a dropped connection; a table message or a button answer lost
that way would leave a person waiting. So those are tried again, a few times, after a short pause.
(``getUpdates`` has its own ``PollingRequest``: the polling loop already retries; it only keeps a
server that does not long-poll from being polled in a busy loop.)
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp
import orjson
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import JSONDict, ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.telegram_facts import JSON_BODY

log = logging.getLogger(__name__)
PAUSES = (0.3, 1.0, 2.0)  # before the 2nd, 3rd and 4th try
# getUpdates answered with nothing before its long poll was over: QUICK_POLLS in a row are taken as
# they come (an answer cut short now and then is no busy loop), then one at most every POLL_EVERY s.
QUICK_POLLS = 3
POLL_EVERY = 1.0
EMPTY_ANSWER_MAX = 64  # bytes: an answer with an update is longer (no need to parse the others)
NOT_TWICE = frozenset({"sendMessage"})
POOL_FULL = (
    "Pool timeout: all connections in the connection pool are busy. The request was not sent to "
    "Telegram; consider a larger connection pool or a longer pool timeout."
)


# Told of every answer from the Bot API: the method, what was sent, the HTTP status (the metrics).
Observer = Callable[[str, RequestData | None, int], None]


class NotSent(TimedOut):
    """Timed out before the request left: no free connection in the pool, or none could be made."""


class Dropped(NetworkError):
    """The connection failed once the request may have left (reset, closed before the answer)."""


def may_have_arrived(error: NetworkError) -> bool:
    """Whether a failed request may have reached Telegram all the same (a timeout once sent, a
    connection dropped): a new message may show, its id never known. A 5xx, or a request that
    never left, is a definite failure: Telegram did nothing."""
    return isinstance(error, Dropped) or (isinstance(error, TimedOut) and not isinstance(error, NotSent))


class AiohttpRequest(BaseRequest):
    """PTB's ``BaseRequest`` over aiohttp, with ``HTTPXRequest``'s parameters and meaning.

    Timeouts (seconds, ``None``: no limit; each ``do_request`` argument left at ``DEFAULT_NONE``
    takes this instance's value): ``read_timeout``, the longest wait for data from the server;
    ``connect_timeout``, for making a connection; ``pool_timeout``, for a free connection when
    ``connection_pool_size`` requests are already in flight (then ``NotSent``, a ``TimedOut``).
    aiohttp has no timer for writing: a JSON body (all the bot sends but uploads) goes to the
    socket's buffer at once and the read timer starts right after it, so the instance's
    ``write_timeout`` is accepted (as by HTTPXRequest) but not applied. An upload, whose writing
    can take long, must finish as a whole within connect + write + read timeouts, write being
    ``media_write_timeout`` unless ``do_request`` is given one.

    Errors are mapped as PTB's: timeouts raise ``TimedOut``, other connection or HTTP client errors
    ``NetworkError``, with aiohttp's exception as the cause. ``proxy``: an ``http://`` proxy URL for
    every request (see :func:`env_proxy`). ``observe``: told of every answer (see ``Observer``).
    """

    def __init__(
        self,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
        proxy: str | None = None,
        observe: Observer | None = None,
    ) -> None:
        if connection_pool_size < 1:
            raise ValueError("connection_pool_size must be at least 1")
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout  # not applied: see above
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._proxy = proxy
        self.observe = observe  # (set after the Application is built: its metrics are in its bot_data)
        self._default_timeout = aiohttp.ClientTimeout(sock_read=read_timeout, sock_connect=connect_timeout)
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    @property
    def connection_pool_size(self) -> int:
        return self._pool_size

    async def initialize(self) -> None:
        """Open the session (a no-op when it is open): needs the running event loop."""
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size)
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self.USER_AGENT}, timeout=self._default_timeout
            )
            self._slots = asyncio.Semaphore(self._pool_size)

    @staticmethod
    def parse_json_payload(payload: bytes) -> JSONDict:
        """Telegram's answer, read by orjson (PTB's tip names this method as the one to change for
        that); what orjson refuses (bytes that are not UTF-8, JSON that is not) goes to PTB's own
        reading, which replaces such bytes or refuses the answer, as before."""
        try:
            parsed: JSONDict = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return BaseRequest.parse_json_payload(payload)
        return parsed

    async def shutdown(self) -> None:
        """Close the session and its connections; again, or before ``initialize``, does nothing."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        session, slots = self._session, self._slots
        if session is None or slots is None or session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        uploads = request_data is not None and request_data.contains_files
        defaults = isinstance(read_timeout, DefaultValue) and isinstance(connect_timeout, DefaultValue)
        if uploads or not defaults:
            timeout = self._timeout(uploads, read_timeout, write_timeout, connect_timeout)
        else:
            timeout = self._default_timeout
        data: aiohttp.FormData | bytes | None = None
        headers = None
        if request_data is not None and uploads:
            data = _multipart(request_data)
        elif request_data is not None:
            data, headers = _json_body(request_data), JSON_BODY
        if isinstance(pool_timeout, DefaultValue):
            pool_timeout = self._pool_timeout
        await _acquire(slots, pool_timeout)
        try:
            async with session.request(
                method, url, data=data, headers=headers, timeout=timeout, proxy=self._proxy
            ) as answer:
                payload = await answer.read()
            if self.observe is not None:
                self.observe(url.rsplit("/", 1)[-1], request_data, answer.status)
            return answer.status, payload
        except aiohttp.ConnectionTimeoutError as error:
            raise NotSent("Timed out while connecting: the request was not sent.") from error
        except TimeoutError as error:  # aiohttp's read timeout (or an upload's whole time) ran out
            raise TimedOut from error
        except (aiohttp.ClientError, OSError) as error:  # some quote the URL, which holds the token
            said = str(error).replace(url.rsplit("/", 1)[0], "<Bot API URL>")
            failed = NetworkError if isinstance(error, aiohttp.ClientConnectorError) else Dropped
            raise failed(f"aiohttp.{type(error).__name__}: {said}") from error
        finally:
            slots.release()

    def _timeout(
        self,
        uploads: bool,
        read: ODVInput[float],
        write: ODVInput[float],
        connect: ODVInput[float],
    ) -> aiohttp.ClientTimeout:
        read = self._read_timeout if isinstance(read, DefaultValue) else read
        connect = self._connect_timeout if isinstance(connect, DefaultValue) else connect
        total = None
        if uploads:
            if isinstance(write, DefaultValue):
                write = self._media_write_timeout
            if read is not None and write is not None and connect is not None:
                total = connect + write + read
        return aiohttp.ClientTimeout(total=total, sock_read=read, sock_connect=connect)


class RetryingRequest(AiohttpRequest):
    """``AiohttpRequest`` that tries a failed request up to 3 more times, after ``PAUSES``: on a 5xx,
    a dropped connection or a timeout, except a ``sendMessage`` that timed out once sent (it may
    have been delivered: never send a message twice). The last try's answer or error is returned.

    ``may_send`` (a worker's: whether its lease holds for sure) is asked before each try: when it
    says no, nothing goes out (``NotSent``), a retry after a pause included; another worker may own
    the chat by then."""

    may_send: Callable[[], bool] | None = None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        api_method = url.rsplit("/", 1)[-1]
        for pause in (*PAUSES, None):
            if self.may_send is not None and not self.may_send():
                raise NotSent(f"{api_method} not sent: this worker's lease is not sure")
            try:
                code, payload = await super().do_request(
                    url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
                )
            except NetworkError as error:  # a timeout or a dropped connection
                # (a dropped connection is most often a kept-alive one the server had closed: tried
                # again; a message that timed out once sent is never sent twice)
                sent = isinstance(error, TimedOut) and not isinstance(error, NotSent)
                if pause is None or (sent and api_method in NOT_TWICE):
                    raise
                log.debug("%s failed (%s): trying again", api_method, type(error).__name__)
            else:
                if code < 500 or pause is None:
                    return code, payload
                log.debug("%s answered %s: trying again", api_method, code)
            await asyncio.sleep(pause)
        raise AssertionError("unreachable: the last try returns or raises")


class PollingRequest(AiohttpRequest):
    """``AiohttpRequest`` for ``getUpdates``, at a bounded rate when the server does not long-poll.

    Telegram holds a poll until an update comes or the timeout asked for is over; a proxy or a local
    Bot API server set up wrong may answer at once with nothing, and PTB's polling loop would ask
    again at once: about 1,600 polls a second, most of a core. After ``QUICK_POLLS`` such answers in
    a row, each is held until ``POLL_EVERY`` seconds after its poll was sent (said once in the log),
    until a poll brings updates or waits its timeout out. An answer with updates, or an error (the
    polling loop backs off on those), is never held. Stopping the bot cancels a held poll."""

    _quick = 0  # empty answers in a row that came back before their long poll was over
    _told = False  # the log said so already

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        sent = loop.time()
        code, payload = await super().do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )
        hold = self.hold(code, payload, _long_poll(request_data), loop.time() - sent)
        if hold > 0:
            await asyncio.sleep(hold)
        return code, payload

    def hold(self, code: int, payload: bytes, asked: float, took: float) -> float:
        """The seconds to hold an answer that took ``took`` s to a poll that asked to be held up
        to ``asked`` s (0 for most)."""
        if not (code == 200 and took < asked and _empty(payload)):
            self._quick = 0
            return 0.0
        self._quick += 1
        if self._quick <= QUICK_POLLS or took >= POLL_EVERY:
            return 0.0
        if not self._told:
            self._told = True
            log.warning(
                "getUpdates answers at once with nothing: the server does not long-poll "
                "(a proxy or a local Bot API server?); polling at most once every %.0f s",
                POLL_EVERY,
            )
        return POLL_EVERY - took


def _long_poll(request_data: RequestData | None) -> float:
    """The seconds a getUpdates asked Telegram to hold it (0: answer at once)."""
    timeout = request_data.parameters.get("timeout") if request_data is not None else None
    return float(timeout) if isinstance(timeout, int | float) else 0.0


def _empty(payload: bytes) -> bool:
    """Whether a getUpdates answer holds no update (``{"ok":true,"result":[]}``)."""
    if len(payload) > EMPTY_ANSWER_MAX:
        return False
    try:
        result: object = json.loads(payload).get("result")
        return result == []
    except (ValueError, AttributeError):
        return False


def env_proxy(url: str) -> str | None:
    """The proxy that httpx would take from the environment for ``url`` (``<scheme>_proxy``, then
    ``all_proxy``, unless ``no_proxy`` names the host), read once instead of on every request."""
    target = urlsplit(url)
    if not target.hostname or proxy_bypass(target.hostname):
        return None
    proxies = getproxies()
    return proxies.get(target.scheme) or proxies.get("all")


async def _acquire(slots: asyncio.Semaphore, pool_timeout: float | None) -> None:
    if pool_timeout is None or not slots.locked():
        await slots.acquire()
        return
    try:
        async with asyncio.timeout(pool_timeout):
            await slots.acquire()
    except TimeoutError as error:
        raise NotSent(POOL_FULL) from error


def _json_body(request_data: RequestData) -> bytes:
    """The parameters as one JSON object (``application/json``, which the Bot API takes for every
    method but uploads: ``bot.telegram_facts.JSON_BODY``). A form would need each value JSON-encoded and
    then percent-encoded, byte by byte in Python: 9 bytes for each Chinese character, and the bot's
    most costly step in sending a message under load. orjson writes it as UTF-8 (3 bytes for a
    Chinese character); what it refuses (a text holding a lone surrogate, an integer past 64 bits)
    the standard library writes, as ASCII with escapes: still sent, never an encoding error."""
    try:
        return orjson.dumps(request_data.parameters)
    except orjson.JSONEncodeError:
        return json.dumps(request_data.parameters, separators=(",", ":")).encode()


def _multipart(request_data: RequestData) -> aiohttp.FormData:
    """The parameters as text parts and the files as file parts (``multipart/form-data``)."""
    form = aiohttp.FormData()
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form
