"""The sandbox page's JSON API over the fake Telegram (no bot, no browser): each message's time,
"edited" and whom it notifies, the unread badges a person's looking clears, and a person added who
never opened a DM with the bot."""

from __future__ import annotations

import time

import httpx
import pytest

from bot.web.miniapp.auth import validate
from bot.web.sandbox.server import GROUP_ID, TOKEN, Sandbox, make_world
from faketg.server import Emulator
from faketg.world import ApiError

AMING, XIAOHONG = 1001, 1002


@pytest.fixture
async def page():
    world = make_world("en")
    emulator = Emulator(world)
    url = await emulator.start(more=Sandbox(world, emulator, "en").routes)
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        yield world, client
    await emulator.stop()


async def looks(client: httpx.AsyncClient, person: int, where: str = "group") -> dict:
    answer = await client.get("/api/state", params={"as": person, "where": where})
    answer.raise_for_status()
    return answer.json()


def unread(state: dict, person: int) -> dict:
    return next(p["unread"] for p in state["people"] if p["id"] == person)


async def test_a_new_dm_counts_until_its_person_looks_at_it(page):
    world, client = page
    world.call("sendMessage", {"chat_id": XIAOHONG, "text": "your cards"})
    world.call("sendMessage", {"chat_id": XIAOHONG, "text": "quiet", "disable_notification": True})
    assert unread(await looks(client, AMING), XIAOHONG) == {"group": 0, "dm": 1}
    assert unread(await looks(client, XIAOHONG, "group"), XIAOHONG) == {"group": 0, "dm": 1}
    seen = await looks(client, XIAOHONG, "dm")
    assert unread(seen, XIAOHONG) == {"group": 0, "dm": 0}
    first = seen["dm"]["messages"][0]
    assert first["notifies"] == [XIAOHONG] and first["date"] == world.messages[(XIAOHONG, 1)].date
    assert seen["dm"]["messages"][1]["notifies"] == []
    world.call("editMessageText", {"chat_id": XIAOHONG, "message_id": 1, "text": "your cards, drawn"})
    state = await looks(client, AMING)
    assert unread(state, XIAOHONG)["dm"] == 0  # an edit notifies nobody
    assert (await looks(client, XIAOHONG, "dm"))["dm"]["messages"][0]["edited"] is True


async def test_a_mention_or_a_reply_in_the_group_is_marked_and_counted(page):
    world, client = page
    await client.post("/api/send", json={"as": XIAOHONG, "text": "/join"})
    world.call("sendMessage", {"chat_id": GROUP_ID, "text": "seated", "reply_parameters": {"message_id": 1}})
    link = f'<a href="tg://user?id={AMING}">阿明</a>, your turn'
    world.call("sendMessage", {"chat_id": GROUP_ID, "text": link, "parse_mode": "HTML"})
    state = await looks(client, 1003)
    assert [m["notifies"] for m in state["group"]["messages"]] == [[], [XIAOHONG], [AMING]]
    assert state["group"]["messages"][1]["reply"] == {"from": "小红", "text": "/join", "bot": False}
    assert unread(state, XIAOHONG)["group"] == 1 and unread(state, AMING)["group"] == 1
    assert unread(await looks(client, AMING), AMING)["group"] == 0
    assert unread(await looks(client, AMING), XIAOHONG)["group"] == 1


async def test_a_person_added_without_a_dm_cannot_be_written_to_until_they_start(page):
    world, client = page
    added = (await client.post("/api/people", json={"name": " 老王 ", "started": False})).json()
    state = await looks(client, added["id"], "dm")
    me = next(p for p in state["people"] if p["id"] == added["id"])
    assert me["name"] == "老王" and me["started"] is False and state["dm"]["messages"] == []
    assert state["language"] == "en" and state["bot_username"] == world.bot["username"]
    with pytest.raises(ApiError) as refused:
        world.call("sendMessage", {"chat_id": added["id"], "text": "your cards"})
    assert refused.value.code == 403
    await client.post("/api/send", json={"as": added["id"], "where": "dm", "text": "/start"})
    assert next(p for p in (await looks(client, 1001))["people"] if p["id"] == added["id"])["started"]


async def test_the_people_of_an_english_sandbox_speak_english(page):
    """``--language en``: the group's people, and those added, have English Telegram apps, which the
    Mini App is told of in its signed initData (else their DMs and Mini App would be Chinese)."""
    world, client = page
    added = (await client.post("/api/people", json={"name": "Lee"})).json()
    assert {world.people[person].language_code for person in (AMING, XIAOHONG, added["id"])} == {"en"}
    launch = (await client.get("/api/miniapp", params={"as": XIAOHONG, "table": "1"})).json()
    person = validate(launch["init_data"], TOKEN, time.time())
    assert person.id == XIAOHONG and person.language_code == "en" and person.start_param == "t1"


async def test_a_replay_link_opens_the_mini_app_for_its_round(page):
    """A round's "▶ 回放" (startapp=r<table>_<round>) opens the Mini App signed for that round."""
    _, client = page
    launch = (await client.get("/api/miniapp", params={"as": XIAOHONG, "start": "r1_2"})).json()
    assert validate(launch["init_data"], TOKEN, time.time()).start_param == "r1_2"
    for wrong in ("r1", "x1_2", "r1_2;", "t"):
        response = await client.get("/api/miniapp", params={"as": XIAOHONG, "start": wrong})
        assert response.status_code == 400, wrong
