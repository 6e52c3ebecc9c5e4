"""The webhook under hostile posts (issue 24, finding 5), the bot served by webhook in process
(``tests/component/serving.py``: its HTTP server as ``python -m bot`` runs it, the log read as records):
a secret header that is not UTF-8 is refused (403), never a 500 with a traceback; a flood of posts
without the secret, or with bodies that are not updates, logs a line per cause per minute, not a
line per post."""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

import aiohttp
import pytest

from faketg.harness import GROUP
from faketg.webhook import SECRET_HEADER
from tests.process.e2e.process import WEBHOOK_PATH
from tests.waiting import until

FLOOD = 1000


@pytest.fixture
async def by_webhook(serving, caplog):
    caplog.set_level(logging.INFO)
    return await serving(webhook=True)


def logged(caplog) -> list[str]:
    """The log's lines (a traceback as its own text, as it is written)."""
    lines = []
    for record in caplog.records:
        lines.append(record.getMessage())
        if record.exc_info:
            lines.append("Traceback (most recent call last): ...")
    return lines


async def raw_post(url: str, header: bytes) -> bytes:
    """A post whose secret header carries ``header`` as raw bytes (no client library would send them)."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    body = b'{"update_id": 1}'
    writer.write(
        b"POST "
        + parts.path.encode()
        + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + SECRET_HEADER.encode()
        + b": "
        + header
        + b"\r\nContent-Type: application/json\r\n"
        + b"Content-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer.split(b"\r\n", 1)[0]


async def raw_request(url: str, request: bytes) -> bytes:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer.split(b"\r\n", 1)[0]


async def test_bytes_that_are_not_text_in_the_secret_are_refused_not_a_crash(by_webhook, caplog):
    url = by_webhook.http_url + WEBHOOK_PATH
    for header in (b"\xff\xfe\xfd", "秘密".encode() + b"\xe4", b"a" * 300):
        assert await raw_post(url, header) == b"HTTP/1.1 403 Forbidden"
    log = "\n".join(logged(caplog))
    assert "Traceback" not in log and "Error handling request" not in log


async def test_requests_that_are_not_http_are_a_400_and_one_log_line(by_webhook, caplog):
    """Bytes no HTTP parser takes (in the path, the query, a header's name; TLS on a plain port)
    reach aiohttp, not the bot's routes: each is a 400, and the log says so once."""
    url = by_webhook.http_url
    junk = [
        b"POST /telegram/upd\xffates HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /healthz?x=\xff HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nX\xff: 1\r\n\r\n",
        b"hello\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    ]
    for _ in range(20):
        for request in junk:
            assert (await raw_request(url, request)).split(b" ")[1] == b"400"
    log = logged(caplog)
    assert not [line for line in log if "Traceback" in line or "Error handling request" in line], log
    assert len([line for line in log if "not HTTP" in line]) == 1


async def test_a_flood_of_refused_posts_logs_a_few_lines(by_webhook, caplog):
    stage = by_webhook
    url = stage.http_url + WEBHOOK_PATH
    registered = next(r.params for r in reversed(stage.world.requests) if r.method == "setWebhook")
    secret = registered["secret_token"]
    before = len(logged(caplog))
    statuses: dict[int, int] = {}
    async with aiohttp.ClientSession() as http:
        for index in range(FLOOD):
            headers = {SECRET_HEADER: "wrong"} if index % 2 else {SECRET_HEADER: secret}
            async with http.post(url, data=b"not json", headers=headers) as answer:
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
    assert statuses == {403: FLOOD // 2, 400: FLOOD // 2}
    await stage.driver.send(1, GROUP, "/newgame muxi")  # the bot still plays
    await until(lambda: any("木虱" in m.text for m in stage.world.bot_messages(GROUP)), "a table opened")
    lines = logged(caplog)[before:]
    refused = [line for line in lines if "refused" in line]
    assert 1 <= len(refused) <= 4, refused
