"""The Mini App with two workers (in process, PostgreSQL, each with its own HTTP server): a page
that reaches the worker not holding its table is served by the one that does, through it: the
table's state, a ticket and the event stream (pushed when the table changes), and an action; a
request passed on once is never passed on again."""

from __future__ import annotations

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.display.views.common import MINI_APP
from bot.web.miniapp.elsewhere import PASSED_ON
from bot.web.miniapp.routes import HEADER
from bot.web.server import build_web_app
from faketg.harness import GROUP, make_world, start_bot, stop_bot
from storage.partitions import partition_of
from tests.component.decks import stack
from tests.component.miniapp_client import API, URL, events, init, post, read_event, state
from tests.component.scenarios import live_table, open_and_start
from tests.process.e2e.process import free_port
from tests.waiting import until

PARTITIONS = 8


@pytest.fixture
async def two_workers(postgres_url):
    """Two workers with their web apps; the group's table is the first's, the page talks to the second."""
    world = make_world()
    ports = [free_port(), free_port()]
    bots, clients = [], []
    try:
        for port in ports:
            bot = await start_bot(
                world,
                postgres_url,
                webapp_url=URL,
                worker_url=f"http://127.0.0.1:{port}",
                partitions=PARTITIONS,
            )
            bots.append(bot)
            client = TestClient(TestServer(build_web_app(bot.application, bot.runtime.settings), port=port))
            await client.start_server()
            clients.append(client)
            await until(
                lambda: all(len(b.application.bot_data.worker.owned) == PARTITIONS // len(bots) for b in bots)
            )
        holder = next(
            i
            for i, b in enumerate(bots)
            if partition_of(GROUP, PARTITIONS) in b.application.bot_data.worker.owned
        )
        yield bots[holder], bots[1 - holder], clients[1 - holder]
    finally:
        for client in clients:
            await client.close()
        for bot in bots:
            await stop_bot(bot)
        MINI_APP.set(None, None)


async def test_a_page_at_the_worker_without_the_table_is_served_by_the_one_with_it(two_workers):
    holder, other, client = two_workers
    stack(holder, [2, 3, 1], {1: "9S KS", 2: "5S 6H", 3: "2C 2D"}, "7S")
    await open_and_start(holder, [1, 2, 3])
    table = live_table(holder).table_id
    assert other.runtime.tables.by_id(table) is None  # the page's worker does not hold it

    shown = await state(client, 1, table)
    assert shown["round"] == 1 and shown["table"] == table

    stream = await events(client, 2, table)  # the ticket and the stream, both from the holder
    assert stream.status == 200
    first = await read_event(stream)
    assert first["table"] == table
    beat = {"table": str(table), "visible": True, "turn": None}  # its heartbeat: the holder's to know
    watched = await client.post(API + "watch", json=beat, headers={HEADER: init(2, table)})
    assert watched.status == 200, await watched.text()
    assert holder.runtime.watchers.watching(table, 2) and not other.runtime.watchers.watching(table, 2)
    answer = await post(client, 1, table, "banker", 1)  # an action, carried out by the holder
    assert answer.status == 200, await answer.text()
    assert (await answer.json())["ok"]
    pushed = await read_event(stream)  # the holder's push, through the page's worker
    assert pushed != first
    stream.close()
    await holder.runtime.wait_idle()
    assert "庄家 阿明" in holder.driver.table(GROUP)


async def test_a_request_passed_on_once_is_not_passed_on_again(two_workers):
    holder, _other, client = two_workers
    await open_and_start(holder, [1, 2, 3])
    table = live_table(holder).table_id
    again = await client.get(
        API + "state", params={"table": str(table)}, headers={HEADER: init(1, table), PASSED_ON: "another"}
    )
    assert again.status == 404  # not held here, and not passed on a second time: the page tries again


async def test_a_made_up_ticket_is_refused_where_it_arrives_and_a_given_one_passed_on(
    two_workers, postgres_url
):
    """Anyone may ask for a stream. One asked with a made-up ticket (of the right shape) for a table
    the other worker holds is refused by the worker it reached, which asks nobody (not the database,
    not the holder); one with a ticket the holder gave is passed on. (The holder is made unreachable
    to tell the two apart: passed on, a request gets 503.)"""
    holder, _other, client = two_workers
    await open_and_start(holder, [1, 2, 3])
    table = live_table(holder).table_id
    got = await client.post(API + "ticket", params={"table": str(table)}, headers={HEADER: init(2, table)})
    given = (await got.json())["ticket"]
    conn = await asyncpg.connect(postgres_url)
    try:
        await conn.execute("UPDATE partitions SET address = 'http://127.0.0.1:9'")
    finally:
        await conn.close()
    for made_up in ("A" * 32, given[:16] + "B" * 16, given[:-1] + ("A" if given[-1] != "A" else "B")):
        refused = await client.get(API + "events", params={"table": str(table), "ticket": made_up})
        assert refused.status == 401, made_up
    passed_on = await client.get(API + "events", params={"table": str(table), "ticket": given})
    assert passed_on.status == 503  # passed on, to a holder that cannot be reached
    elsewhere = await client.get(API + "events", params={"table": str(table + 1), "ticket": given})
    assert elsewhere.status == 401  # a ticket is for its own table
