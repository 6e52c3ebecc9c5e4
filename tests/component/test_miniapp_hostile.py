"""The Mini App's routes under hostile use, in process (issue 24): initData never in a URL, the
stream's ticket, bad bytes, a flood of membership checks, the caps on open streams, and one view
made per kind of viewer at each change."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
import time
from types import SimpleNamespace
from urllib.parse import quote

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.display.views.common import MINI_APP
from bot.web.miniapp import members, routes, streams
from bot.web.miniapp.hub import Subscriber
from bot.web.miniapp.routes import HEADER, MiniApp
from bot.web.miniapp.streams import TICKET_SECONDS, StreamLimits
from faketg.harness import GROUP, TOKEN, make_world, start_bot, stop_bot
from tests.component.miniapp_client import API, URL, init, read_event
from tests.waiting import until

OTHER_GROUP = -100_777  # a group with a table of its own, where nobody floods anything
OUTSIDER = 77  # signs initData with their own Telegram account, not in the group
STRANGERS = range(10_000, 10_000 + members.IN_ALL + 100)  # as many, each with an account of their own


def world_with_another_group():
    world = make_world()
    world.add_group(OTHER_GROUP, "隔壁群", [1, 2, 3])
    for person in (OUTSIDER, *STRANGERS):  # on Telegram, not in the group
        world.add_person(person, f"路过{person}")
    return world


@pytest.fixture
async def bot(tmp_path):
    bot = await start_bot(world_with_another_group(), str(tmp_path / "hostile.sqlite3"), webapp_url=URL)
    yield bot
    await stop_bot(bot)
    MINI_APP.set(None, None)


async def serve(bot, **options):
    """A client of the Mini App's routes over the bot (``options`` for ``MiniApp``)."""
    miniapp = MiniApp(lambda: bot.application, TOKEN, "/miniapp/", **options)
    app = web.Application()
    miniapp.add_routes(app)
    client = TestClient(TestServer(app))
    await client.start_server()
    return miniapp, client


@pytest.fixture
async def served(bot):
    miniapp, client = await serve(bot)
    yield bot, miniapp, client
    await client.close()


async def open_table(bot, chat=GROUP, opener=1):
    await bot.driver.send(opener, chat, "/newgame muxi")
    return bot.runtime.tables.get(chat).table_id


async def ticket(client, person, table):
    return await client.post(
        API + "ticket", params={"table": str(table)}, headers={HEADER: init(person, table)}
    )


async def stream(client, person, table):
    """``person``'s event stream: 200 and open, or the refusal (of the ticket, or of the stream)."""
    got = await ticket(client, person, table)
    if got.status != 200:
        return got
    code = (await got.json())["ticket"]
    return await client.get(API + "events", params={"table": str(table), "ticket": code})


def calls(world, method="getChatMember"):
    return sum(request.method == method for request in world.requests)


# -- initData never in a URL; the stream's ticket --------------------------------------------------
async def test_init_data_in_a_url_is_refused_everywhere(served):
    bot, _miniapp, client = served
    table = await open_table(bot)
    version = bot.runtime.tables.get(GROUP).engine.version
    signed = init(2, table)
    query = {"table": str(table), "init": signed}
    assert (await client.get(API + "state", params=query)).status == 400
    assert (await client.get(API + "state", params=query, headers={HEADER: signed})).status == 400
    assert (await client.get(API + "events", params=query)).status == 400
    assert (await client.post(API + "ticket", params=query)).status == 400
    body = {"table": table, "round": 0, "action": "join", "arg": None}
    assert (await client.post(API + "act", params={"init": signed}, json=body)).status == 400
    assert (
        bot.runtime.tables.get(GROUP).engine.version == version
        and 2 not in bot.runtime.tables.get(GROUP).seated()
    )
    # the header form works
    assert (await client.post(API + "act", json=body, headers={HEADER: signed})).status == 200


async def test_a_ticket_opens_one_stream_once_for_its_person_and_table_for_seconds(bot):
    now = [time.time()]
    _miniapp, client = await serve(bot, clock=lambda: now[0])
    try:
        table = await open_table(bot)
        other = await open_table(bot, OTHER_GROUP, opener=3)
        got = await ticket(client, 1, table)
        assert got.status == 200 and got.headers["Cache-Control"] == "no-store"
        code = (await got.json())["ticket"]
        first = await client.get(API + "events", params={"table": str(table), "ticket": code})
        assert first.status == 200
        view = await read_event(first)
        assert view["seated"] and [seat["person"] for seat in view["seats"] if seat["me"]] == [1]
        again = await client.get(API + "events", params={"table": str(table), "ticket": code})
        assert again.status == 401, "a ticket opens one stream"
        first.close()

        code = (await (await ticket(client, 1, table)).json())["ticket"]
        elsewhere = await client.get(API + "events", params={"table": str(other), "ticket": code})
        assert elsewhere.status == 401, "a ticket is for its table only"
        spent = await client.get(API + "events", params={"table": str(table), "ticket": code})
        assert spent.status == 401, "and a wrong try spends it"

        code = (await (await ticket(client, 1, table)).json())["ticket"]
        now[0] += TICKET_SECONDS + 1
        late = await client.get(API + "events", params={"table": str(table), "ticket": code})
        assert late.status == 401, "a ticket is good for seconds"
        for made_up in ("", "x" * 32, "%ff", "\u00e9" * 10):
            assert (
                await client.get(API + "events", params={"table": str(table), "ticket": made_up})
            ).status == 401
    finally:
        await client.close()


# -- bad bytes: a 4xx, and a line per cause in the log ---------------------------------------------
async def raw_status(client, request: bytes) -> int:
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    try:
        writer.write(request)
        await writer.drain()
        line = await reader.readline()
        return int(line.split()[1])
    finally:
        writer.close()


async def test_bytes_that_are_no_init_data_are_a_4xx_and_a_few_log_lines(served, caplog):
    bot, _miniapp, client = served
    table = await open_table(bot)
    signed = init(2, table)
    unsigned, _hash = signed.rsplit("&hash=", 1)
    bad = [
        (unsigned + "&hash=" + "\u00e9" * 64).encode(),  # a non-ASCII hash, as UTF-8
        (unsigned + "&hash=" + quote("\u00e9" * 64)).encode(),  # the same, percent-escaped
        signed.encode() + b"&x=\xff\xfe",  # a byte that is not UTF-8
        b"\xff" * 40,
        (unsigned + "&hash=" + "\u0661" * 64).encode(),  # Arabic-Indic digits: not hex either
    ]
    routes = [
        b"GET /miniapp/api/state?table=%d" % table,
        b"POST /miniapp/api/ticket?table=%d" % table,
        b"POST /miniapp/api/act",
    ]
    caplog.set_level(logging.INFO)
    statuses = []
    for _ in range(40):
        for value in bad:
            for route in routes:
                head = route + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n"
                statuses.append(
                    await raw_status(client, head + HEADER.encode() + b": " + value + b"\r\n\r\n")
                )
    assert set(statuses) == {401}, set(statuses)
    told = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert not any(record.exc_info for record in told), "no traceback"
    assert 1 <= len(told) <= 5, [record.getMessage() for record in told]  # one per cause
    assert bot.runtime.tables.get(GROUP).seated() == [1]


async def test_an_action_body_no_parser_takes_is_a_400_not_a_traceback(served, caplog):
    bot, _miniapp, client = served
    table = await open_table(bot)
    signed = init(2, table).encode()
    bodies = [
        (b"application/json; charset=nonsense", b"{}"),  # a charset Python does not know
        (b"application/json", b"[" * 100_000 + b"]" * 100_000),  # deeper than the parser recurses
        (b"application/json", b"\xff\xfe\xfd\xfc"),
        (b"application/json", b"null"),
    ]
    caplog.set_level(logging.INFO)
    for content_type, body in bodies:
        head = b"POST /miniapp/api/act HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        head += b"Content-Type: " + content_type
        head += b"\r\nContent-Length: %d\r\n" % len(body) + HEADER.encode() + b": " + signed + b"\r\n\r\n"
        assert await raw_status(client, head + body) == 400
    assert not any(record.exc_info for record in caplog.records), "no traceback"


# -- a flood of membership checks --------------------------------------------------------------------
async def test_an_outsiders_flood_costs_telegram_one_question_and_many_a_bounded_number(served):
    bot, miniapp, client = served
    table = await open_table(bot)
    other = await open_table(bot, OTHER_GROUP, opener=3)
    before = calls(bot.world)
    headers = {HEADER: init(OUTSIDER, table)}
    flood = await asyncio.gather(
        *(client.get(API + "state", params={"table": str(table)}, headers=headers) for _ in range(300))
    )
    assert {answer.status for answer in flood} == {403}
    assert calls(bot.world) - before == 1, "refusals are remembered; questions at once are one question"

    # a member's pages at once: one question, then remembered
    before = calls(bot.world)
    member = await asyncio.gather(
        *(
            client.get(API + "state", params={"table": str(table)}, headers={HEADER: init(6, table)})
            for _ in range(50)
        )
    )
    assert {answer.status for answer in member} == {200}
    assert calls(bot.world) - before == 1

    # many outsiders at once (each an account of their own): a bounded number of questions, the
    # rest refused with a Retry-After, not queued
    before = calls(bot.world)
    flood = await asyncio.gather(
        *(
            client.get(API + "state", params={"table": str(table)}, headers={HEADER: init(person, table)})
            for person in STRANGERS
            for _ in range(2)
        )
    )
    assert {answer.status for answer in flood} <= {403, 503}
    busy = [answer for answer in flood if answer.status == 503]
    assert busy and all(int(answer.headers["Retry-After"]) >= 1 for answer in busy)
    assert calls(bot.world) - before <= members.IN_ALL
    kept = miniapp.members
    assert len(kept.known) <= members.IN_ALL + 2 and len(kept.people) <= members.IN_ALL + 2, "no more kept"

    # the games go on: a table elsewhere takes a press
    await bot.driver.press(2, OTHER_GROUP, "加入")
    assert bot.runtime.tables.by_id(other).seated() == [3, 2]


# -- open streams: capped, refused with Retry-After, given back when they close ---------------------
async def test_open_streams_are_capped_per_person_and_in_all_and_given_back(bot):
    miniapp, client = await serve(bot, limits=StreamLimits(per_person=2, per_table=100, total=5))
    try:
        table = await open_table(bot)
        opened = [await stream(client, 1, table) for _ in range(2)]
        assert [response.status for response in opened] == [200, 200]
        third = await stream(client, 1, table)
        assert third.status == 429 and int(third.headers["Retry-After"]) > 0
        assert third.headers.get("Connection", "").lower() == "close"
        opened += [await stream(client, person, table) for person in (2, 2, 3)]
        assert [response.status for response in opened] == [200] * 5
        full = await stream(client, 4, table)
        assert full.status == 503 and int(full.headers["Retry-After"]) > 0
        assert miniapp.hub.count() == 5
        for response in opened:
            response.close()
        await bot.driver.press(2, GROUP, "加入")  # a change: each stream is written to, the closed are seen
        await until(lambda: miniapp.hub.count() == 0)
        assert miniapp.hub.open == {} and miniapp.hub.people == {}
        gc.collect()
        assert not [thing for thing in gc.get_objects() if isinstance(thing, Subscriber)], "nothing kept"
        again = await stream(client, 4, table)
        assert again.status == 200
        again.close()
    finally:
        await client.close()


async def test_onlookers_filling_a_table_never_keep_a_player_out(bot):
    _miniapp, client = await serve(bot, limits=StreamLimits(per_person=2, per_table=2, total=10))
    opened = []
    try:
        table = await open_table(bot)  # person 1 opened it and sits there
        opened = [await stream(client, person, table) for person in (3, 4)]  # two onlookers
        assert [response.status for response in opened] == [200, 200]
        onlooker = await stream(client, 5, table)
        assert onlooker.status == 503, "the table's cap holds back the onlookers"
        opened.append(await stream(client, 1, table))
        assert opened[-1].status == 200, "a player always gets their own table"
    finally:
        for response in opened:
            response.close()
        await client.close()


async def test_a_change_makes_one_view_per_player_and_one_for_all_spectators(served):
    bot, miniapp, client = served
    table = await open_table(bot)
    await bot.driver.press(2, GROUP, "加入")
    pages = {person: await stream(client, person, table) for person in (1, 2, 3, 4, 5)}
    pages[6] = await stream(client, 6, table)
    second = await stream(client, 6, table)  # a spectator's second page
    for page in [*pages.values(), second]:
        assert page.status == 200
        await read_event(page)
    made = miniapp.hub.rendered
    await bot.driver.press(1, GROUP, "开始")
    assert miniapp.hub.rendered - made == 3, "two players, and the spectators once"
    seen = {person: await read_event(page) for person, page in pages.items()}
    spectators = [json.dumps(seen[person], sort_keys=True) for person in (3, 4, 5, 6)]
    spectators.append(json.dumps(await read_event(second), sort_keys=True))
    assert len(set(spectators)) == 1 and not seen[3]["seated"]
    assert seen[1]["seated"] and seen[2]["seated"] and seen[1] != seen[2]
    for page in [*pages.values(), second]:
        page.close()


# -- what held before, still held --------------------------------------------------------------------
async def test_fifty_identical_bets_at_once_take_one_and_bad_actions_are_refused(served):
    bot, _miniapp, client = served
    await bot.driver.send(1, GROUP, "/newgame showhand")
    await bot.driver.press(2, GROUP, "加入")
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "开始")
    live = bot.runtime.tables.get(GROUP)
    table, turn = live.table_id, live.engine.turn
    other = 2 if turn == 1 else 1
    view = await state(client, turn, table)
    bet = next(action for action in view["actions"] if action["action"] in ("bet", "raise", "call"))
    before = live.engine.player(turn).total
    body = {"table": table, "round": view["round"], "action": bet["action"], "arg": bet["arg"]}
    headers = {HEADER: init(turn, table)}
    answers = await asyncio.gather(*(client.post(API + "act", json=body, headers=headers) for _ in range(50)))
    assert sorted(answer.status for answer in answers) == [200] + [409] * 49
    assert live.engine.player(turn).total == before + bet["pay"]

    version = live.engine.version
    for arg in ("abc", -5, 1e30, "1" * 17, [1], {"x": 1}):  # malformed amounts
        malformed = {**body, "action": "raise", "arg": arg}
        refused = await client.post(API + "act", json=malformed, headers={HEADER: init(other, table)})
        assert refused.status == 400, arg
    for person, action in ((turn, "check"), (6, "check"), (6, "raise")):  # out of turn; a spectator
        refused = await client.post(
            API + "act", json={**body, "action": action, "arg": None}, headers={HEADER: init(person, table)}
        )
        assert refused.status == 409, (person, action)
    outsider = await client.post(API + "act", json=body, headers={HEADER: init(OUTSIDER, table)})
    assert outsider.status == 403
    huge = await client.post(API + "act", data=b"x" * (1024 * 1024 + 1), headers=headers)
    assert huge.status == 413
    assert live.engine.version == version


async def state(client, person, table):
    response = await client.get(
        API + "state", params={"table": str(table)}, headers={HEADER: init(person, table)}
    )
    assert response.status == 200, await response.text()
    return await response.json()


async def test_a_page_that_stops_reading_is_let_go(served, monkeypatch):
    """A stream whose page takes nothing: the bot keeps only the newest view for it (never a
    queue), and closes it when a write waits longer than ``WRITE_TIMEOUT``."""
    bot, miniapp, client = served
    monkeypatch.setattr(routes, "WRITE_TIMEOUT", 0.2)
    table = await open_table(bot)
    code = (await (await ticket(client, 6, table)).json())["ticket"]
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the bot's writes back up
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (client.server.host, client.server.port))
    path = f"/miniapp/api/events?table={table}&ticket={code}"
    await asyncio.get_running_loop().sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    try:
        await until(lambda: miniapp.hub.count() == 1)
        for connection in client.server.runner.server.connections:  # a slow network: small buffers
            connection.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, 4096
            )
        for number in range(1000):  # bounded: well past what the buffers between hold
            await bot.driver.press(2, GROUP, "离桌" if number % 2 else "加入")
            pages = miniapp.hub.open.get(table, set())
            assert all(page.latest is None or len(page.latest) < 10_000 for page in pages)
            if miniapp.hub.count() == 0:
                break
        assert miniapp.hub.count() == 0, "the page that does not read was let go"
    finally:
        sock.close()


async def test_a_stream_ends_after_its_lifetime_and_gives_its_room_back(served, monkeypatch):
    """Its last event tells the page to open another at once (with a new ticket: who it is is
    checked again), so the page never shows itself offline for a planned end."""
    bot, miniapp, client = served
    monkeypatch.setattr(routes, "LIFETIME", 0.3)
    table = await open_table(bot)
    page = await stream(client, 6, table)
    assert page.status == 200
    async with asyncio.timeout(10):
        sent = await page.content.read()  # to its end
    assert sent.endswith(b"event: renew\ndata: {}\n\n")
    await until(lambda: miniapp.hub.count() == 0)


def test_an_open_file_limit_that_leaves_few_pages_is_told_at_start(monkeypatch, caplog):
    monkeypatch.setattr(streams, "open_files_limit", lambda: 256)  # macOS's default
    limits = streams.StreamLimits.for_this_process()
    assert limits.total == 0
    assert any("open-file limit (256)" in record.getMessage() for record in caplog.records)


async def test_a_member_seen_lately_is_still_let_in_while_a_flood_has_spent_the_budget():
    now = [0.0]
    asked = []

    async def get_chat_member(chat, person):
        asked.append(person)
        return SimpleNamespace(status="member" if person < 1000 else "left")

    checks = members.Members(lambda: SimpleNamespace(get_chat_member=get_chat_member), lambda: now[0])
    assert await checks.is_member(GROUP, 7) and await checks.is_member(GROUP, 8)
    now[0] = members.KEEP_MEMBER + 1  # their answers are old now
    for _ in range(members.IN_ALL):  # a crowd of accounts spends the budget
        checks.everyone.add(now[0])
    with pytest.raises(members.Busy):
        await checks.is_member(GROUP, 9)  # never seen: told to try again
    assert await checks.is_member(GROUP, 7), "seen a member lately: still one during the flood"
    now[0] = members.STALE_MEMBER + 1
    for _ in range(members.IN_ALL):  # the flood goes on
        checks.everyone.add(now[0])
    with pytest.raises(members.Busy):
        await checks.is_member(GROUP, 8)
    assert asked == [7, 8]
