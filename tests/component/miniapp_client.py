"""The Mini App as its page talks to the bot's web app, for the in-process tests: initData signed
for a person and a table, the state and act routes, an event stream opened with its ticket and read
one event at a time.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer

from bot.display.views.common import MINI_APP
from bot.web.miniapp.auth import signed_for
from bot.web.miniapp.routes import HEADER
from bot.web.server import build_web_app
from faketg.harness import PEOPLE, TOKEN, make_world, start_bot, stop_bot

URL = "https://paiju.example/miniapp/"  # where the bot says the Mini App is served
API = "/miniapp/api/"
JSON = dict[str, object]
STRANGER = 77  # on Telegram, not in the group


@contextlib.asynccontextmanager
async def serving(path: str) -> AsyncIterator[tuple[Any, TestClient]]:
    """A bot (its database at ``path``) serving the Mini App, and a client of its web app."""
    world = make_world()
    world.add_person(STRANGER, "过客")
    bot = await start_bot(world, path, webapp_url=URL)
    client = TestClient(TestServer(build_web_app(bot.application, bot.runtime.settings)))
    await client.start_server()
    try:
        yield bot, client
    finally:
        await client.close()
        await stop_bot(bot)
        MINI_APP.set(None, None)  # no other test's table gets the button


def init(person: int, table: int, token: str = TOKEN, age: float = 0.0) -> str:
    """The initData Telegram would give ``person``'s page of ``table``, signed ``age`` seconds ago."""
    return signed_for(person, PEOPLE.get(person, "某人"), token, time.time() - age, start_param=f"t{table}")


async def state(client: TestClient, person: int, table: int) -> JSON:
    """What ``person``'s page shows of ``table`` (the state route, answered 200)."""
    response = await client.get(
        API + "state", params={"table": str(table)}, headers={HEADER: init(person, table)}
    )
    assert response.status == 200, await response.text()
    return await response.json()


async def post(
    client: TestClient,
    person: int,
    table: int,
    action: str,
    round_no: int,
    arg: str | None = None,
    headers: dict[str, str] | None = None,
) -> ClientResponse:
    """``person`` acts from the page (signed as themselves unless ``headers`` say otherwise)."""
    body = {"table": table, "round": round_no, "action": action, "arg": arg}
    return await client.post(
        API + "act", json=body, headers={HEADER: init(person, table)} if headers is None else headers
    )


async def events(client: TestClient, person: int, table: int) -> ClientResponse:
    """An open event stream of ``person``'s page: a ticket got with the initData, then the stream."""
    got = await client.post(
        API + "ticket", params={"table": str(table)}, headers={HEADER: init(person, table)}
    )
    assert got.status == 200, await got.text()
    ticket = (await got.json())["ticket"]
    return await client.get(API + "events", params={"table": str(table), "ticket": ticket})


async def read_event(stream: ClientResponse) -> JSON:
    """The next ``data:`` event of a Server-Sent Events stream, as JSON."""
    while True:
        line = await stream.content.readline()
        if line.startswith(b"data: "):
            return json.loads(line[6:])
