"""The open Mini App as a turn's channel (issue 50, point 2): a person watching the table in the
Mini App (its heartbeats through ``api/watch``, its event stream open) is told of their turn there;
their DM prompt waits its grace and is not sent once the page acknowledged the turn; a page hidden
mid-grace gets the DM at once; whoever never opens the page sees what they always did. And the
heartbeat route refuses what it must."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from bot.send.messages import DmKey
from bot.send.watched import GRACE
from bot.web.miniapp.routes import HEADER, WATCH_BODY
from bot.web.miniapp.watching import BURST, HEARTBEAT
from faketg.harness import GROUP, make_world, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack_showhand
from tests.component.miniapp_client import API, STRANGER, events, init, post, read_event, serving
from tests.component.scenarios import live_table, remind

WATCH_GAP = 1.1  # seconds between a page's posts at least (watching.js's WATCH_GAP_MS)
WATCHER, OTHER = 2, 1  # 小红 watches the table in the Mini App; 阿明 plays by the group's buttons


async def watch(
    client: TestClient, person: int, table: int, *, visible: bool = True, turn: int | None = None
) -> ClientResponse:
    body = {"table": str(table), "visible": visible, "turn": turn}
    return await client.post(API + "watch", json=body, headers={HEADER: init(person, table)})


def my_turn(view: dict[str, Any]) -> bool:
    """What the page shows as the viewer's turn (app.js's ``myTurn``)."""
    mine = any(seat.get("me") and seat.get("turn") for seat in view.get("seats", []))
    actions = [action["action"] for action in view.get("actions", [])]
    return mine and any(action not in ("leave", "join") for action in actions)


@contextlib.asynccontextmanager
async def page(
    client: TestClient, person: int, table: int, *, acknowledge: bool = True
) -> AsyncIterator[None]:
    """``person``'s page of the table, open and visible: its stream read as it comes, a heartbeat
    every ``HEARTBEAT`` s, and each turn of theirs it shows acknowledged at once (as watching.js)."""
    stream = await events(client, person, table)
    turn: list[int | None] = [None]
    paced = asyncio.Lock()
    last = [0.0]

    async def beat(shown: int | None) -> None:  # (posts 1.1 s apart at least, as watching.js's)
        async with paced:
            await asyncio.sleep(max(0.0, last[0] + WATCH_GAP - time.monotonic()))
            last[0] = time.monotonic()
            response = await watch(client, person, table, turn=shown if acknowledge else None)
            assert response.status == 200, await response.text()

    await read_event(stream)  # (the table as it is: the stream is open)
    await beat(None)

    async def read() -> None:
        while True:
            view = await read_event(stream)
            shown = view["timer"] if my_turn(view) else None
            if shown is not None and shown != turn[0] and acknowledge:
                await beat(shown)
            turn[0] = shown

    async def beats() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT)
            await beat(turn[0])

    tasks = [asyncio.create_task(read()), asyncio.create_task(beats())]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        stream.close()


def new_dms(bot: Any, person: int, since: int = 0) -> int:
    return sum(1 for r in bot.world.requests[since:] if r.method == "sendMessage" and r.chat_id == person)


async def open_showhand(bot: Any) -> int:
    """阿明 opens a showhand table in the group and 小红 joins (nobody has pressed start yet)."""
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await bot.driver.send(OTHER, GROUP, "/newgame showhand")
    await bot.driver.press(WATCHER, GROUP, "加入")
    return live_table(bot).table_id


async def play_to_the_showdown(bot: Any, client: TestClient | None, table: int) -> None:
    """Both press start; then every turn checks: 阿明 by the group's button, 小红 in the page
    (without a ``client``, by the group's button too)."""
    for person in (OTHER, WATCHER):
        await bot.driver.press(person, GROUP, "开始")
    live = live_table(bot)
    while live.in_round:
        if client is None:
            await bot.driver.press(live.engine.turn, GROUP, "过牌")
            continue
        if live.engine.turn == OTHER:
            await bot.driver.press(OTHER, GROUP, "过牌")
            continue
        response = await post(client, WATCHER, table, "check", live.engine.core.round_no)
        assert response.status == 200, await response.text()
        await bot.runtime.wait_idle()


async def test_a_game_costs_fewer_new_dms_with_the_page_open(tmp_path):
    """The same showhand game twice: 小红's new DMs with her page closed, then open (heartbeats
    and acknowledgements through the real routes)."""
    counts: dict[str, int] = {}
    requests: dict[str, int] = {}  # every request to her DM (its edits too)
    for watched in (False, True):
        async with serving(str(tmp_path / f"watched-{watched}.sqlite3")) as (bot, client):
            table = await open_showhand(bot)
            before = len(bot.world.requests)
            async with page(client, WATCHER, table) if watched else contextlib.nullcontext():
                await play_to_the_showdown(bot, client, table)
            await bot.runtime.wait_idle()
            assert "结算" in bot.driver.table(GROUP) and (await bot.balance(WATCHER)) == 10_100
            counts["open" if watched else "closed"] = new_dms(bot, WATCHER, before)
            requests["open" if watched else "closed"] = sum(
                1 for r in bot.world.requests[before:] if r.chat_id == WATCHER
            )
            dm = bot.world.bot_messages(WATCHER)[-1]
            assert not dm.buttons, "her DM is left with no live prompt"
    closed, opened = counts["closed"], counts["open"]
    message = (
        f"new DMs to the watcher in a showhand game: page closed {closed}, open {opened} "
        f"(requests to her DM: closed {requests['closed']}, open {requests['open']})"
    )
    assert counts["open"] < counts["closed"], message
    assert counts["open"] <= 1, message  # (at most her cards' DM once she has acted: no prompt)
    print(message)


async def test_a_person_who_never_opens_the_page_sees_no_change(tmp_path):
    """A round played on a bot serving the Mini App, nobody opening it, makes the same requests as
    on a bot without a Mini App at all."""
    made: list[Counter[tuple[str, int | None]]] = []
    async with serving(str(tmp_path / "served.sqlite3")) as (served, _client):
        table = await open_showhand(served)
        await play_to_the_showdown(served, None, table)
        await served.runtime.wait_idle()
        made.append(Counter((r.method, r.chat_id) for r in served.world.requests))
    plain = await start_bot(make_world(), str(tmp_path / "plain.sqlite3"))
    try:
        table = await open_showhand(plain)
        await play_to_the_showdown(plain, None, table)
        await plain.runtime.wait_idle()
        made.append(Counter((r.method, r.chat_id) for r in plain.world.requests))
    finally:
        await stop_bot(plain)
    assert made[0] == made[1]
    assert made[0][("sendMessage", WATCHER)] >= 4, "each of her turns a new DM, as ever"


async def test_a_page_hidden_during_the_grace_gets_the_dm_at_once(tmp_path):
    async with serving(str(tmp_path / "hidden.sqlite3")) as (bot, client):
        table = await open_showhand(bot)
        async with page(client, WATCHER, table, acknowledge=False):
            for person in (OTHER, WATCHER):
                await bot.driver.press(person, GROUP, "开始")
            await asyncio.sleep(0)
            live = live_table(bot)
            assert live.engine.turn == WATCHER
            before = len(bot.world.requests)
            deadline = live.turn.deadline
            started = time.monotonic()
            # 小红 acts (she leads): 阿明's turn; he checks, and it is hers again, told in her page
            response = await post(client, WATCHER, table, "check", live.engine.core.round_no)
            assert response.status == 200
            await bot.runtime.wait_idle()
            response = await post(client, OTHER, table, "check", live.engine.core.round_no)
            assert response.status == 200  # (in his page: nothing here waits for what is sent)
            sender = bot.runtime.presenter.sender
            prompt = sender.waiting(WATCHER, DmKey(table, WATCHER))
            assert prompt is not None and prompt.waits(time.monotonic()), "her prompt waits its grace"
            assert not bot.runtime.presenter.prompt_waits(live), "the grace holds no deadline"
            assert new_dms(bot, WATCHER, before) == 0
            hidden = await watch(client, WATCHER, table, visible=False)
            assert hidden.status == 200
            await bot.runtime.wait_idle()
            assert time.monotonic() - started < GRACE + 2, "sent at once, not after its grace"
            assert new_dms(bot, WATCHER, before) == 1
            assert "过牌" in [button["text"] for button in bot.world.bot_messages(WATCHER)[-1].buttons]
            assert live.turn.given_back == 0 and live.turn.deadline is not None
            assert deadline is not None


async def test_a_prompt_not_acknowledged_goes_after_its_grace_and_gives_no_time_back(tmp_path):
    async with serving(str(tmp_path / "late.sqlite3")) as (bot, client):
        table = await open_showhand(bot)
        async with page(client, WATCHER, table, acknowledge=False):
            for person in (OTHER, WATCHER):
                await bot.driver.press(person, GROUP, "开始")
            live = live_table(bot)
            response = await post(client, WATCHER, table, "check", live.engine.core.round_no)
            assert response.status == 200
            await bot.runtime.wait_idle()
            before = len(bot.world.requests)
            started = time.monotonic()
            await bot.driver.press(OTHER, GROUP, "过牌")  # (waits until her prompt went: its grace)
            waited = time.monotonic() - started
            deadline = live.turn.deadline
            assert new_dms(bot, WATCHER, before) == 1 and waited >= GRACE - 0.5, waited
            assert live.turn.given_back == 0 and live.turn.deadline == deadline, "no time given back"


# -- the route, attacked ----------------------------------------------------------------------------
@pytest.fixture
async def served(tmp_path):
    async with serving(str(tmp_path / "served.sqlite3")) as bot_and_client:
        yield bot_and_client


async def test_heartbeats_that_must_be_refused_are(served):
    bot, client = served
    table = await open_showhand(bot)
    body = {"table": str(table), "visible": True, "turn": None}
    for why, headers in {
        "unsigned": {},
        "forged": {HEADER: init(WATCHER, table, token="654321:OTHER-TOKEN")},
        "stale": {HEADER: init(WATCHER, table, age=2 * 86400)},
    }.items():
        response = await client.post(API + "watch", json=body, headers=headers)
        assert response.status == 401, why
    other_table = {HEADER: init(WATCHER, table + 1)}  # signed, but the app was opened for another table
    assert (await client.post(API + "watch", json=body, headers=other_table)).status == 403
    assert (await watch(client, STRANGER, table)).status == 403  # not in the group
    signed = {HEADER: init(3, table)}  # (a person of their own: the cap is per person)
    for text in ("not json", "[]", '{"table": "1"}', f'{{"table": "{table}", "visible": "yes"}}'):
        response = await client.post(API + "watch", data=text, headers=signed)
        assert response.status == 400, text
        await asyncio.sleep(1.0)  # (within the cap)
    big = {HEADER: init(4, table), "Content-Type": "application/json"}
    response = await client.post(API + "watch", data=b"{" + b" " * (WATCH_BODY + 10) + b"}", headers=big)
    assert response.status == 413

    async def chunks():  # (a body of no announced length)
        yield b'{"table": "1", "visible": true}'

    response = await client.post(API + "watch", data=chunks(), headers=big)
    assert response.status == 413
    assert not bot.runtime.watchers.heartbeats.last, "no heartbeat counted from any of those"


async def test_a_flood_of_heartbeats_is_capped(served):
    bot, client = served
    table = await open_showhand(bot)
    answers = [(await watch(client, WATCHER, table)).status for _ in range(BURST + 3)]
    assert answers[:BURST] == [200] * BURST and set(answers[BURST:]) == {429}
    refused = await watch(client, WATCHER, table)
    assert refused.status == 429 and refused.headers["Retry-After"] == "1"
    assert (await watch(client, OTHER, table)).status == 200, "one person's flood is theirs alone"
    await asyncio.sleep(1.1)
    assert (await watch(client, WATCHER, table)).status == 200, "a second later, one more"


async def test_watching_needs_a_fresh_heartbeat_and_an_open_stream(served):
    bot, client = served
    table = await open_showhand(bot)
    assert (await watch(client, WATCHER, table)).status == 200
    hub = bot.runtime.watchers  # (the Mini App's hub, since its first request)
    assert not hub.watching(table, WATCHER), "no stream open: not watching"
    async with page(client, WATCHER, table):
        assert hub.watching(table, WATCHER)
        hub.heartbeats.last[(table, WATCHER)] -= 3 * HEARTBEAT  # its last heartbeat, long ago
        assert not hub.watching(table, WATCHER), "a stale heartbeat: not watching"
        hub.heartbeats.allowance.clear()  # (posts faster than a page's: the cap is not this test's point)
        assert (await watch(client, WATCHER, table)).status == 200
        assert hub.watching(table, WATCHER)
        assert (await watch(client, WATCHER, table, visible=False)).status == 200
        assert not hub.watching(table, WATCHER), "hidden: not watching"


async def test_a_turn_acknowledged_then_the_page_hidden_gets_its_prompt_by_dm(tmp_path):
    """Told in her page, 小红 got no DM for her turn; her page hidden while it is still her turn,
    the prompt goes as a new DM at once: nothing she needs is lost."""
    async with serving(str(tmp_path / "acked.sqlite3")) as (bot, client):
        table = await open_showhand(bot)
        async with page(client, WATCHER, table):
            for person in (OTHER, WATCHER):
                await bot.driver.press(person, GROUP, "开始")
            live = live_table(bot)
            response = await post(client, WATCHER, table, "check", live.engine.core.round_no)
            assert response.status == 200
            await bot.runtime.wait_idle()
            before = len(bot.world.requests)
            await bot.driver.press(OTHER, GROUP, "过牌")  # (idle once her page acknowledged the turn)
            assert live.engine.turn == WATCHER and new_dms(bot, WATCHER, before) == 0
            assert bot.runtime.presenter.sender.waiting(WATCHER, DmKey(table, WATCHER)) is None
            bot.runtime.watchers.heartbeats.allowance.clear()  # (the page's pace is not this test's point)
            assert (await watch(client, WATCHER, table, visible=False)).status == 200
            await bot.runtime.wait_idle()
            assert new_dms(bot, WATCHER, before) == 1
            assert "过牌" in [button["text"] for button in bot.world.bot_messages(WATCHER)[-1].buttons]


async def test_the_reminder_follows_the_same_rule(tmp_path):
    """A third of her turn left: watching, 小红 is reminded in her page (it acknowledges the turn
    with its heartbeat) and gets no new DM; her page closed, the reminder is a new DM as ever."""
    async with serving(str(tmp_path / "reminded.sqlite3")) as (bot, client):
        table = await open_showhand(bot)
        async with page(client, WATCHER, table):
            for person in (OTHER, WATCHER):
                await bot.driver.press(person, GROUP, "开始")
            live = live_table(bot)
            assert live.engine.turn == WATCHER
            before = len(bot.world.requests)
            await remind(bot)  # (idle once her page acknowledged the reminded turn)
            assert live.turn.reminded and new_dms(bot, WATCHER, before) == 0
        await bot.runtime.wait_idle()  # (her stream closed: she is not watching)
        response = await post(client, WATCHER, table, "check", live.engine.core.round_no)
        assert response.status == 200
        await bot.driver.press(OTHER, GROUP, "过牌")
        before = len(bot.world.requests)
        await remind(bot)
        assert new_dms(bot, WATCHER, before) == 1
