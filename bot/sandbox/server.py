"""``python -m bot sandbox``: the real bot against the fake Telegram, and a page on localhost that
looks and behaves like a Telegram group chat — so the bot can be tried without a token or internet.

One aiohttp server holds both: the Bot API emulator (``/bot<token>/...``, which the bot polls over
HTTP) and the page with its small JSON API (``/api/...``), which acts as the people.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import tempfile
from dataclasses import replace
from pathlib import Path

from aiohttp import web
from telegram import Update

from bot.app import build_application, close, prepare
from bot.settings import Settings
from faketg.server import Emulator
from faketg.world import BOT_ID, JSON, Message, World
from storage import hold_database

STATIC = Path(__file__).parent / "static"
GROUP_ID = -1_001_000_000_001
TOKEN = "100000:SANDBOX-TOKEN"
FIRST_PEOPLE = ("阿明", "小红", "阿强")


def make_world() -> World:
    world = World()
    for number, person_name in enumerate(FIRST_PEOPLE, 1):
        world.add_person(1000 + number, person_name)
    world.add_group(GROUP_ID, "牌局沙盒", list(world.people), admins=[1001])
    return world


class Sandbox:
    """The page's API: what one person sees, and what they do (write, press, join as someone new)."""

    def __init__(self, world: World, emulator: Emulator) -> None:
        self.world = world
        self.emulator = emulator
        self._ids = itertools.count(1000 + len(world.people) + 1)
        self._popups_seen: dict[int, int] = {}

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/", self.index)
        app.router.add_static("/static/", STATIC)
        app.router.add_get("/api/state", self.state)
        app.router.add_post("/api/send", self.send)
        app.router.add_post("/api/press", self.press)
        app.router.add_post("/api/people", self.add_person)

    async def index(self, _request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    def _person(self, request: web.Request, body: JSON | None = None) -> int:
        raw = (body or {}).get("as") or request.query.get("as") or next(iter(self.world.people))
        person = int(str(raw))
        if person not in self.world.people:
            raise web.HTTPNotFound(text="no such person")
        return person

    def _message(self, message: Message) -> JSON:
        from_bot = message.sender == BOT_ID
        rows = message.reply_markup.get("inline_keyboard", []) if message.reply_markup else []
        return {
            "id": message.message_id,
            "from": "Paiju" if from_bot else self.world.people[message.sender].first_name,
            "bot": from_bot,
            "text": message.text,
            "edited": message.edits > 0,
            "buttons": [
                [{"text": b["text"], "data": b.get("callback_data", "")} for b in row] for row in rows
            ],
        }

    async def state(self, request: web.Request) -> web.Response:
        person = self._person(request)
        popups = self.world.popups.get(person, [])
        seen = self._popups_seen.get(person, 0)
        self._popups_seen[person] = len(popups)
        return web.json_response(
            {
                "me": person,
                "people": [{"id": p.id, "name": p.first_name} for p in self.world.people.values()],
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
        self.world.add_person(person, person_name)
        self.world.chats[GROUP_ID].members.add(person)
        return web.json_response({"id": person, "name": person_name})


async def run(port: int, database: str, language: str) -> None:
    """Serve the sandbox until interrupted (``DatabaseInUse`` if another one runs on ``database``)."""
    hold_database(database).release()  # refused before taking the port; prepare() holds it
    world = make_world()
    emulator = Emulator(world)
    sandbox = Sandbox(world, emulator)
    url = await emulator.start(port, more=sandbox.routes)
    settings = replace(
        Settings(token=TOKEN),
        database=database,
        language=language,
        base_url=url,
        table_requests_per_minute=1000,
        owners=frozenset({1001}),
    )
    application = build_application(settings)
    await application.initialize()
    try:
        await prepare(application)
    except BaseException:
        await close(application)
        await application.shutdown()
        await emulator.stop()
        raise
    assert application.updater is not None
    await application.updater.start_polling(poll_interval=0, timeout=10, allowed_updates=Update.ALL_TYPES)
    await application.start()
    print(f"Paiju sandbox: open {url}/ in a browser (database: {database}). Ctrl-C stops it.", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await emulator.release_polls()
        with contextlib.suppress(Exception):
            await application.updater.stop()
        await application.stop()
        await close(application)
        await application.shutdown()
        await emulator.stop()


def main(port: int, fresh: bool, language: str) -> None:
    if fresh:
        folder = tempfile.mkdtemp(prefix="paiju-sandbox-")
        database = str(Path(folder) / "sandbox.sqlite3")
    else:
        database = "paiju-sandbox.sqlite3"
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(port, database, language))
