"""The emulator itself: the Bot API's shapes over HTTP, long polling, and each fault switch."""

import asyncio
import time

import httpx
import pytest

from faketg.server import Emulator, Faults
from faketg.world import World

TOKEN = "1:T"


@pytest.fixture
async def served():
    world = World()
    world.add_person(1, "Ann", started=True)
    world.add_person(2, "Bob", started=False)
    world.add_group(-5, "G", [1, 2], admins=[1])
    emulator = Emulator(world)
    url = await emulator.start()
    async with httpx.AsyncClient(base_url=f"{url}/bot{TOKEN}", timeout=10) as client:
        yield world, emulator, client
    await emulator.stop()


async def test_methods_answer_in_the_bot_apis_shapes(served):
    _, _, client = served
    me = (await client.post("/getMe")).json()
    assert me["ok"] and me["result"]["is_bot"]
    sent = (
        await client.post(
            "/sendMessage",
            data={
                "chat_id": "-5",
                "text": "hi",
                "reply_markup": '{"inline_keyboard": [[{"text": "a", "callback_data": "x"}]]}',
            },
        )
    ).json()
    assert sent["result"]["chat"]["id"] == -5 and sent["result"]["reply_markup"]["inline_keyboard"]
    edit = await client.post("/editMessageText", data={"chat_id": "-5", "message_id": "99", "text": "x"})
    assert edit.status_code == 400 and edit.json() == {
        "ok": False,
        "error_code": 400,
        "description": "Bad Request: message to edit not found",
    }
    dm = await client.post("/sendMessage", data={"chat_id": "2", "text": "cards"})
    assert dm.status_code == 403 and "can't initiate conversation" in dm.json()["description"]
    member = (await client.post("/getChatMember", data={"chat_id": "-5", "user_id": "1"})).json()
    assert member["result"]["status"] == "creator"
    admins = (await client.post("/getChatAdministrators", data={"chat_id": "-5"})).json()
    assert [m["user"]["id"] for m in admins["result"]] == [1]
    unknown = await client.post("/sendPoll", data={"chat_id": "-5"})
    assert unknown.status_code == 404


async def test_long_polling_waits_for_an_update(served):
    world, emulator, client = served
    poll = asyncio.create_task(client.post("/getUpdates", data={"offset": "0", "timeout": "5"}))
    await asyncio.sleep(0.2)
    assert not poll.done()
    world.post(1, -5, "/start")
    await emulator.notify()
    answer = (await poll).json()
    assert answer["result"][0]["message"]["text"] == "/start"
    started = time.monotonic()
    empty = (await client.post("/getUpdates", data={"offset": "2", "timeout": "0.3"})).json()
    assert empty["result"] == [] and time.monotonic() - started >= 0.25


@pytest.mark.parametrize(
    ("faults", "status"),
    [(Faults(rate_limited=1.0, retry_after=7), 429), (Faults(server_error=1.0), 502)],
)
async def test_error_faults(served, faults, status):
    world, emulator, client = served
    emulator.faults = faults
    answer = await client.post("/sendMessage", data={"chat_id": "-5", "text": "x"})
    assert answer.status_code == status
    if status == 429:
        assert answer.json()["parameters"] == {"retry_after": 7}
    assert world.requests[-1].error == ("rate_limited" if status == 429 else "server_error")


async def test_slow_and_dropped_faults(served):
    _, emulator, client = served
    emulator.faults = Faults(slow=1.0, slow_seconds=0.4)
    started = time.monotonic()
    assert (await client.post("/sendMessage", data={"chat_id": "-5", "text": "x"})).status_code == 200
    assert time.monotonic() - started >= 0.4
    emulator.faults = Faults(dropped=1.0)
    with pytest.raises(httpx.HTTPError):
        await client.post("/sendMessage", data={"chat_id": "-5", "text": "x"})
    assert emulator.faults.injected == {"dropped": 1}


async def test_the_group_counter_flags_more_than_20_requests_a_minute(served):
    world, _, client = served
    for number in range(21):
        await client.post("/sendMessage", data={"chat_id": "-5", "text": f"m{number}"})
    await client.post("/sendMessage", data={"chat_id": "1", "text": "a DM does not count"})
    assert world.group_peaks() == {-5: 21}
    assert world.flagged_groups() == {-5: 21}
