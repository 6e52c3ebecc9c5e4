"""The Mini App's routes in process (aiohttp's test client against the bot's own web app): who is
refused, acting exactly as a press does, and the push to an open page within 200 ms."""

import asyncio
import json
import re
import time

import pytest

from bot.send.rate_policy import Limits
from bot.web.miniapp.hub import Hub, Subscriber
from bot.web.miniapp.routes import HEADER
from faketg.harness import GROUP, make_world, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.miniapp_client import API, STRANGER, events, init, post, read_event, serving, state
from tests.component.scenarios import empty_the_table_budget, handle, open_and_start


@pytest.fixture
async def served(tmp_path):
    async with serving(str(tmp_path / "served.sqlite3")) as bot_and_client:
        yield bot_and_client


async def test_the_page_is_served_and_the_table_has_the_button(served):
    bot, client = served
    response = await client.get("/miniapp/")
    page = await response.text()
    assert response.status == 200 and "app.js" in page
    assert 'data-unauthorized="无法确认你是谁：请从群里牌桌消息的按钮打开 · Cannot tell who you are' in page
    await bot.driver.send(1, GROUP, "/newgame muxi")
    table = bot.runtime.tables.get(GROUP).table_id
    message = bot.driver.message_with(GROUP, label="🀄 打开牌桌")
    urls = [button.get("url") for row in message.reply_markup["inline_keyboard"] for button in row]
    assert f"https://t.me/paiju_test_bot/table?startapp=t{table}" in urls


async def test_forged_stale_or_foreign_init_data_is_refused_and_changes_nothing(served):
    bot, client = served
    await bot.driver.send(1, GROUP, "/newgame muxi")
    live = bot.runtime.tables.get(GROUP)
    table, version = live.table_id, live.engine.version
    refused = {
        "unsigned": {},
        "forged": {HEADER: init(2, table, token="654321:OTHER-TOKEN")},
        "stale": {HEADER: init(2, table, age=2 * 86400)},
        "garbage": {HEADER: "user=%7B%22id%22%3A2%7D&hash=00"},
    }
    for why, headers in refused.items():
        response = await post(client, 2, table, "join", 0, headers=headers)
        assert response.status == 401, why
        response = await client.get(API + "state", params={"table": str(table)}, headers=headers)
        assert response.status == 401, why
        ticket = await client.post(API + "ticket", params={"table": str(table)}, headers=headers)
        assert ticket.status == 401, why
    other_table = {HEADER: init(2, table + 1)}  # signed, but opened for another table
    assert (await post(client, 2, table, "join", 0, headers=other_table)).status == 403
    stranger = await post(client, STRANGER, table, "join", 0)  # not in the group
    assert stranger.status == 403
    assert live.engine.version == version and live.seated() == [1]
    assert await bot.runtime.store.get_person(2) is None, "nobody was even created"


async def test_acting_in_the_mini_app_is_exactly_a_press(served, tmp_path):
    """The same actions, one bot by the table's buttons, one by the Mini App: the same table."""
    bot, client = served
    pressed = await start_bot(make_world(), str(tmp_path / "pressed.sqlite3"))
    try:
        for each in (bot, pressed):
            await each.driver.send(1, GROUP, "/newgame muxi")
        table = bot.runtime.tables.get(GROUP).table_id
        steps = [(2, "join", "加入"), (1, "ready", "开始"), (2, "ready", "开始"), (1, "banker", "当庄")]
        steps += [(2, "draw", "补牌"), (1, "draw", "补牌")]
        for person, action, label in steps:
            await pressed.driver.press(person, GROUP, label)
            view = await state(client, person, table)
            response = await post(client, person, table, action, view["round"])
            assert response.status == 200, await response.text()
            await bot.runtime.wait_idle()
            assert same(bot.driver.table(GROUP)) == same(pressed.driver.table(GROUP)), action
            assert same(bot.driver.texts(person)) == same(pressed.driver.texts(person)), action
        for person in (1, 2):
            assert await bot.balance(person) == await pressed.balance(person)
        # a refusal is the press's refusal: a stale round
        response = await post(client, 2, table, "draw", 0)
        assert response.status == 409 and (await response.json())["text"]
    finally:
        await stop_bot(pressed)


def same(shown: object) -> str:
    """What a bot shows, its clock times left out: the two bots' deadlines are as far apart as
    their presses were (a second's tick may fall between them)."""
    return re.sub(r"\d\d:\d\d:\d\d", "hh:mm:ss", str(shown))


async def test_an_escape_must_be_confirmed_in_the_mini_app_too(served):
    bot, client = served
    await bot.driver.send(1, GROUP, "/newgame muxi")
    await bot.driver.press(2, GROUP, "加入")
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "开始")
    await bot.driver.press(1, GROUP, "当庄")
    table = bot.runtime.tables.get(GROUP).table_id
    view = await state(client, 2, table)
    first = await post(client, 2, table, "leave", view["round"])
    answer = await first.json()
    assert first.status == 409 and answer["confirm"] and "逃跑" in answer["text"]
    assert 2 in bot.runtime.tables.get(GROUP).seated()
    second = await post(client, 2, table, "leave", view["round"])
    assert second.status == 200
    await bot.runtime.wait_idle()
    assert "逃跑" in bot.driver.table(GROUP)


async def test_an_open_page_is_updated_within_200_ms_of_an_action(served):
    bot, client = served
    await bot.driver.send(1, GROUP, "/newgame muxi")
    table = bot.runtime.tables.get(GROUP).table_id
    spectator = await events(client, 6, table)
    player = await events(client, 1, table)
    assert spectator.status == 200 and spectator.headers["Content-Type"].startswith("text/event-stream")
    first = await read_event(spectator)
    assert first["seated"] is False and [seat["person"] for seat in first["seats"]] == [1]
    await read_event(player)
    started = time.perf_counter()
    await bot.driver.press(2, GROUP, "加入")  # a press in the group: the page sees it
    seen = await asyncio.wait_for(read_event(spectator), 1.0)
    assert time.perf_counter() - started < 0.2
    assert [seat["person"] for seat in seen["seats"]] == [1, 2]
    started = time.perf_counter()
    response = await post(client, 3, table, "join", 0)  # an action in the Mini App: both see it
    assert response.status == 200
    for stream in (spectator, player):
        seen = await asyncio.wait_for(read_event(stream), 1.0)
        while len(seen["seats"]) < 3:
            seen = await asyncio.wait_for(read_event(stream), 1.0)
    assert time.perf_counter() - started < 0.2
    spectator.close()
    player.close()


async def showhand_for_two(bot):
    """A showhand game of 1 and 2 under way, opened and started with the table's buttons."""
    await bot.driver.send(1, GROUP, "/newgame showhand")
    await bot.driver.press(2, GROUP, "加入")
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "开始")
    return bot.runtime.tables.get(GROUP)


async def test_showhand_bets_with_their_amounts_from_the_mini_app(served):
    bot, client = served
    live = await showhand_for_two(bot)
    table = live.table_id
    for _ in range(3):
        turn = live.engine.turn
        if turn is None:
            break
        view = await state(client, turn, table)
        bets = [action for action in view["actions"] if action["action"] in ("bet", "raise", "call", "check")]
        chosen = bets[0]
        before = live.engine.player(turn).total
        response = await post(client, turn, table, chosen["action"], view["round"], chosen["arg"])
        assert response.status == 200, await response.text()
        assert live.engine.player(turn).total == before + chosen.get("pay", 0)
    other = next(person for person in (1, 2) if person != live.engine.turn)
    view = await state(client, other, table)
    refused = await post(client, other, table, "check", view["round"])  # not their turn: refused
    assert refused.status == 409 and (await refused.json())["text"]


async def test_a_bet_of_an_amount_the_buttons_do_not_offer_from_the_slider(served):
    bot, client = served
    live = await showhand_for_two(bot)
    table, turn = live.table_id, live.engine.turn
    view = await state(client, turn, table)
    chosen = view["amount"]["min"] + 6 * view["amount"]["step"]
    assert chosen < view["amount"]["max"]
    assert chosen not in [action["arg"] for action in view["actions"]]
    response = await post(client, turn, table, "bet", view["round"], chosen)
    assert response.status == 200, await response.text()
    assert live.engine.player(turn).total == chosen
    assert f"已下 {chosen:,}" in bot.driver.message_with(GROUP, label="跟注").text  # the table shows it
    other = next(person for person in (1, 2) if person != turn)
    odd = chosen + view["amount"]["step"] // 2  # not a whole multiple of B: the engine's refusal
    refused = await post(client, other, table, "raise", view["round"], odd)
    assert refused.status == 409 and live.engine.player(other).total < chosen


async def test_a_turn_given_its_time_back_is_pushed_to_open_pages(world, database):
    """A prompt shown late gives its turn the delay back (tests/component/test_delivery.py): an open
    page's countdown runs to the new deadline, not the old one. (小红 never opened a DM with the
    bot: the table message is her prompt.)"""
    world.people[2].started_bot = False
    bot = await start_bot(world, database, limits=Limits.of_settings(60))
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    live = bot.runtime.tables.get(GROUP)
    hub = Hub(time.time)
    bot.runtime.watchers = hub
    page = Subscriber(live.table_id, 2, "zh-hans")
    hub.subscribe(page, live)
    empty_the_table_budget(bot)
    try:
        await handle(bot, world.press(1, GROUP, *bot.driver.button_data(GROUP, "当庄")))
        told = json.loads(await page.next(1.0) or "{}")
        await bot.runtime.presenter.sender.drain()  # the table shows the draw about 1.6 s late
        assert live.deadline - told["deadline"] > 1.0
        pushed = json.loads(await page.next(1.0) or "{}")
        assert pushed.get("deadline") == live.deadline, "the new deadline was pushed"
    finally:
        await stop_bot(bot)
