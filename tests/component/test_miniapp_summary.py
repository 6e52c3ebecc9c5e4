"""A table that has ended, in the Mini App (issue 49 point 5): its 总结算 as a card, pushed to an open
page as it ends and given to a page opened later (to whoever played there or is in its group);
the group's message has the button that opens it."""

import asyncio

import pytest

from bot.web.miniapp.routes import HEADER
from faketg.harness import ADMIN, GROUP
from tests.component.decks import stack
from tests.component.miniapp_client import API, STRANGER, events, init, read_event, serving
from tests.component.scenarios import open_and_start


@pytest.fixture
async def served(tmp_path):
    async with serving(str(tmp_path / "served.sqlite3")) as bot_and_client:
        yield bot_and_client


async def ended_table(bot) -> int:
    """A muxi round of 1 (banker, −400) and 2 (+400), then /cancel: the table's id."""
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    table = bot.runtime.tables.get(GROUP).table_id
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "补牌")
    await d.press(1, GROUP, "补牌")
    await d.send(ADMIN, GROUP, "/cancel")
    assert bot.runtime.tables.get(GROUP) is None
    return table


def assert_card(card) -> None:
    assert card["title"] == "🏁 总结算 · 🀄 木虱 第 1 桌" and card["meta"].startswith("共 1 局 · ")
    assert [(line["person"], line["mark"], line["name"], line["net_text"]) for line in card["nets"]] == [
        (2, "🥇", "小红", "+400"),
        (1, "🥈", "阿明", "−400"),
    ]
    assert card["highlights"][0] == "👑 大赢家：小红 +400"
    assert "/verify 1 局号" in card["proofs"][-1]


async def test_an_open_page_gets_the_card_as_the_table_ends(served):
    bot, client = served
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    table = bot.runtime.tables.get(GROUP).table_id
    page = await events(client, 1, table)
    first = await read_event(page)
    assert "summary" not in first, "an open table has none"
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "补牌")
    await d.press(1, GROUP, "补牌")
    await d.send(ADMIN, GROUP, "/cancel")
    seen = await asyncio.wait_for(read_event(page), 2.0)
    while not seen["closed"]:
        seen = await asyncio.wait_for(read_event(page), 2.0)
    assert_card(seen["summary"])
    page.close()


@pytest.mark.parametrize("route", ["ticket", "state"])
async def test_a_page_opened_on_an_ended_table_shows_its_card(served, route):
    bot, client = served
    table = await ended_table(bot)

    async def ask(person):
        method = client.post if route == "ticket" else client.get
        response = await method(
            API + route, params={"table": str(table)}, headers={HEADER: init(person, table)}
        )
        assert response.status == 404
        return await response.json()

    for person in (1, 6):  # who played there; a member of the group who did not
        answer = await ask(person)
        assert answer["error"] == "table_over" and answer["text"] == "牌桌已结束"
        assert_card(answer["summary"])
    stranger = await ask(STRANGER)
    assert stranger["error"] == "table_over" and "summary" not in stranger, "not for outsiders"


async def test_the_groups_summary_has_the_button_that_opens_the_card(served):
    bot, _client = served
    table = await ended_table(bot)
    message = next(m for m in bot.world.bot_messages(GROUP) if "总结算" in m.text)
    urls = [button.get("url") for row in message.reply_markup["inline_keyboard"] for button in row]
    assert urls == [f"https://t.me/paiju_test_bot/table?startapp=t{table}"]
    assert bot.driver.message_with(GROUP, label="📱 总结算卡片") is message


async def test_a_table_closed_with_no_round_played_has_no_card(served):
    bot, client = served
    await bot.driver.send(1, GROUP, "/newgame muxi")
    table = bot.runtime.tables.get(GROUP).table_id
    await bot.driver.send(ADMIN, GROUP, "/cancel")
    response = await client.post(
        API + "ticket", params={"table": str(table)}, headers={HEADER: init(1, table)}
    )
    assert response.status == 404 and "summary" not in await response.json()
