"""``python -m bot sandbox``: the real bot against the fake Telegram, and a page on localhost that
looks and behaves like a Telegram group chat — so the bot can be tried without a token or internet.

One aiohttp server holds both: the Bot API emulator (``/bot<token>/...``, which the bot polls over
HTTP) and the page with its small JSON API (``/api/...``), which acts as the people. The page shows
what Telegram would: each message's time and "edited", whom it notified, and each person's unread
notifications until they look.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import re
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from aiohttp import web
from telegram import Update

from bot.app import build_application, close, listen, prepare, stop_listening
from bot.botdata import App
from bot.display.views.common import MINI_APP
from bot.settings import Settings
from bot.web.miniapp.auth import signed_for
from bot.web.miniapp.routes import MiniApp
from faketg.server import Emulator
from faketg.world import BOT_ID, JSON, Message, World
from storage import hold_database

STATIC = Path(__file__).parent / "static"
OWNERS = frozenset({1001})  # the bot's owner in the sandbox: may /cancel and refund (marked 🔑)
GROUP_ID = -1_001_000_000_001
TOKEN = "100000:SANDBOX-TOKEN"
FIRST_PEOPLE = ("阿明", "小红", "阿强")
DATABASE = "paiju-sandbox.sqlite3"
MINI_APP_NAME = "table"  # the Mini App's short name in the sandbox's links


class PortUnavailable(Exception):
    """The page's port cannot be listened on (another program has it)."""

    def __init__(self, port: int, reason: str) -> None:
        super().__init__(
            f"Port {port} cannot be used ({reason}): start the sandbox on another one, "
            f"e.g. with --port {port + 1}"
        )


def make_world(language: str = "zh-hans") -> World:
    """The group and its first people, whose Telegram apps speak the sandbox's language."""
    world = World()
    for number, person_name in enumerate(FIRST_PEOPLE, 1):
        world.add_person(1000 + number, person_name, language=language)
    world.add_group(GROUP_ID, "牌局沙盒", list(world.people), admins=[1001])
    return world


class Sandbox:
    """The page's API: what one person sees, and what they do (write, press, join as someone new)."""

    def __init__(self, world: World, emulator: Emulator, language: str = "zh-hans") -> None:
        self.world = world
        self.emulator = emulator
        self.language = language  # the page's own few words follow the bot's language
        self._ids = itertools.count(1000 + len(world.people) + 1)
        self._popups_seen: dict[int, int] = {}
        self._read: dict[tuple[int, int], int] = {}  # (person, chat) -> the last message they saw there
        self.application: App | None = None  # the bot, once built (the Mini App needs it)
        self.miniapp = MiniApp(self._application, TOKEN, "/miniapp/", telegram_js=False)

    def _application(self) -> App:
        if self.application is None:
            raise web.HTTPServiceUnavailable(text="the bot is starting")
        return self.application

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/", self.index)
        app.router.add_static("/static/", STATIC)
        app.router.add_get("/api/state", self.state)
        app.router.add_post("/api/send", self.send)
        app.router.add_post("/api/press", self.press)
        app.router.add_post("/api/people", self.add_person)
        app.router.add_get("/api/miniapp", self.miniapp_launch)
        self.miniapp.add_routes(app)

    async def miniapp_launch(self, request: web.Request) -> web.Response:
        """The signed initData Telegram would give the Mini App opened by ``as`` from a table's
        button (``table``, or ``start``: ``t<table>``) or a round's "▶ 回放" (``start``:
        ``r<table>_<round>``), signed with the sandbox's token, as Telegram signs with the bot's."""
        person = self._person(request)
        table, start = request.query.get("table", ""), request.query.get("start", "")
        if start and not re.fullmatch(r"t\d{1,18}|r\d{1,18}_\d{1,9}", start, re.ASCII):
            raise web.HTTPBadRequest(text="which table or round?")
        if not start and not (table.isascii() and table.isdigit()):
            raise web.HTTPBadRequest(text="which table?")
        extra = {"start_param": start or f"t{table}"}
        code = self.world.people[person].language_code
        if code:  # Telegram tells the Mini App the language of the person's app
            extra["language_code"] = code
        init_data = signed_for(person, self._name(person), TOKEN, time.time(), **extra)
        return web.json_response({"init_data": init_data, "app_name": MINI_APP_NAME})

    async def index(self, _request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    def _person(self, request: web.Request, body: JSON | None = None) -> int:
        raw = (body or {}).get("as") or request.query.get("as") or next(iter(self.world.people))
        person = int(str(raw))
        if person not in self.world.people:
            raise web.HTTPNotFound(text="no such person")
        return person

    def _name(self, person: int) -> str:
        return "Paiju" if person == BOT_ID else self.world.people[person].first_name

    def _quoted(self, message: Message) -> JSON | None:
        """The message ``message`` answers, as its bubble quotes it (gone: nothing)."""
        replied = self.world.messages.get((message.chat_id, message.reply_to or 0))
        if replied is None or replied.deleted:
            return None
        return {"from": self._name(replied.sender), "text": replied.text, "bot": replied.sender == BOT_ID}

    def _message(self, message: Message) -> JSON:
        rows = message.reply_markup.get("inline_keyboard", []) if message.reply_markup else []
        assert isinstance(rows, list)
        return {
            "id": message.message_id,
            "from": self._name(message.sender),
            "sender": message.sender,
            "bot": message.sender == BOT_ID,
            "text": message.text,
            "date": message.date,
            "edited": message.edit_date is not None,
            "notifies": sorted(message.notified),
            "reply": self._quoted(message),
            "buttons": [
                [{"text": b["text"], "data": b.get("callback_data", ""), "url": b.get("url")} for b in row]
                for row in rows
            ],
        }

    def _look(self, person: int, chat: int) -> None:
        """``person`` looks at ``chat``: everything in it so far is read."""
        shown = self.world.chat_messages(chat)
        if shown:
            self._read[(person, chat)] = shown[-1].message_id

    def _unread(self, person: int, chat: int) -> int:
        """How many messages in ``chat`` notified ``person`` since they last looked at it."""
        read = self._read.get((person, chat), 0)
        return sum(m.message_id > read and person in m.notified for m in self.world.chat_messages(chat))

    async def state(self, request: web.Request) -> web.Response:
        person = self._person(request)
        self._look(person, person if request.query.get("where") == "dm" else GROUP_ID)
        popups = self.world.popups.get(person, [])
        seen = self._popups_seen.get(person, 0)
        self._popups_seen[person] = len(popups)
        people = [
            {
                "id": p.id,
                "name": p.first_name,
                "started": p.started_bot,
                "owner": p.id in OWNERS,
                "unread": {"group": self._unread(p.id, GROUP_ID), "dm": self._unread(p.id, p.id)},
            }
            for p in self.world.people.values()
        ]
        return web.json_response(
            {
                "me": person,
                "language": self.language,
                "bot_username": self.world.bot["username"],
                "people": people,
                "group": {
                    "title": self.world.chats[GROUP_ID].title,
                    "messages": [self._message(m) for m in self.world.chat_messages(GROUP_ID)],
                },
                "dm": {"messages": [self._message(m) for m in self.world.chat_messages(person)]},
                "popups": [{"text": p.text, "alert": p.show_alert} for p in popups[seen:]],
            }
        )

    def _chat(self, body: JSON, person: int) -> int:
        return GROUP_ID if body.get("where") != "dm" else person

    async def send(self, request: web.Request) -> web.Response:
        body = await request.json()
        person = self._person(request, body)
        text = str(body.get("text", "")).strip()[:4096]
        if text:
            self.world.post(person, self._chat(body, person), text)
            await self.emulator.notify()
        return web.json_response({"ok": True})

    async def press(self, request: web.Request) -> web.Response:
        body = await request.json()
        person = self._person(request, body)
        chat = self._chat(body, person)
        if (chat, int(body["message_id"])) not in self.world.messages:
            raise web.HTTPNotFound(text="no such message")
        self.world.press(person, chat, int(body["message_id"]), str(body["data"]))
        await self.emulator.notify()
        return web.json_response({"ok": True})

    async def add_person(self, request: web.Request) -> web.Response:
        body = await request.json()
        person_name = " ".join(str(body.get("name", "")).split())[:32]
        if not person_name:
            raise web.HTTPBadRequest(text="a name, please")
        person = next(self._ids)
        started = bool(body.get("started", True))
        self.world.add_person(person, person_name, language=self.language, started=started)
        self.world.chats[GROUP_ID].members.add(person)
        return web.json_response({"id": person, "name": person_name})


def local_zone() -> str:
    """This machine's time zone (the browser beside it shows times in it), as an IANA name."""
    named = os.environ.get("TZ", "").lstrip(":")
    if not named:
        with contextlib.suppress(OSError):
            named = os.readlink("/etc/localtime").partition("zoneinfo/")[2]
    try:
        ZoneInfo(named or "UTC")
    except (ValueError, ZoneInfoNotFoundError):
        return "UTC"
    return named or "UTC"


async def run(port: int, database: str, language: str, seed: int | None = None) -> None:
    """Serve the sandbox until interrupted or terminated (``DatabaseInUse`` if another one runs on
    ``database``, ``PortUnavailable`` if ``port`` is taken)."""
    stopped = asyncio.Event()
    # Ctrl-C, SIGTERM and SIGHUP all stop it through the cleanup below. Ctrl-C is taken here too,
    # not left to asyncio.run: a process started with SIGINT ignored (inherited from its parent)
    # would never see it otherwise.
    endings = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_UNBLOCK, endings)
    for ending in endings:
        asyncio.get_running_loop().add_signal_handler(ending, stopped.set)
    hold_database(database).release()  # refused before taking the port; prepare() holds it
    world = make_world(language)
    emulator = Emulator(world)
    sandbox = Sandbox(world, emulator, language)
    try:
        url = await emulator.start(port, more=sandbox.routes)
    except OSError as error:
        await emulator.stop()
        raise PortUnavailable(port, os.strerror(error.errno) if error.errno else str(error)) from None
    settings = replace(
        Settings(token=TOKEN),
        database=database,
        language=language,
        base_url=url,
        table_requests_per_minute=1000,
        owners=OWNERS,
        timezone=local_zone(),  # deadlines in the clock the page shows its messages' times by
    )
    application = build_application(settings, rng=None if seed is None else random.Random(seed))
    await application.initialize()
    sandbox.application = application
    MINI_APP.set(application.bot.username, MINI_APP_NAME)  # the table's "open the table" button
    try:
        await prepare(application)
    except BaseException:
        await close(application)
        await application.shutdown()
        await emulator.stop()
        raise
    listen(application, Update.ALL_TYPES)
    await application.start()
    print(f"Paiju sandbox: open {url}/ in a browser (database: {database}). Ctrl-C stops it.", flush=True)
    try:
        await stopped.wait()
    finally:
        await emulator.release_polls()
        await stop_listening(application)
        await application.stop()
        await close(application)
        await application.shutdown()
        await emulator.stop()


@contextlib.contextmanager
def sandbox_database(fresh: bool) -> Iterator[str]:
    """The database file: the kept one, or (``fresh``) one in a temporary folder removed after."""
    if not fresh:
        yield DATABASE
        return
    with tempfile.TemporaryDirectory(prefix="paiju-sandbox-", ignore_cleanup_errors=True) as folder:
        yield str(Path(folder) / "sandbox.sqlite3")


def main(port: int, fresh: bool, language: str, seed: int | None = None) -> int:
    """Run the sandbox until Ctrl-C (or SIGTERM); the exit status (2: the port is not free)."""
    with sandbox_database(fresh) as database:
        try:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(run(port, database, language, seed))
        except PortUnavailable as error:
            print(error, file=sys.stderr)
            return 2
    return 0
