"""The bot's HTTP server (``bot.web.server.WebServer``) on 127.0.0.1: a connection past its cap is
answered 503 at once; a connection that sends no request is closed after its idle time, so a
flood of idle connections holds the server for seconds, not for an hour; one address that is
not this machine's holds at most ``PER_ADDRESS`` connections."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from aiohttp import web

from bot.web.server import PER_ADDRESS, WebServer, _CappedSite
from tests.process.e2e.process import free_port

CAP = 5


async def ok(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def first_line(port: int, request: bytes = b"") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    return line


async def test_idle_connections_are_let_go_and_the_server_answers_again():
    app = web.Application()
    app.router.add_get("/healthz", ok)
    server, port = WebServer(app, cap=CAP, idle=0.5), free_port()
    await server.start("127.0.0.1", port)
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(CAP)]
    try:
        assert (await first_line(port)).startswith(b"HTTP/1.1 503")
        # the server closes each idle connection itself (the read ends) ...
        ended = await asyncio.wait_for(asyncio.gather(*(reader.read() for reader, _ in idle)), 10)
        assert ended == [b""] * CAP
        # ... and then answers again
        answer = await first_line(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200")
    finally:
        for _, writer in idle:
            writer.close()
        await server.stop()


def held(*addresses: str) -> SimpleNamespace:
    """A stand-in for aiohttp's Server: its connections, each with its peer's address."""
    transports = [SimpleNamespace(get_extra_info=lambda _name, a=a: (a, 1234)) for a in addresses]
    return SimpleNamespace(connections=[SimpleNamespace(transport=t) for t in transports])


def test_one_address_holds_a_bounded_share_unless_it_is_this_machine():
    site = _CappedSite.__new__(_CappedSite)
    site.cap = 10 * PER_ADDRESS
    crowd = held(*["203.0.113.7"] * PER_ADDRESS, "198.51.100.1")
    assert site.refusal(crowd, "203.0.113.7") == f"connections past {PER_ADDRESS} from one address"
    assert site.refusal(crowd, "198.51.100.1") is None
    assert site.refusal(held(*["127.0.0.1"] * PER_ADDRESS), "127.0.0.1") is None  # a reverse proxy
    full = held(*["::1"] * (10 * PER_ADDRESS))
    assert site.refusal(full, "::1") == f"connections past the HTTP server's {site.cap}"
