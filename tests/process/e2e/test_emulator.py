"""The emulator itself: the Bot API's shapes over HTTP, long polling, and each fault switch."""

import asyncio
import time

import httpx
import pytest

from bench.crowd import LANGUAGE, Crowd, is_refusal, name_of, seat_people
from bench.figures import Spread
from bench.people import TableSpec
from bench.stage import WatchedWorld
from bot.display.i18n import t
from faketg.limits import FloodLimits
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
    after = str(answer["result"][0]["update_id"] + 1)
    started = time.monotonic()
    empty = (await client.post("/getUpdates", data={"offset": after, "timeout": "0.3"})).json()
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


async def test_limits_given_to_the_emulator_answer_429_in_the_bot_apis_shape(served):
    world, _, client = served
    limits = FloodLimits()
    Emulator(world, limits=limits)  # a second front door on the same world: the limits are the world's
    assert world.limits is limits
    for number in range(20):
        assert (
            await client.post("/sendMessage", data={"chat_id": "-5", "text": f"m{number}"})
        ).status_code == 200
    answer = await client.post("/sendMessage", data={"chat_id": "-5", "text": "one too many"})
    assert answer.status_code == 429
    body = answer.json()
    assert body["parameters"]["retry_after"] in range(59, 61)
    assert body["description"] == f"Too Many Requests: retry after {body['parameters']['retry_after']}"
    assert world.requests[-1].error == 429
    assert (await client.post("/sendMessage", data={"chat_id": "1", "text": "a DM"})).status_code == 200


# -- what the benchmarks read off the emulator -------------------------------------------------------------
def test_a_percentile_reaching_a_sample_still_waiting_is_only_a_lower_bound():
    spread = Spread()
    for value in (0.010, 0.020, 0.030):
        spread.add(value)
    assert spread.at(0.99) == (30.0, False) and spread.below(0.99, 31)
    spread.add(0.005, censored=True)  # still waiting after 5 ms when the run ended: it sorts first
    assert spread.at(0.5) == (10.0, True) and not spread.below(0.99, 1_000)
    assert spread.text().startswith("≥ 10 ms / ≥ 30 ms")


def test_the_people_tell_a_refusal_from_an_accepted_press():
    assert is_refusal("还没轮到你") and is_refusal("It's not your turn")
    assert is_refusal("入座至少需要 1,000 金币")
    assert not is_refusal(None) and not is_refusal("") and not is_refusal("🂠 K♠ A♠ 🃏")


async def test_the_people_see_their_prompts_and_the_timeouts_a_table_shows():
    """The simulated people of benchmarks 5 and 6 read prompts off the table message and their DMs the
    moment the emulator changes them, and note the timeouts a table shows."""
    world = WatchedWorld()
    spec = TableSpec("muxi", -77, (1_000_000, 1_000_001, 1_000_002))
    seat_people(world, [spec])
    crowd = Crowd(world, Emulator(world), [spec])
    table = crowd.tables[0]
    ann, bob, cy = (table.people[person] for person in spec.people)
    lobby = [f"{n}. {name_of(p)} {t(LANGUAGE, 'lobby.not_ready')}" for n, p in enumerate(spec.people, 1)]
    keyboard = {"inline_keyboard": [[{"text": "开始", "callback_data": "m:9:0:ready"}]]}
    world.call("sendMessage", {"chat_id": -77, "text": "\n".join(lobby), "reply_markup": keyboard})
    assert table.table_id == 9 and crowd.prompt(ann)[:2] == ("table", "ready")
    play = [
        f"1. {name_of(bob.id)}  {t(LANGUAGE, 'muxi.status.waiting')}",
        f"2. {name_of(cy.id)}  {t(LANGUAGE, 'muxi.status.forfeit')}",
    ]
    buttons = [
        {"text": "补牌", "callback_data": "m:9:1:draw"},
        {"text": "不补", "callback_data": "m:9:1:stand"},
    ]
    world.call(
        "editMessageText",
        {
            "chat_id": -77,
            "message_id": 1,
            "text": "\n".join(play),
            "reply_markup": {"inline_keyboard": [buttons]},
        },
    )
    assert crowd.prompt(bob)[:2] == ("table", "move") and crowd.prompt(ann) is None
    assert [(timeout.kind, timeout.person) for timeout in crowd.seen.timeouts] == [("forfeit", cy.id)]
    world.call(
        "sendMessage",
        {"chat_id": ann.id, "text": "your cards", "reply_markup": {"inline_keyboard": [buttons]}},
    )
    assert crowd.prompt(ann)[:2] == ("dm", "move")
    crowd.stop()
