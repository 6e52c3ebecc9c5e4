"""The Mini App's HTTP routes, added to the bot's own aiohttp app (``bot/web.py``; the sandbox's).

Under one path prefix (``/miniapp/`` unless ``PAIJU_WEBAPP_URL`` names another):

* ``GET  <prefix>``              the page; ``GET <prefix>static/...`` its script, style and icons;
* ``GET  <prefix>api/state``     the table as the asking person may see it (``?table=<id>``);
* ``GET  <prefix>api/events``    the same, pushed at every change (Server-Sent Events);
* ``POST <prefix>api/act``       a press: ``{"table", "round", "action", "arg"}``.

Every API request carries Telegram's signed initData (the ``X-Telegram-Init-Data`` header, or
``?init=`` for the event stream, which cannot send headers): unsigned, forged or stale gets 401;
a table other than the one the app was opened for, or that the person may not see, gets 403.
Acting goes through ``bot.acting.act``: the same path as a button of the table message.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from telegram import User
from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError
from telegram.ext import Application

from bot import callbacks
from bot.acting import Refused, act, refusal_text
from bot.i18n import t
from bot.live import LiveTable
from bot.miniapp.auth import InvalidInitData, WebAppUser, validate
from bot.miniapp.hub import Hub, Subscriber, encode
from bot.miniapp.view import table_view
from bot.runtime import RUNTIME, Paiju
from bot.settings import DEFAULT_LANGUAGE
from games.errors import RuleError

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
HEADER = "X-Telegram-Init-Data"
TELEGRAM_JS = '<script src="https://telegram.org/js/telegram-web-app.js"></script>'
KEEPALIVE = 15.0  # seconds between comments on a quiet event stream (proxies close idle ones)
MEMBER_FOR = 300.0  # seconds a person's group membership is taken as known
MEMBERS = (
    ChatMemberStatus.MEMBER,
    ChatMemberStatus.ADMINISTRATOR,
    ChatMemberStatus.OWNER,
    ChatMemberStatus.RESTRICTED,
)
_ACTION = re.compile(r"^[a-z_]{1,16}$", re.ASCII)
_ARG = re.compile(r"^[0-9]{1,16}$", re.ASCII)


class MiniApp:
    """The routes and what they share: the bot (found when the first request comes: the sandbox
    adds the routes before it builds the bot), its token, the hub of open pages."""

    def __init__(
        self,
        application: Callable[[], Application],
        token: str,
        prefix: str = "/miniapp/",
        *,
        telegram_js: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.application = application
        self.token = token
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"
        self.telegram_js = telegram_js
        self.clock = clock
        self.hub = Hub(clock)
        self.members: dict[tuple[int, int], float] = {}  # (chat, person) -> when seen a member
        self.stopping = asyncio.Event()

    def add_routes(self, app: web.Application) -> None:
        prefix = self.prefix
        app.router.add_get(prefix, self.page)
        app.router.add_static(prefix + "static/", STATIC)
        app.router.add_get(prefix + "api/state", self.state)
        app.router.add_get(prefix + "api/events", self.events)
        app.router.add_post(prefix + "api/act", self.act)
        app.on_shutdown.append(self._shutdown)

    async def _shutdown(self, _app: web.Application) -> None:
        self.stopping.set()
        for pages in list(self.hub.open.values()):
            for page in pages:
                page.ready.set()

    # -- who asks, and what they may see --------------------------------------------------------
    def paiju(self) -> Paiju:
        paiju: Paiju | None = self.application().bot_data.get(RUNTIME)
        if paiju is None:
            raise web.HTTPServiceUnavailable(text="the bot is starting")
        if paiju.watchers is not self.hub:
            paiju.watchers = self.hub
        return paiju

    def who(self, request: web.Request) -> WebAppUser:
        init_data = request.headers.get(HEADER) or request.query.get("init", "")
        try:
            return validate(init_data, self.token, self.clock())
        except InvalidInitData as error:
            raise _error(401, "unauthorized", str(error)) from None

    async def table_for(self, request: web.Request, person: WebAppUser, table_text: str) -> LiveTable:
        """The table the app was opened for (its link's ``startapp=t<id>``), if ``person`` may see it."""
        if person.start_param != f"t{table_text}" or not table_text.isascii() or not table_text.isdigit():
            raise _error(403, "forbidden", "not the table this app was opened for")
        paiju = self.paiju()
        live = paiju.tables.by_id(int(table_text))
        if live is None:
            raise _error(404, "table_over", t(await self.language(paiju, person), "miniapp.closed"))
        if not await self.may_see(paiju, live, person.id):
            raise _error(403, "forbidden", "not a member of the table's group")
        return live

    async def may_see(self, paiju: Paiju, live: LiveTable, person: int) -> bool:
        """The seated, those the table knows, and the group's members (asked once in a while)."""
        if person in live.view.names or live.engine.core.seat_of(person) is not None:
            return True
        key, now = (live.chat_id, person), self.clock()
        if now - self.members.get(key, -MEMBER_FOR) < MEMBER_FOR:
            return True
        try:
            member = await paiju.bot.get_chat_member(live.chat_id, person)
        except TelegramError:
            return False
        if member.status not in MEMBERS:
            return False
        if len(self.members) > 10_000:
            self.members = {k: at for k, at in self.members.items() if now - at < MEMBER_FOR}
        self.members[key] = now
        return True

    async def language(self, paiju: Paiju, person: WebAppUser) -> str:
        return await paiju.person_language(person.id, person.language_code)

    # -- the routes -----------------------------------------------------------------------------
    async def page(self, _request: web.Request) -> web.Response:
        text = (STATIC / "index.html").read_text(encoding="utf-8")
        text = text.replace("<!--telegram-web-app-->", TELEGRAM_JS if self.telegram_js else "")
        # What to say when opened without Telegram's initData: before any person is known, in the
        # bot's language and English.
        try:
            language = self.paiju().settings.language
        except web.HTTPException:  # not started yet (the sandbox adds the routes before the bot)
            language = DEFAULT_LANGUAGE
        said = " · ".join(t(code, "miniapp.unauthorized") for code in dict.fromkeys([language, "en"]))
        text = text.replace("<body>", f'<body data-unauthorized="{html.escape(said)}">')
        return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-cache"})

    async def state(self, request: web.Request) -> web.Response:
        person = self.who(request)
        live = await self.table_for(request, person, request.query.get("table", ""))
        paiju = self.paiju()
        view = table_view(live, person.id, await self.language(paiju, person), self.clock())
        return web.Response(text=encode(view), content_type="application/json")

    async def events(self, request: web.Request) -> web.StreamResponse:
        person = self.who(request)
        live = await self.table_for(request, person, request.query.get("table", ""))
        paiju = self.paiju()
        page = Subscriber(live.table_id, person.id, await self.language(paiju, person))
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",  # nginx: pass each event on at once
            }
        )
        await response.prepare(request)
        self.hub.subscribe(page)
        try:
            # The table as it is now: a page that reconnects (after sleep, a new network) catches up.
            page.offer(encode(table_view(live, person.id, page.language, self.clock())))
            while not self.stopping.is_set():
                payload = await page.next(KEEPALIVE)
                if self.stopping.is_set():
                    break
                await response.write(b": ping\n\n" if payload is None else f"data: {payload}\n\n".encode())
        except ConnectionError:  # the page went away
            pass
        finally:
            self.hub.unsubscribe(page)
        return response

    async def act(self, request: web.Request) -> web.Response:
        person = self.who(request)
        try:
            body = await request.json()
            table, round_no = str(body["table"]), int(body["round"])
            action, arg = str(body["action"]), body.get("arg")
        except (ValueError, KeyError, TypeError):
            raise _error(400, "bad_request", "table, round and action, please") from None
        live = await self.table_for(request, person, table)
        arg_text = None if arg is None else str(arg)
        if not _ACTION.fullmatch(action) or (arg_text is not None and not _ARG.fullmatch(arg_text)):
            raise _error(400, "bad_request", "no such action")
        found = callbacks.Press(live.game, live.table_id, round_no, action, arg_text)
        paiju = self.paiju()
        application = self.application()
        language = await self.language(paiju, person)
        user = User(
            id=person.id,
            first_name=person.first_name or str(person.id),
            is_bot=False,
            last_name=person.last_name or None,
            username=person.username or None,
            language_code=person.language_code,
        )
        context = application.context_types.context(application, user_id=person.id)
        try:
            text, alert = await act(context, live.chat_id, found, user, language, "leave.confirm_app")
        except (Refused, RuleError) as error:
            confirm = isinstance(error, Refused) and error.key.startswith("leave.confirm_app")
            return web.json_response(
                {"ok": False, "confirm": confirm, "text": _plain(refusal_text(language, error))}, status=409
            )
        except Exception:
            log.exception("an action from the Mini App failed")
            return web.json_response({"ok": False, "text": t(language, "press.failed")}, status=500)
        return web.json_response({"ok": True, "text": _plain(text or ""), "alert": alert})


def _plain(text: str) -> str:
    """A message's text for the page (which shows text, not HTML)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def _error(status: int, code: str, text: str) -> web.HTTPException:
    kinds = {
        400: web.HTTPBadRequest,
        401: web.HTTPUnauthorized,
        403: web.HTTPForbidden,
        404: web.HTTPNotFound,
    }
    return kinds[status](text=encode({"error": code, "text": text}), content_type="application/json")
