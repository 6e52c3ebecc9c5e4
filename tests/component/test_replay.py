"""回放 through Telegram's surface: rounds played in the fake Telegram, their "▶ 回放" button under
the results, and their replay fetched over the Mini App's route (aiohttp's test client against the
bot's own web app): the steps are the moves played, each person sees their own cards and only what
the table saw; every wrong request gets a clear 4xx."""

from __future__ import annotations

import sqlite3
import time

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.display.views.common import MINI_APP
from bot.web.miniapp.auth import signed_for
from bot.web.miniapp.routes import HEADER
from bot.web.server import build_web_app
from faketg.harness import GROUP, PEOPLE, TOKEN, make_world, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.miniapp_client import API, URL
from tests.component.scenarios import act, live_table

STRANGER = 77
OTHER_GROUP = -100_999


@pytest.fixture
async def served(tmp_path):
    """A bot serving the Mini App, a client of its web app, and where its database is."""
    world = make_world()
    world.add_person(STRANGER, "过客")  # on Telegram, in another group only
    world.add_group(OTHER_GROUP, "别的群", [STRANGER])
    path = str(tmp_path / "replay.sqlite3")
    bot = await start_bot(world, path, webapp_url=URL)
    client = TestClient(TestServer(build_web_app(bot.application, bot.runtime.settings)))
    await client.start_server()
    yield bot, client, path
    await client.close()
    await stop_bot(bot)
    MINI_APP.set(None, None)  # no other test's table gets the button


def opened_for(person: int, start: str, token: str = TOKEN, age: float = 0.0) -> dict[str, str]:
    """The header of ``person``'s page opened by a link with ``startapp=<start>``."""
    init = signed_for(person, PEOPLE.get(person, "某人"), token, time.time() - age, start_param=start)
    return {HEADER: init}


async def fetch(client, person, table, round_no, headers=None):
    params = {"table": str(table), "round": str(round_no)}
    return await client.get(
        API + "replay",
        params=params,
        headers=opened_for(person, f"r{table}_{round_no}") if headers is None else headers,
    )


async def watched(client, person, table, round_no):
    response = await fetch(client, person, table, round_no)
    assert response.status == 200, await response.text()
    return await response.json()


def seat_of(step, person):
    return next(seat for seat in step["seats"] if seat["person"] == person)


def urls(message):
    return [button.get("url") for row in message.reply_markup["inline_keyboard"] for button in row]


async def play_a_muxi_round(bot) -> int:
    """阿明 (1) banks; 小红 (2) draws, then 阿明 draws: a show-down. The table's id."""
    stack(bot, [2, 1], {1: "2S 3S", 2: "2H 3H"}, "4H 5C")
    await bot.driver.send(1, GROUP, "/newgame muxi")
    await bot.driver.press(2, GROUP, "加入")
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "开始")
    await bot.driver.press(1, GROUP, "当庄")
    await bot.driver.press(2, GROUP, "补牌")
    await bot.driver.press(1, GROUP, "补牌")
    await bot.runtime.wait_idle()
    return live_table(bot).table_id


async def test_a_muxi_round_is_replayed_move_by_move_from_its_results_button(served):
    bot, client, _ = served
    table = await play_a_muxi_round(bot)
    link = f"https://t.me/paiju_test_bot/table?startapp=r{table}_1"
    results = bot.driver.message_with(GROUP, label="▶ 回放")
    assert "结算" in results.text and link in urls(results)

    replay = await watched(client, 2, table, 1)
    assert replay["kept"] is True and replay["verify"].endswith(f"/verify {table} 1")
    assert [step["kind"] for step in replay["steps"]] == [
        "start", "move", "deal", "move", "move", "showdown", "results",
    ]  # fmt: skip
    moves = [step["text"] for step in replay["steps"] if step["kind"] == "move"]
    assert moves == ["庄家 阿明", "小红 ✅ 已补牌", "阿明 ✅ 已补牌"]  # the moves played, in order
    deal = replay["steps"][2]
    assert seat_of(deal, 2)["cards"] == ["2H", "3H"] and seat_of(deal, 1)["cards"] == ["?", "?"]
    assert seat_of(replay["steps"][4], 1)["cards"] == ["?", "?", "?"]  # the banker's draw: face down
    assert seat_of(replay["steps"][5], 1)["cards"] == ["2S", "3S", "5C"]  # shown at the show-down
    saved = await bot.runtime.store.get_round(table, 1)
    assert replay["commitment"] == saved.commitment

    # Its "🔓 /verify" line opens the bot's DM, which answers with the round's deck and salt.
    assert replay["verify_link"] == f"https://t.me/paiju_test_bot?start=v{table}_1"
    await bot.driver.send(2, 2, f"/start v{table}_1")
    await bot.runtime.wait_idle()
    proof = bot.driver.texts(2)[-1]
    assert saved.commitment in proof and saved.deck in proof and saved.salt in proof
    await bot.driver.send(2, 2, f"/start v{table}_99")
    await bot.runtime.wait_idle()
    assert "找不到这一局" in bot.driver.texts(2)[-1]
    assert {line["person"]: line["net"] for line in replay["results"]["lines"]} == {
        result.person_id: result.net for result in saved.results
    }

    # A member of the group who did not play sees no face-down card before the show-down.
    onlooker = await watched(client, 3, table, 1)
    for step in onlooker["steps"][:5]:
        assert all(set(seat["cards"]) <= {"?"} for seat in step["seats"])

    # The next round: the last one's message keeps its results and its replay's button.
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "继续")
    await bot.runtime.wait_idle()
    kept = next(m for m in bot.world.bot_messages(GROUP) if m.message_id == results.message_id)
    assert "结算" in kept.text and urls(kept) == [link]


async def play_a_showhand_game(bot) -> tuple[int, list[int]]:
    """阿明 (1) and 小红 (2) check to the show-down, where 小红's aces win: the table's id, and who
    checked, in order."""
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await bot.driver.open_table(GROUP, [1, 2], "showhand")
    played = []
    while live_table(bot).engine.phase.value == "betting":
        played.append(await act(bot, "过牌"))
    await bot.runtime.wait_idle()
    return live_table(bot).table_id, played


async def test_a_showhand_game_is_replayed_with_each_card_and_the_show_down(served):
    bot, client, _ = served
    table, played = await play_a_showhand_game(bot)
    replay = await watched(client, 1, table, 1)
    moves = [step for step in replay["steps"] if step["kind"] == "move"]
    names = {1: "阿明", 2: "小红"}
    assert [step["text"] for step in moves] == [f"{names[person]} 过牌" for person in played]
    assert [step["text"] for step in replay["steps"] if step["kind"] == "card"] == [
        "🃏 发第 3 张牌", "🃏 发第 4 张牌", "🃏 发第 5 张牌",
    ]  # fmt: skip
    before = replay["steps"][-3]
    assert seat_of(before, 2)["cards"][0] == "?" and seat_of(before, 1)["cards"][0] == "8S"
    assert seat_of(replay["steps"][-2], 2)["cards"][0] == "AD"  # the show-down shows it


async def test_wrong_replay_requests_get_a_clear_refusal(served):
    bot, client, _ = served
    table = await play_a_muxi_round(bot)
    refusals = {
        "no initData": (2, table, 1, {}),
        "forged": (2, table, 1, opened_for(2, f"r{table}_1", token="654321:OTHER-TOKEN")),
        "stale": (2, table, 1, opened_for(2, f"r{table}_1", age=2 * 86400)),
    }
    for why, (person, at, round_no, headers) in refusals.items():
        response = await fetch(client, person, at, round_no, headers)
        assert response.status == 401, why
        assert (await response.json())["error"] == "unauthorized", why
    for table_text, round_text in (("abc", "1"), (str(table), "一"), ("", "1"), (str(table), "1e3")):
        response = await client.get(
            API + "replay", params={"table": table_text, "round": round_text}, headers=opened_for(2, "r1_1")
        )
        assert response.status == 400, (table_text, round_text)
    missing = await fetch(client, 2, table, 5)  # no such round (yet)
    assert missing.status == 404 and (await missing.json())["text"] == "找不到这一局"
    assert (await fetch(client, 2, table + 40, 1)).status == 404  # no such table
    another = await fetch(client, 2, table, 1, opened_for(2, f"r{table}_2"))  # opened for another round
    assert another.status == 403
    stranger = await fetch(client, STRANGER, table, 1)  # a round of a group they are not in
    assert stranger.status == 403 and (await stranger.json())["error"] == "forbidden"
    table_link = await fetch(client, 2, table, 1, opened_for(2, f"t{table}"))  # the table's link
    assert table_link.status == 403


async def test_a_round_played_before_replays_were_kept_says_so(served):
    bot, client, path = served
    table = await play_a_muxi_round(bot)
    await bot.runtime.store.drain()
    with sqlite3.connect(path) as db:  # as a database upgraded after the round was played
        db.execute("DELETE FROM round_moves")
    replay = await watched(client, 2, table, 1)
    assert replay["kept"] is False and replay["steps"] == []
    assert replay["strings"]["not_kept"].startswith("这一局是在保存回放之前打的")
    assert {line["name"] for line in replay["results"]["lines"]} == {"阿明", "小红"}
    assert replay["commitment"] and replay["verify"].endswith(f"/verify {table} 1")


async def test_the_page_opens_the_replay_for_a_replay_link(served):
    _, client, _ = served
    page = await (await client.get("/miniapp/")).text()
    assert "static/replay.js" in page and 'id="proof"' in page
    script = await client.get("/miniapp/static/replay.js")
    assert script.status == 200 and "api/replay" in await script.text()


async def test_no_mini_app_no_replay_button(tmp_path):
    bot = await start_bot(make_world(), str(tmp_path / "plain.sqlite3"))
    try:
        await play_a_muxi_round(bot)
        for person in (1, 2):
            await bot.driver.press(person, GROUP, "继续")
        await bot.runtime.wait_idle()
        labels = [b.get("text") for m in bot.world.bot_messages(GROUP) if m.reply_markup
                  for row in m.reply_markup["inline_keyboard"] for b in row]  # fmt: skip
        assert "🀄 打开牌桌" not in labels and "▶ 回放" not in labels
        assert labels  # (the table keeps its own buttons)
    finally:
        await stop_bot(bot)


async def test_actions_that_do_not_replay_are_answered_as_a_round_without_them(served):
    bot, client, path = served
    table = await play_a_muxi_round(bot)
    await bot.runtime.store.drain()
    with sqlite3.connect(path) as db:
        db.execute("""UPDATE round_moves SET action = '{"type":"Draw","person":1}' WHERE before IS NULL""")
    replay = await watched(client, 2, table, 1)
    assert replay["kept"] is False and replay["results"]["lines"]


async def test_a_table_that_closes_after_a_round_keeps_its_replay_button(served):
    bot, _, _ = served
    table = await play_a_muxi_round(bot)
    for person in (1, 2):
        await bot.driver.press(person, GROUP, "离桌")
    await bot.runtime.wait_idle()
    assert bot.runtime.tables.get(GROUP) is None  # everyone left: the table is closed
    last = bot.driver.message_with(GROUP, label="▶ 回放")
    assert "结算" in last.text and urls(last) == [f"https://t.me/paiju_test_bot/table?startapp=r{table}_1"]


async def test_history_links_each_finished_round_to_its_replay(served):
    """/history <table> lists the table's rounds, each finished one with its ▶ 回放 link."""
    bot, _, _ = served
    table = await play_a_muxi_round(bot)
    await bot.driver.send(1, GROUP, f"/history {table}")
    await bot.runtime.wait_idle()
    listed = bot.world.bot_messages(GROUP)[-1]
    link = f"https://t.me/paiju_test_bot/table?startapp=r{table}_1"
    assert f"/verify {table} 1" in listed.text and f'<a href="{link}">▶ 回放</a>' in listed.text
