"""The Mini App's HTTP routes, added to the bot's own aiohttp app (``bot/web/server.py``; the sandbox's).

Under one path prefix (``/miniapp/`` unless ``PAIJU_WEBAPP_URL`` names another):

* ``GET  <prefix>``              the page; ``GET <prefix>static/...`` its script, style and icons;
* ``GET  <prefix>api/state``     the table as the asking person may see it (``?table=<id>``);
* ``POST <prefix>api/ticket``    a ticket for the event stream (``?table=<id>``): ``{"ticket"}``;
* ``GET  <prefix>api/events``    the table pushed at every change (Server-Sent Events,
                                 ``?table=<id>&ticket=<ticket>``);
* ``POST <prefix>api/act``       a press: ``{"table", "round", "action", "arg"}``;
* ``GET  <prefix>api/replay``    a finished round's replay (``?table=<id>&round=<no>``:
                                 ``bot/web/miniapp/replays.py``);
* ``POST <prefix>api/watch``     a visible page's heartbeat, or its being hidden, and the turn it
                                 shows the person as theirs: ``{"table", "visible", "turn"}``
                                 (``bot/web/miniapp/watching.py``, ``bot/send/watched.py``).

Every API request but the stream carries Telegram's signed initData in the ``X-Telegram-Init-Data``
header, never in the URL (which proxies write to their access logs): unsigned, forged or stale
gets 401; a table other than the one the app was opened for, or that the person may not see, 403.
The stream, which cannot send headers, takes a ticket instead (``streams.Tickets``: seconds, one
person's one table, once). What one person can cost is bounded: their open streams
(``streams.StreamLimits``) and the questions to Telegram they cause (``members.Members``); past
that they are refused (429 or 503 with Retry-After), and refusals are logged at a bounded rate.
Acting goes through ``bot.tables.acting.act``: the same path as a button of the table message.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from telegram import Bot

from bot.botdata import App
from bot.display.i18n import t
from bot.display.views.summary import SummaryJSON, summary_card
from bot.model import callbacks
from bot.model.live_table import LiveTable
from bot.settings import DEFAULT_LANGUAGE
from bot.tables.acting import Actor, Refused, act, refusal_text
from bot.tables.runtime import Runtime
from bot.web.miniapp import replays
from bot.web.miniapp.auth import InvalidInitData, WebAppUser, validate
from bot.web.miniapp.elsewhere import Elsewhere
from bot.web.miniapp.hub import Hub, Subscriber
from bot.web.miniapp.members import Busy, Members
from bot.web.miniapp.streams import (
    LIFETIME,
    RETRY_AFTER,
    WRITE_TIMEOUT,
    Full,
    StreamLimits,
    Tickets,
)
from bot.web.miniapp.watching import HEARTBEAT
from bot.web.refusal_log import RefusalLog
from games.errors import RuleError
from storage.jsontext import compact_json

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
HEADER = "X-Telegram-Init-Data"
TELEGRAM_JS = '<script src="https://telegram.org/js/telegram-web-app.js"></script>'
RENEW = b"event: renew\ndata: {}\n\n"  # a stream's last event when its LIFETIME is up
KEEPALIVE = 15.0  # seconds between comments on a quiet event stream (proxies close idle ones;
# a page gone away is noticed at the next write)
_ACTION = re.compile(r"^[a-z_]{1,16}$", re.ASCII)
_ARG = re.compile(r"^[0-9]{1,16}$", re.ASCII)
WATCH_BODY = 256  # bytes of a heartbeat's body at most (it needs some 50)


class MiniApp:
    """The routes and what they share: the bot (found when the first request comes: the sandbox
    adds the routes before it builds the bot), its token, the hub of open pages, the tickets, the
    membership answers. ``checker``: the bot that asks Telegram about memberships, with its own
    connections (``members.checking_bot``; opened and closed with the server); None: the game's
    bot (the sandbox's and the tests' fake Telegram, which has no pool to protect)."""

    def __init__(
        self,
        application: Callable[[], App],
        token: str,
        prefix: str = "/miniapp/",
        *,
        telegram_js: bool = True,
        clock: Callable[[], float] = time.time,
        checker: Bot | None = None,
        limits: StreamLimits | None = None,
    ) -> None:
        self.application = application
        self.token = token
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"
        self.telegram_js = telegram_js
        self.clock = clock
        self.hub = Hub(clock, limits or StreamLimits.for_this_process())
        self.checker = checker
        self.members = Members(lambda: self.checker or self.runtime().bot, clock)
        self.tickets = Tickets(clock, token)
        self.refusals = RefusalLog(log)
        self.stopping = asyncio.Event()
        self.elsewhere = Elsewhere()  # the worker holding a table, when several share the bot

    def add_routes(self, app: web.Application) -> None:
        prefix = self.prefix
        app.router.add_get(prefix, self.page)
        app.router.add_static(prefix + "static/", STATIC)
        app.router.add_get(prefix + "api/state", self.state)
        app.router.add_post(prefix + "api/ticket", self.ticket)
        app.router.add_get(prefix + "api/events", self.events)
        app.router.add_post(prefix + "api/act", self.act)
        app.router.add_get(prefix + replays.ROUTE, self.replay)  # 回放: a finished round
        app.router.add_post(prefix + "api/watch", self.watch)  # a visible page: its turns told there
        app.on_startup.append(self._startup)
        app.on_shutdown.append(self._shutdown)
        app.on_cleanup.append(self._cleanup)

    async def _startup(self, _app: web.Application) -> None:
        if self.checker is not None:  # (its requests only: getMe was asked by the game's bot)
            await self.checker.request.initialize()

    async def _shutdown(self, _app: web.Application) -> None:
        self.stopping.set()
        for pages in list(self.hub.open.values()):
            for page in pages:
                page.ready.set()

    async def _cleanup(self, _app: web.Application) -> None:
        await self.elsewhere.close()
        if self.checker is not None:
            await self.checker.request.shutdown()

    def refuse(
        self, status: int, code: str, text: str, cause: str, retry_after: int | None = None
    ) -> web.HTTPException:
        """The refusal to send, counted in the log (a line per cause a minute, not per request)."""
        self.refusals.refused(f"Mini App {code}: {cause}")
        refusal = _error(status, code, text)
        if retry_after is not None:
            refusal.headers["Retry-After"] = str(retry_after)
            refusal.force_close()  # the connection too: a refused flood holds no open files
        return refusal

    # -- who asks, and what they may see --------------------------------------------------------
    def runtime(self) -> Runtime:
        runtime = self.application().bot_data.runtime
        if runtime is None:
            raise web.HTTPServiceUnavailable(text="the bot is starting")
        if runtime.watchers is not self.hub:
            runtime.watchers = self.hub
            self.hub.zone = runtime.zone
        return runtime

    def who(self, request: web.Request) -> WebAppUser:
        if "init" in request.query:  # a URL is written to access logs: initData never goes there
            raise self.refuse(
                400, "bad_request", "initData goes in the X-Telegram-Init-Data header", "initData in a URL"
            )
        init_data = request.headers.get(HEADER, "")
        try:
            return validate(init_data, self.token, self.clock())
        except InvalidInitData as error:
            raise self.refuse(401, "unauthorized", str(error), f"initData {error}") from None

    async def table_for(self, request: web.Request, person: WebAppUser, table_text: str) -> LiveTable:
        """The table the app was opened for (its link's ``startapp=t<id>``), if ``person`` may see it."""
        if not _is_table(table_text) or person.start_param != f"t{table_text}":
            raise self.refuse(403, "forbidden", "not the table this app was opened for", "another table")
        runtime = self.runtime()
        live = runtime.tables.by_id(int(table_text))
        if live is None:
            language = await self.language(runtime, person)
            card = await self.summary_card(runtime, person, int(table_text), language)
            raise _error(404, "table_over", t(language, "miniapp.closed"), summary=card)
        if not await self.may_see(live, person):
            raise self.refuse(403, "forbidden", "not a member of the table's group", "not a member")
        return live

    async def summary_card(
        self, runtime: Runtime, person: WebAppUser, table_id: int, language: str
    ) -> SummaryJSON | None:
        """The 总结算 of a table that has ended, for whoever may see it (who played there, the
        members of its group); None for a table never played, still open elsewhere, or unknown."""
        summary = await runtime.store.table_summary(table_id)
        if summary is None or not summary.closed or not summary.played:
            return None
        if all(line.person_id != person.id for line in summary.nets):
            try:
                if not await self.members.is_member(summary.chat_id, person.id):
                    return None
            except Busy:
                return None  # (said as the table being over: its card is not worth a refusal)
        return summary_card(summary, language, runtime.zone)

    async def may_see(self, live: LiveTable, person: WebAppUser) -> bool:
        """The seated, those the table knows, and the group's members (asked at a bounded cost)."""
        if person.id in live.view.names or live.engine.core.seat_of(person.id) is not None:
            return True
        try:
            return await self.members.is_member(live.chat_id, person.id)
        except Busy as busy:
            busy_text = t(await self.language(self.runtime(), person), "miniapp.busy")
            raise self.refuse(503, "busy", busy_text, "membership checks busy", busy.retry_after) from None

    async def language(self, runtime: Runtime, person: WebAppUser) -> str:
        return await runtime.preferences.person_language(person.id, person.language_code)

    # -- the routes -----------------------------------------------------------------------------
    async def page(self, _request: web.Request) -> web.Response:
        text = (STATIC / "index.html").read_text(encoding="utf-8")
        text = text.replace("<!--telegram-web-app-->", TELEGRAM_JS if self.telegram_js else "")
        # What to say when opened without Telegram's initData: before any person is known, in the
        # bot's language and English.
        try:
            language = self.runtime().settings.language
        except web.HTTPException:  # not started yet (the sandbox adds the routes before the bot)
            language = DEFAULT_LANGUAGE
        said = " · ".join(t(code, "miniapp.unauthorized") for code in dict.fromkeys([language, "en"]))
        text = text.replace("<body>", f'<body data-unauthorized="{html.escape(said)}">')
        return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-cache"})

    async def held_elsewhere(self, request: web.Request, table_text: str) -> web.StreamResponse | None:
        """The answer of the worker holding the table, when another one does
        (bot/web/miniapp/elsewhere.py)."""
        if not _is_table(table_text):
            return None
        runtime = self.runtime()
        if runtime.tables.by_id(int(table_text)) is not None:
            return None
        return await self.elsewhere.answer(request, self.application().bot_data.worker, int(table_text))

    async def state(self, request: web.Request) -> web.StreamResponse:
        person = self.who(request)
        if (passed_on := await self.held_elsewhere(request, request.query.get("table", ""))) is not None:
            return passed_on
        live = await self.table_for(request, person, request.query.get("table", ""))
        view = self.hub.view(live, person.id, await self.language(self.runtime(), person))
        return web.Response(text=view, content_type="application/json")

    async def ticket(self, request: web.Request) -> web.StreamResponse:
        """A ticket that opens one event stream, for a little while (the page asks for it at once)."""
        person = self.who(request)
        if (passed_on := await self.held_elsewhere(request, request.query.get("table", ""))) is not None:
            return passed_on  # (the owner gives the ticket, and serves the stream it opens)
        live = await self.table_for(request, person, request.query.get("table", ""))
        language = await self.language(self.runtime(), person)
        try:
            self.hub.room_for(person.id, live)  # (said now: the stream's refusal is not readable)
            code = self.tickets.give(person.id, live.table_id, language)
        except Full as full:
            raise self.full(full) from None
        return web.json_response({"ticket": code}, headers={"Cache-Control": "no-store"})

    def full(self, full: Full) -> web.HTTPException:
        return self.refuse(full.status, "full", "too many open pages: try again later", full.why, RETRY_AFTER)

    async def events(self, request: web.Request) -> web.StreamResponse:
        if "init" in request.query:
            self.who(request)  # refused: initData in a URL
        table_text, code = request.query.get("table", ""), request.query.get("ticket", "")
        if (
            _is_table(table_text)
            and self.tickets.signed(code, int(table_text))
            and (passed_on := await self.held_elsewhere(request, table_text)) is not None
        ):
            return passed_on  # (only a ticket a worker gave: anyone may ask for a stream)
        ticket = self.tickets.use(code, int(table_text)) if _is_table(table_text) else None
        if ticket is None:
            raise self.refuse(
                401, "unauthorized", "no ticket, or a used or old one", "stream without a good ticket"
            )
        live = self.runtime().tables.by_id(ticket.table)
        if live is None:
            raise _error(404, "table_over", t(ticket.language, "miniapp.closed"))
        page = Subscriber(live.table_id, ticket.person, ticket.language)
        try:
            self.hub.subscribe(page, live)
        except Full as full:
            raise self.full(full) from None
        try:
            return await self.stream(request, live, page)
        finally:
            self.hub.unsubscribe(page)
            if not self.hub.watching(page.table_id, page.person):  # (its prompt in its grace goes now)
                with contextlib.suppress(web.HTTPException):  # (no runtime: the bot is stopping)
                    self.runtime().presenter.stopped_watching(page.table_id, page.person)

    async def stream(self, request: web.Request, live: LiveTable, page: Subscriber) -> web.StreamResponse:
        """The page's stream, until it goes away, stops reading, or has been open ``LIFETIME``
        seconds (then the page opens another: who it is is checked again)."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",  # nginx: pass each event on at once
            }
        )
        loop = asyncio.get_running_loop()
        until = loop.time() + LIFETIME
        try:
            await response.prepare(request)
            # The table as it is now: a page that reconnects (after sleep, a new network) catches up.
            page.offer(self.hub.view(live, page.person, page.language))
            while not self.stopping.is_set() and loop.time() < until:
                payload = await page.next(min(KEEPALIVE, max(until - loop.time(), 0.0)))
                if self.stopping.is_set():
                    break
                async with asyncio.timeout(WRITE_TIMEOUT):  # a page that does not read is let go
                    await response.write(
                        b": ping\n\n" if payload is None else f"data: {payload}\n\n".encode()
                    )
            if not self.stopping.is_set():  # its time is up: the page opens the next one at once
                async with asyncio.timeout(WRITE_TIMEOUT):
                    await response.write(RENEW)
        except (ConnectionError, TimeoutError):  # the page went away, or stopped reading
            if request.transport is not None:
                request.transport.abort()  # (closing would wait for the page to read what is sent)
        return response

    async def replay(self, request: web.Request) -> web.StreamResponse:
        return await replays.replay(self, request)

    async def watch(self, request: web.Request) -> web.StreamResponse:
        """A heartbeat of a visible page (``visible``), or its being hidden; ``turn``: the engine's
        timer of the turn it shows as the person's own (the turn is told there: its DM prompt in its
        grace is not sent). Hidden, the person's DM is brought up to date at once (their prompt, if
        it is their turn)."""
        person = self.who(request)
        if not self.hub.heartbeats.allowed(person.id):
            raise self.refuse(429, "too_many", "too many heartbeats", "a flood of heartbeats", 1)
        if request.content_length is None or request.content_length > WATCH_BODY:
            raise self.too_big()  # (a page's fetch names its length: a chunked body is not a heartbeat)
        raw = await request.read()  # (kept: passed on as it is to the worker holding the table)
        try:
            body = json.loads(raw)
            table, visible, turn = str(body["table"]), body["visible"], body.get("turn")
            if not isinstance(visible, bool) or not (turn is None or _is_timer(turn)):
                raise ValueError("visible is true or false; turn a timer or null")
        except (ValueError, KeyError, TypeError, RecursionError):
            raise self.refuse(
                400, "bad_request", "table, visible and turn, please", "a malformed heartbeat"
            ) from None
        if (passed_on := await self.held_elsewhere(request, table)) is not None:
            return passed_on
        live = await self.table_for(request, person, table)
        runtime = self.runtime()
        if visible:
            self.hub.heartbeats.beat(live.table_id, person.id)
            if turn is not None:
                runtime.presenter.turn_seen(live, person.id, turn)
        else:
            self.hub.heartbeats.hidden(live.table_id, person.id)
            runtime.presenter.stopped_watching(live.table_id, person.id)
            if person.id in live.seated():  # its prompt, if it is their turn, as a new DM now
                async with runtime.tables.lock(live.chat_id):
                    if runtime.tables.get(live.chat_id) is live:
                        await runtime.send_private(live, [person.id])
        return web.json_response({"ok": True, "every": HEARTBEAT}, headers={"Cache-Control": "no-store"})

    def too_big(self) -> web.HTTPException:
        self.refusals.refused("Mini App too_big: a big heartbeat")
        return web.HTTPRequestEntityTooLarge(
            max_size=WATCH_BODY,
            actual_size=WATCH_BODY + 1,
            text=compact_json({"error": "too_big", "text": "a heartbeat is a few bytes"}),
            content_type="application/json",
        )

    async def act(self, request: web.Request) -> web.StreamResponse:
        person = self.who(request)
        try:
            body = json.loads(await request.read())  # bytes: whatever charset the request names
            table, round_no = str(body["table"]), int(body["round"])
            action, arg = str(body["action"]), body.get("arg")
        # (JSON's Infinity is no round; a body nested thousands deep is no action)
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
            raise self.refuse(
                400, "bad_request", "table, round and action, please", "a malformed action"
            ) from None
        if (passed_on := await self.held_elsewhere(request, table)) is not None:
            return passed_on
        live = await self.table_for(request, person, table)
        arg_text = None if arg is None else str(arg)
        if not _ACTION.fullmatch(action) or (arg_text is not None and not _ARG.fullmatch(arg_text)):
            raise self.refuse(400, "bad_request", "no such action", "no such action")
        press = callbacks.Press(live.game, live.table_id, round_no, action, arg_text)
        runtime = self.runtime()
        language = await self.language(runtime, person)
        actor = Actor.named(
            person.id,
            person.first_name or str(person.id),
            person.last_name or None,
            person.username or None,
            person.language_code,
        )
        try:
            text, alert = await act(runtime, live.chat_id, press, actor, language, "leave.confirm_app")
        except (Refused, RuleError) as error:
            confirm = isinstance(error, Refused) and error.key.startswith("leave.confirm_app")
            return web.json_response(
                {"ok": False, "confirm": confirm, "text": _plain(refusal_text(language, error))}, status=409
            )
        except Exception:
            log.exception("an action from the Mini App failed")
            return web.json_response({"ok": False, "text": t(language, "press.failed")}, status=500)
        return web.json_response({"ok": True, "text": _plain(text or ""), "alert": alert})


def _is_table(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 18  # (a table's id is a SQLite rowid)


def _is_timer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def _plain(text: str) -> str:
    """A message's text for the page (which shows text, not HTML)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def _error(status: int, code: str, text: str, **more: object) -> web.HTTPException:
    kinds = {
        400: web.HTTPBadRequest,
        401: web.HTTPUnauthorized,
        403: web.HTTPForbidden,
        404: web.HTTPNotFound,
        429: web.HTTPTooManyRequests,
        503: web.HTTPServiceUnavailable,
    }
    body = {"error": code, "text": text, **{key: found for key, found in more.items() if found is not None}}
    return kinds[status](text=compact_json(body), content_type="application/json")
