"""The Mini App with several workers: a page's requests about a table reach the worker holding it.

A page may reach any worker (the operator's proxy picks one). A worker that does not hold the
table a request is about passes it on to the worker that does (its address is saved with the
partition it claimed: ``PAIJU_WORKER_URL``) and passes the answer back, the event stream included,
as it comes: the owner serves the stream (it alone hears of the table's changes), so nothing needs
to be broadcast between workers. A request passed on once is never passed on again: if the table
moved meanwhile, the page is told to try again (503), and its next request finds the new owner.

An event stream holds its connection to the owner for as long as it is open (minutes): streams are
passed on over connections of their own, as many as the pages this worker may serve
(``streams.StreamLimits``: the README's caps), and the other requests (the state, a ticket, a
press) over theirs, which no number of open streams can take. A page that stops reading a stream
passed on is let go after ``WRITE_TIMEOUT`` seconds, as the owner lets go of one that reads from it
(routes.py), and the stream's connection to the owner with it.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
from aiohttp import web

from bot.cluster.workers import Worker
from bot.web.miniapp.streams import WRITE_TIMEOUT, StreamLimits

log = logging.getLogger(__name__)
PASSED_ON = "X-Paiju-Passed-On"  # a request one worker passed on to another (never passed on again)
KEPT_HEADERS = ("Content-Type", "X-Telegram-Init-Data")  # what the owner needs of the page's request
STREAM_HEADERS = ("Content-Type", "Cache-Control", "X-Accel-Buffering")
STREAM_ROUTE = "/api/events"  # routes.py: the event stream's route, under the Mini App's prefix
CONNECT_SECONDS = 5.0  # (a free connection of its pool waited for included: past that, 503)
READ_SECONDS = 60.0  # a stream's longest silence (it sends a comment every 15 s)
REQUESTS_AT_ONCE = 100  # requests but streams passed on at once (each over in a moment)


def is_stream(request: web.Request) -> bool:
    """Does the page ask for an event stream (``GET <prefix>api/events``)? Told by the request, before
    it is passed on: a stream holds its connection for minutes, anything else for a moment."""
    return request.method == "GET" and request.path.endswith(STREAM_ROUTE)


class Elsewhere:
    """Passes requests on to the worker that holds their table."""

    def __init__(self) -> None:
        self._pools: dict[bool, aiohttp.ClientSession] = {}  # is_stream -> its connections

    async def answer(
        self, request: web.Request, worker: Worker | None, table_id: int
    ) -> web.StreamResponse | None:
        """The owner's answer, passed on; None when the request is this worker's to answer (one
        process, the table here or nowhere, or a request passed on already)."""
        if worker is None or PASSED_ON in request.headers:
            return None
        address = await worker.owner_of_table(table_id)
        if address is None or address == worker.address:
            return None
        return await self._pass_on(request, address, worker.name)

    def _pool(self, stream: bool) -> aiohttp.ClientSession:
        """The connections a stream is passed on over, or those of every other request."""
        session = self._pools.get(stream)
        if session is None:
            # (0 would be no limit at all: a process left no room for pages passes one at a time)
            limit = max(1, StreamLimits.for_this_process().total) if stream else REQUESTS_AT_ONCE
            session = self._pools[stream] = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, connect=CONNECT_SECONDS, sock_read=READ_SECONDS),
                connector=aiohttp.TCPConnector(limit=limit, limit_per_host=0),
            )
        return session

    async def _pass_on(self, request: web.Request, address: str, name: str) -> web.StreamResponse:
        session = self._pool(is_stream(request))
        headers = {key: request.headers[key] for key in KEPT_HEADERS if key in request.headers}
        headers[PASSED_ON] = name
        body = await request.read()
        stream: web.StreamResponse | None = None
        try:
            async with session.request(
                request.method, address + request.path_qs, data=body or None, headers=headers
            ) as answer:
                if answer.content_type != "text/event-stream":
                    return web.Response(
                        status=answer.status,
                        body=await answer.read(),
                        headers={
                            key: answer.headers[key]
                            for key in ("Content-Type", "Retry-After")
                            if key in answer.headers
                        },
                    )
                stream = web.StreamResponse(
                    status=answer.status,
                    headers={key: answer.headers[key] for key in STREAM_HEADERS if key in answer.headers},
                )
                await stream.prepare(request)
                async for chunk in answer.content.iter_any():
                    try:
                        async with asyncio.timeout(WRITE_TIMEOUT):  # a page that does not read is let go
                            await stream.write(chunk)
                    except (ConnectionError, TimeoutError) as gone:  # the page went away, or stopped reading
                        if isinstance(gone, TimeoutError):
                            log.info("a page stopped reading a stream passed on from %s: let go", address)
                        answer.close()  # the connection to the owner too: half a stream is never reused
                        _abort(request)
                        return stream
                return stream
        except (aiohttp.ClientError, TimeoutError) as error:
            log.warning("a Mini App request could not reach the worker at %s: %s", address, error)
            if stream is not None:  # the stream was under way: it ends, and the page opens another
                return stream
            raise web.HTTPServiceUnavailable(
                text='{"error": "busy", "text": "try again"}',
                content_type="application/json",
                headers={"Retry-After": "1"},
            ) from None
        except ConnectionError:  # the page went away mid-stream
            _abort(request)
            return web.StreamResponse()

    async def close(self) -> None:
        for session in self._pools.values():
            await session.close()
        self._pools.clear()


def _abort(request: web.Request) -> None:
    """Drop the page's connection (closing it would wait for the page to read what is sent)."""
    if request.transport is not None:
        request.transport.abort()
