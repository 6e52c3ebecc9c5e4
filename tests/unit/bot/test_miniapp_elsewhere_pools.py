"""Passing the Mini App's requests on to the worker holding the table (bot/web/miniapp/elsewhere.py),
between real HTTP servers on localhost: the worker the pages reached (its routes hand every request
to ``Elsewhere``) and a stand-in for the owner's routes. Open streams, however many, never keep the
table's state or a press waiting for a connection; a page that stops reading a stream passed on is
let go after the write timeout, and the stream's connection to the owner with it."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer, make_mocked_request

from bot.web.miniapp import elsewhere
from bot.web.miniapp.elsewhere import PASSED_ON, Elsewhere
from tests.waiting import until

TABLE = 7
API = "/miniapp/api/"
OLD_POOL = 100  # aiohttp's connections a session at most, by default: what every request once shared
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Owner:
    """The stand-in for the worker holding the table: what it was asked, and its open streams."""

    streams: int = 0  # open now
    ended: int = 0  # streams over (their reader, here the passing worker, let go; or released)
    release: asyncio.Event = field(default_factory=asyncio.Event)  # the held streams end

    async def state(self, request: web.Request) -> web.StreamResponse:
        assert request.headers[PASSED_ON] == Reached.name
        return web.json_response({"table": int(request.query["table"]), "round": 1})

    async def act(self, request: web.Request) -> web.StreamResponse:
        return web.json_response({"ok": True, "action": (await request.json())["action"]})

    async def held(self, request: web.Request) -> web.StreamResponse:
        """A quiet stream, open until ``release``."""
        response = await self._opened(request)
        try:
            await self.release.wait()
        finally:
            self.streams -= 1
            self.ended += 1
        return response

    async def flood(self, request: web.Request) -> web.StreamResponse:
        """A stream that sends as fast as it is taken, until its reader lets go (a write fails, or the
        server stops the handler: the connection was closed)."""
        response = await self._opened(request)
        try:
            while True:
                await response.write(b": " + b"x" * 65536 + b"\n\n")
        except ConnectionError:
            pass
        finally:
            self.streams -= 1
            self.ended += 1
        return response

    async def _opened(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        await response.write(b": hello\n\n")
        self.streams += 1
        return response


class Reached:
    """The worker the pages reached, as ``Elsewhere`` sees a ``bot.cluster.workers.Worker``: the owner is
    another."""

    name, address = "reached", "http://127.0.0.1:9"

    def __init__(self, owner_address: str) -> None:
        self.owner_address = owner_address

    async def owner_of_table(self, table_id: int) -> str | None:
        return self.owner_address if table_id == TABLE else None


@dataclass
class Workers:
    pages: str  # the address the pages reach (the worker without the table)
    owner: Owner
    passed: Elsewhere
    answered: int = 0  # requests the reached worker's routes are done with


@asynccontextmanager
async def two_workers(events: Callable[[Owner], Handler]) -> AsyncIterator[Workers]:
    """The owner (its stream served by ``events(owner)``) and the reached worker passing on to it."""
    owner = Owner()
    owner_app = web.Application()
    owner_app.router.add_get(API + "state", owner.state)
    owner_app.router.add_post(API + "act", owner.act)
    owner_app.router.add_get(API + "events", events(owner))
    owner_server = TestServer(owner_app, host="127.0.0.1")
    await owner_server.start_server()
    worker = Reached(str(owner_server.make_url("")).rstrip("/"))
    passed = Elsewhere()
    reached_app = web.Application()
    workers: Workers | None = None

    async def through(request: web.Request) -> web.StreamResponse:
        try:
            answer = await passed.answer(request, worker, int(request.query.get("table", TABLE)))
            assert answer is not None, "passed on"
            return answer
        finally:
            assert workers is not None
            workers.answered += 1

    reached_app.router.add_get(API + "state", through)
    reached_app.router.add_post(API + "act", through)
    reached_app.router.add_get(API + "events", through)
    reached_server = TestServer(reached_app, host="127.0.0.1")
    await reached_server.start_server()
    workers = Workers(str(reached_server.make_url("")).rstrip("/"), owner, passed)
    try:
        yield workers
    finally:
        owner.release.set()
        await passed.close()
        await reached_server.close()
        await owner_server.close()


async def test_open_streams_past_the_old_pool_never_keep_the_state_or_a_press_waiting():
    """More streams passed on than the connections all requests once shared (aiohttp's default 100):
    each reaches the owner, and the table's state and a press, asked meanwhile, are answered (they
    once waited behind the streams for a connection, and got 503)."""
    streams = OLD_POOL + 10
    async with (
        two_workers(lambda owner: owner.held) as workers,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as pages,
    ):
        url = workers.pages + API
        opened = [
            asyncio.create_task(pages.get(url + "events", params={"table": str(TABLE), "ticket": str(n)}))
            for n in range(streams)
        ]
        try:
            await until(lambda: workers.owner.streams >= OLD_POOL, f"{OLD_POOL} streams held by the owner")

            state = await pages.get(url + "state", params={"table": str(TABLE)})
            assert state.status == 200, await state.text()
            assert await state.json() == {"table": TABLE, "round": 1}
            pressed = await pages.post(url + "act", json={"table": TABLE, "round": 1, "action": "call"})
            assert pressed.status == 200, await pressed.text()
            assert await pressed.json() == {"ok": True, "action": "call"}

            await until(lambda: workers.owner.streams == streams, f"all {streams} streams held by the owner")
            for response in await asyncio.gather(*opened):
                assert response.status == 200
                assert response.content_type == "text/event-stream"
                assert await response.content.readline() == b": hello\n"
        finally:
            workers.owner.release.set()
            for response in await asyncio.gather(*opened, return_exceptions=True):
                if isinstance(response, aiohttp.ClientResponse):
                    response.close()


async def test_a_page_that_stops_reading_is_let_go_and_the_owner_with_it(monkeypatch, caplog):
    """The page asks for the stream and reads nothing: once what is sent fills the buffers, a write to
    it waits ``WRITE_TIMEOUT`` seconds, then the pass-on ends (said once, no traceback) and lets go
    of its connection to the owner (whose stream ends)."""
    monkeypatch.setattr(elsewhere, "WRITE_TIMEOUT", 0.3)
    caplog.set_level(logging.INFO)
    async with two_workers(lambda owner: owner.flood) as workers:
        host, port = workers.pages.removeprefix("http://").split(":")
        loop = asyncio.get_running_loop()
        page = socket.socket()
        page.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (before connecting: a small window)
        page.setblocking(False)
        try:
            await loop.sock_connect(page, (host, int(port)))
            await loop.sock_sendall(
                page,
                f"GET {API}events?table={TABLE}&ticket=t HTTP/1.1\r\nHost: {host}\r\n"
                "Accept: text/event-stream\r\n\r\n".encode(),
            )  # and never a byte read

            await until(lambda: workers.answered == 1, "the pass-on let go of the page", timeout=15)
            await until(lambda: workers.owner.ended == 1, "the owner's stream let go of", timeout=15)
            assert workers.owner.streams == 0
        finally:
            page.close()
    said = [record for record in caplog.records if record.name == elsewhere.__name__]
    assert [record.levelno for record in said] == [logging.INFO], [record.getMessage() for record in said]
    assert "stopped reading" in said[0].getMessage()
    assert not [record for record in caplog.records if record.exc_info], "no traceback"


@pytest.mark.parametrize(
    ("method", "path", "stream"),
    [
        ("GET", "/miniapp/api/events", True),
        ("GET", "/miniapp/api/state", False),
        ("POST", "/miniapp/api/act", False),
    ],
)
def test_a_stream_is_told_by_its_route(method, path, stream):
    assert elsewhere.is_stream(make_mocked_request(method, path + f"?table={TABLE}")) is stream
