"""The Mini App with several workers: a page's requests about a table reach the worker holding it.

A page may reach any worker (the operator's proxy picks one). A worker that does not hold the
table a request is about passes it on to the worker that does (its address is saved with the
partition it claimed: ``PAIJU_WORKER_URL``) and passes the answer back, the event stream included,
as it comes: the owner serves the stream (it alone hears of the table's changes), so nothing needs
to be broadcast between workers. A request passed on once is never passed on again: if the table
moved meanwhile, the page is told to try again (503), and its next request finds the new owner.
"""

from __future__ import annotations

import logging

import aiohttp
from aiohttp import web

from bot.workers import Worker

log = logging.getLogger(__name__)
PASSED_ON = "X-Paiju-Passed-On"  # a request one worker passed on to another (never passed on again)
KEPT_HEADERS = ("Content-Type", "X-Telegram-Init-Data")  # what the owner needs of the page's request
STREAM_HEADERS = ("Content-Type", "Cache-Control", "X-Accel-Buffering")
CONNECT_SECONDS = 5.0
READ_SECONDS = 60.0  # a stream's longest silence (it sends a comment every 15 s)


class Elsewhere:
    """Passes requests on to the worker that holds their table."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

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

    async def _pass_on(self, request: web.Request, address: str, name: str) -> web.StreamResponse:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=None, connect=CONNECT_SECONDS, sock_read=READ_SECONDS)
            self._session = aiohttp.ClientSession(timeout=timeout)
        headers = {key: request.headers[key] for key in KEPT_HEADERS if key in request.headers}
        headers[PASSED_ON] = name
        body = await request.read()
        stream: web.StreamResponse | None = None
        try:
            async with self._session.request(
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
                    await stream.write(chunk)
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
            if request.transport is not None:
                request.transport.abort()
            return web.StreamResponse()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
