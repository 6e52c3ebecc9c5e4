"""bot/send/aiohttp_request.py against a real local HTTP server (aiohttp.web on 127.0.0.1): bodies,
status codes, timeouts, errors, the connection pool, and the retries."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, InputFile
from telegram.error import NetworkError, TelegramError, TimedOut
from telegram.request import BaseRequest, RequestData
from telegram.request._requestparameter import RequestParameter

import bot.send.aiohttp_request
from bot.app import build_application
from bot.send.aiohttp_request import (
    POLL_EVERY,
    QUICK_POLLS,
    AiohttpRequest,
    NotSent,
    PollingRequest,
    RetryingRequest,
    env_proxy,
    may_have_arrived,
)
from bot.settings import Settings
from tests.waiting import until

TOKEN = "123:SECRET"
Behaviour = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Server:
    """Answers ``/bot<token>/<method>`` with the next behaviour in ``script`` (then ``ok``), and
    records every request it read."""

    def __init__(self) -> None:
        self.script: list[Behaviour] = []
        self.seen: list[dict[str, object]] = []
        self.in_flight = self.most_in_flight = 0
        self.release = asyncio.Event()  # slow answers wait for it (or 1 s)
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/bot{TOKEN}"

    async def stop(self) -> None:
        self.release.set()
        assert self._runner is not None
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            json_body = request.content_type == "application/json"
            form = await request.post() if request.can_read_body and not json_body else {}
            self.seen.append(
                {
                    "method": request.method,
                    "api": request.match_info["method"],
                    "content_type": request.content_type,
                    "user_agent": request.headers.get("User-Agent"),
                    "form": {key: _read(value) for key, value in form.items()},
                    "json": await request.json() if json_body else None,
                }
            )
            behaviour = self.script.pop(0) if self.script else ok
            return await behaviour(request)
        finally:
            self.in_flight -= 1

    async def slow(self, request: web.Request) -> web.StreamResponse:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.release.wait(), 1.0)
        return await ok(request)


def _read(value: object) -> object:
    """A form's text as is; a file part as (its name, its bytes, its content type)."""
    if isinstance(value, web.FileField):
        return value.filename, value.file.read(), value.content_type
    return value


async def ok(_request: web.Request) -> web.StreamResponse:
    return web.json_response({"ok": True, "result": True})


def status(code: int) -> Behaviour:
    async def answer(_request: web.Request) -> web.StreamResponse:
        body = {"ok": False, "error_code": code, "description": f"code {code}"}
        return web.json_response(body, status=code)

    return answer


async def dropped(request: web.Request) -> web.StreamResponse:
    assert request.transport is not None
    request.transport.close()
    return web.Response(status=500)


@pytest.fixture
async def server():
    running = Server()
    await running.start()
    yield running
    await running.stop()


@pytest.fixture
async def request_():
    made: list[BaseRequest] = []

    async def make(cls: type[AiohttpRequest] = AiohttpRequest, **kwargs: object) -> AiohttpRequest:
        request = cls(**kwargs)  # type: ignore[arg-type]
        await request.initialize()
        made.append(request)
        return request

    yield make
    for request in made:
        await request.shutdown()


def data(**parameters: object) -> RequestData:
    return RequestData([RequestParameter.from_input(key, value) for key, value in parameters.items()])


@pytest.fixture
def no_pauses(monkeypatch):
    monkeypatch.setattr(bot.send.aiohttp_request, "PAUSES", (0.0, 0.0, 0.0))


async def test_a_request_goes_out_as_one_json_object_and_its_answer_comes_back(server, request_):
    request = await request_()
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("加入", callback_data="j:1")]])
    body = data(chat_id=-100, text="牌局 <b>1</b>", reply_markup=markup)
    code, payload = await request.do_request(f"{server.url}/sendMessage", "POST", body)
    assert (code, json.loads(payload)) == (200, {"ok": True, "result": True})
    [seen] = server.seen
    assert seen["method"] == "POST" and seen["api"] == "sendMessage"
    assert seen["content_type"] == "application/json"
    assert seen["user_agent"] == BaseRequest.USER_AGENT
    expected = {"chat_id": -100, "text": "牌局 <b>1</b>", "reply_markup": markup.to_dict()}
    assert seen["json"] == body.parameters == expected
    assert await request.post(f"{server.url}/getMe") is True, "PTB's post() on top: no body, parsed"


async def test_a_text_that_is_not_valid_unicode_still_goes_out(server, request_):
    """A lone surrogate (a name cut inside an emoji, say) cannot be encoded as UTF-8: the body
    escapes it instead of failing the request in the bot."""
    request = await request_()
    body = data(chat_id=7, text="半个表情 \ud83d 后面")
    code, _ = await request.do_request(f"{server.url}/sendMessage", "POST", body)
    assert code == 200
    [seen] = server.seen
    assert seen["json"] == {"chat_id": 7, "text": "半个表情 \ud83d 后面"}


def test_an_answer_is_read_as_ptb_reads_it_even_where_it_is_not_utf8_or_not_json():
    read = AiohttpRequest.parse_json_payload
    assert read('{"ok":true,"result":{"text":"牌局"}}'.encode()) == {"ok": True, "result": {"text": "牌局"}}
    assert read(b'{"ok":true,"result":"\xff"}') == {"ok": True, "result": "\ufffd"}  # (replaced, as PTB does)
    with pytest.raises(TelegramError, match="Invalid server response"):
        read(b"<html>502 Bad Gateway</html>")


async def test_status_codes_are_passed_through(server, request_):
    request = await request_()
    for code in (400, 403, 429, 502):
        server.script.append(status(code))
        answer, payload = await request.do_request(f"{server.url}/editMessageText", "POST", data(chat_id=1))
        assert answer == code and json.loads(payload)["description"] == f"code {code}"


async def test_a_file_is_uploaded_as_multipart(server, request_):
    request = await request_()
    photo = InputFile(b"\x89PNG fake", filename="table.png")
    code, _ = await request.do_request(f"{server.url}/sendPhoto", "POST", data(chat_id=7, photo=photo))
    assert code == 200
    [seen] = server.seen
    assert seen["content_type"] == "multipart/form-data"
    form = seen["form"]
    assert isinstance(form, dict) and form["chat_id"] == "7"
    assert form["photo"] == ("table.png", b"\x89PNG fake", "image/png")


async def test_a_slow_answer_times_out(server, request_):
    request = await request_(read_timeout=0.2)
    server.script.append(server.slow)
    with pytest.raises(TimedOut) as raised:
        await request.do_request(f"{server.url}/sendMessage", "POST", data(chat_id=1))
    assert not isinstance(raised.value, NotSent), "it was sent"
    assert isinstance(raised.value.__cause__, TimeoutError)
    server.script.append(server.slow)
    code, _ = await request.do_request(f"{server.url}/getUpdates", "POST", read_timeout=5.0)
    assert code == 200, "a read timeout passed in wins over the default (a long poll's)"


async def test_a_read_timeout_passed_in_is_used(server, request_):
    request = await request_(read_timeout=5.0)
    server.script.append(server.slow)
    with pytest.raises(TimedOut):
        await request.do_request(f"{server.url}/sendMessage", "POST", read_timeout=0.2)


async def test_a_refused_connection_is_a_network_error(request_):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    request = await request_()
    with pytest.raises(NetworkError) as raised:
        await request.do_request(f"http://127.0.0.1:{port}/bot{TOKEN}/getMe", "POST")
    assert not isinstance(raised.value, TimedOut)
    assert isinstance(raised.value.__cause__, aiohttp.ClientConnectorError)
    assert TOKEN not in str(raised.value)


async def test_an_error_quoting_the_url_does_not_show_the_token(request_):
    request = await request_()
    with pytest.raises(NetworkError) as raised:
        await request.do_request(f"http://127.0.0.1:99999/bot{TOKEN}/getMe", "POST")
    assert isinstance(raised.value.__cause__, aiohttp.InvalidURL)
    assert "SECRET" not in str(raised.value) and "<Bot API URL>/getMe" in str(raised.value)


async def test_a_dropped_connection_is_a_network_error(server, request_):
    request = await request_()
    server.script.append(dropped)
    with pytest.raises(NetworkError) as raised:
        await request.do_request(f"{server.url}/sendMessage", "POST", data(chat_id=1))
    assert isinstance(raised.value.__cause__, aiohttp.ClientError)
    assert (await request.do_request(f"{server.url}/sendMessage", "POST"))[0] == 200, "and it goes on"


async def test_the_pool_holds_at_most_its_size_in_flight(server, request_):
    request = await request_(connection_pool_size=2, pool_timeout=None)
    server.script += [server.slow] * 6
    calls = [request.do_request(f"{server.url}/answerCallbackQuery", "POST") for _ in range(6)]
    waiting = asyncio.gather(*calls)
    slots = request._slots
    assert slots is not None
    # Every call has come to the pool: two at the server, the four others waiting for a connection.
    await until(lambda: server.in_flight == 2 and len(slots._waiters or ()) == 4, "the pool full")
    assert server.in_flight == 2
    server.release.set()
    assert [code for code, _ in await waiting] == [200] * 6
    assert server.most_in_flight == 2


async def test_a_full_pool_times_out_without_sending(server, request_):
    request = await request_(connection_pool_size=1, pool_timeout=5.0)
    server.script.append(server.slow)
    first = asyncio.create_task(request.do_request(f"{server.url}/editMessageText", "POST"))
    await until(lambda: server.in_flight == 1, "the first holds the one connection")
    with pytest.raises(NotSent, match="Pool timeout"):
        await request.do_request(f"{server.url}/sendMessage", "POST", pool_timeout=0.1)
    assert [seen["api"] for seen in server.seen] == ["editMessageText"], "the second never went out"
    server.release.set()
    assert (await first)[0] == 200


async def test_shutdown_is_idempotent_and_initialize_opens_again(server):
    request = AiohttpRequest()
    await request.shutdown()  # before initialize: nothing to close
    await request.initialize()
    await request.initialize()  # PTB initializes a request shared by both of a bot's slots twice
    assert (await request.do_request(f"{server.url}/getMe", "POST"))[0] == 200
    await request.shutdown()
    await request.shutdown()
    with pytest.raises(RuntimeError, match="not initialized"):
        await request.do_request(f"{server.url}/getMe", "POST")
    async with request:
        assert (await request.do_request(f"{server.url}/getMe", "POST"))[0] == 200
    assert request.read_timeout == 5.0 and request.connection_pool_size == 256


async def test_retries_a_5xx_and_a_dropped_connection(server, request_, no_pauses):
    request = await request_(RetryingRequest)
    server.script += [status(502), dropped, status(500)]
    code, _ = await request.do_request(f"{server.url}/sendMessage", "POST", data(chat_id=1))
    assert code == 200 and len(server.seen) == 4


async def test_gives_up_after_four_tries(server, request_, no_pauses, caplog):
    request = await request_(RetryingRequest)
    server.script += [status(502)] * 4
    with caplog.at_level(logging.INFO):
        code, _ = await request.do_request(f"{server.url}/editMessageText", "POST")
    assert code == 502 and len(server.seen) == 4
    assert caplog.records == [], "the caller says what failed, once (the tries are DEBUG lines)"
    server.script += [dropped] * 4
    with pytest.raises(NetworkError):
        await request.do_request(f"{server.url}/editMessageText", "POST")
    assert len(server.seen) == 8


async def test_a_4xx_is_not_tried_again(server, request_, no_pauses):
    request = await request_(RetryingRequest)
    server.script += [status(400), status(429)]
    assert (await request.do_request(f"{server.url}/editMessageText", "POST"))[0] == 400
    assert (await request.do_request(f"{server.url}/editMessageText", "POST"))[0] == 429
    assert len(server.seen) == 2


async def test_a_message_that_timed_out_once_sent_is_never_sent_twice(server, request_, no_pauses):
    request = await request_(RetryingRequest, read_timeout=0.2)
    server.script.append(server.slow)
    with pytest.raises(TimedOut):
        await request.do_request(f"{server.url}/sendMessage", "POST", data(chat_id=1))
    assert len(server.seen) == 1
    server.script.append(server.slow)
    code, _ = await request.do_request(f"{server.url}/editMessageText", "POST", data(chat_id=1))
    assert code == 200 and len(server.seen) == 3, "an edit is tried again"


async def test_a_message_that_never_left_is_tried_again(server, request_, no_pauses, caplog):
    request = await request_(RetryingRequest, connection_pool_size=1, pool_timeout=0.1)
    server.script.append(server.slow)
    first = asyncio.create_task(request.do_request(f"{server.url}/editMessageText", "POST"))
    await until(lambda: server.in_flight == 1, "the first holds the one connection")
    caplog.set_level(logging.DEBUG, logger="bot.send.aiohttp_request")
    later = asyncio.create_task(request.do_request(f"{server.url}/sendMessage", "POST"))
    # its 1st try (of 4, 0.1 s each) runs out of time waiting for the pool
    await until(lambda: "sendMessage failed (NotSent): trying again" in caplog.text, "a try not sent")
    server.release.set()
    assert (await first)[0] == 200 and (await later)[0] == 200
    assert [seen["api"] for seen in server.seen] == ["editMessageText", "sendMessage"]
    assert "sendMessage failed (NotSent): trying again" in caplog.text


async def test_no_try_goes_out_once_the_lease_is_not_sure(server, request_, no_pauses):
    """A worker's lease not sure (another worker may own the chat by now): no try goes out, not
    even the retry of a request whose first try failed while the worker was paused."""
    request = await request_(RetryingRequest)
    lease = [True]
    request.may_send = lambda: lease[0]

    async def first_try_then_a_pause(_request: web.Request) -> web.StreamResponse:
        lease[0] = False  # (the worker was paused past its lease while the first try was out)
        return await status(502)(_request)

    server.script.append(first_try_then_a_pause)
    with pytest.raises(NotSent):
        await request.do_request(f"{server.url}/editMessageText", "POST", data(chat_id=1))
    assert len(server.seen) == 1, "the retry did not go out"
    with pytest.raises(NotSent):
        await request.do_request(f"{server.url}/editMessageText", "POST", data(chat_id=1))
    assert len(server.seen) == 1, "nor a new request"
    lease[0] = True
    assert (await request.do_request(f"{server.url}/editMessageText", "POST", data(chat_id=1)))[0] == 200


def test_the_proxy_comes_from_the_environment_once(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    assert env_proxy("https://api.telegram.org") is None
    monkeypatch.setenv("ALL_PROXY", "http://10.0.0.1:3128")
    assert env_proxy("https://api.telegram.org") == "http://10.0.0.1:3128"
    monkeypatch.setenv("HTTPS_PROXY", "http://10.0.0.2:3128")
    assert env_proxy("https://api.telegram.org") == "http://10.0.0.2:3128"
    monkeypatch.setenv("NO_PROXY", "api.telegram.org")
    assert env_proxy("https://api.telegram.org") is None


def test_the_application_sends_through_aiohttp_and_polls_on_its_own_connection():
    application = build_application(Settings(token=TOKEN))
    sending, polling = application.bot.request, application.bot._request[0]
    assert isinstance(sending, RetryingRequest) and sending.connection_pool_size == 64
    assert type(polling) is PollingRequest and polling.connection_pool_size == 1


EMPTY = b'{"ok":true,"result":[]}'
UPDATE = (
    b'{"ok":true,"result":[{"update_id":1,"message":{"message_id":1,"date":0,'
    b'"chat":{"id":1,"type":"private"}}}]}'
)


def answer_with(body: bytes) -> Behaviour:
    async def answer(_request: web.Request) -> web.StreamResponse:
        return web.Response(body=body, content_type="application/json")

    return answer


def test_polls_answered_at_once_with_nothing_are_held_after_a_few(caplog):
    polling = PollingRequest()
    with caplog.at_level(logging.WARNING, logger="bot.send.aiohttp_request"):
        held = [polling.hold(200, EMPTY, asked=10.0, took=0.001) for _ in range(QUICK_POLLS + 3)]
    assert held[:QUICK_POLLS] == [0.0] * QUICK_POLLS
    assert held[QUICK_POLLS:] == [POLL_EVERY - 0.001] * 3
    [said] = caplog.records  # once
    assert "does not long-poll" in said.getMessage()


def test_polls_with_updates_waited_out_or_failed_are_never_held():
    polling = PollingRequest()
    for _ in range(QUICK_POLLS + 1):
        polling.hold(200, EMPTY, asked=10.0, took=0.001)
    assert polling.hold(200, EMPTY, asked=10.0, took=0.001) > 0
    assert polling.hold(200, UPDATE, asked=10.0, took=0.001) == 0.0, "updates: taken at once"
    assert [polling.hold(200, EMPTY, asked=10.0, took=0.001) for _ in range(QUICK_POLLS)] == [0.0] * 3
    assert polling.hold(502, b"{}", asked=10.0, took=0.001) == 0.0, "errors: the polling loop backs off"
    assert polling.hold(200, EMPTY, asked=10.0, took=10.0) == 0.0, "a long poll waited out"
    assert [polling.hold(200, EMPTY, asked=0.0, took=0.001) for _ in range(9)] == [0.0] * 9, (
        "a poll that asked to be answered at once (the last one before stopping)"
    )
    for _ in range(QUICK_POLLS):
        polling.hold(200, EMPTY, asked=10.0, took=1.5)
    assert polling.hold(200, EMPTY, asked=10.0, took=1.5) == 0.0, "a poll cut short after 1.5 s: no busy loop"


async def test_a_poll_is_held_by_what_it_asked_and_its_answer_comes_back(server, request_, monkeypatch):
    # (POLL_EVERY as the bot has it: a poll answered in 10 ms or more is not quick, and a loaded
    # machine's local request took that long once; the last poll is held about a second)
    polling = await request_(PollingRequest)
    holds, hold = [], polling.hold

    def spy(code: int, payload: bytes, asked: float, took: float) -> float:
        holds.append((asked, held := hold(code, payload, asked, took)))
        return held

    monkeypatch.setattr(polling, "hold", spy)
    server.script += [answer_with(EMPTY)] * (QUICK_POLLS + 1)
    for _ in range(QUICK_POLLS + 1):
        code, payload = await polling.do_request(f"{server.url}/getUpdates", "POST", data(timeout=10))
        assert (code, payload) == (200, EMPTY)
    assert [asked for asked, _ in holds] == [10.0] * (QUICK_POLLS + 1)
    assert holds[-1][1] > 0 and all(held == 0 for _, held in holds[:-1])


async def test_what_may_have_reached_telegram_is_told_from_what_did_not(server, request_, no_pauses):
    """A dropped connection or a timeout once sent may have shown a new message; a connection never
    made, or a 5xx, did not (``may_have_arrived``: the DM is looked over only for the first)."""
    request = await request_(RetryingRequest)
    server.script += [dropped] * 4
    with pytest.raises(NetworkError) as raised:
        await request.do_request(f"{server.url}/editMessageText", "POST")
    assert may_have_arrived(raised.value)
    with pytest.raises(NetworkError) as raised:
        await request.do_request("http://127.0.0.1:9/sendMessage", "POST")
    assert not may_have_arrived(raised.value)
