"""Telegram's rate limits in the emulator (``faketg.limits``), on a clock driven by hand; and a 429
over HTTP reaching the bot's request layer as python-telegram-bot's ``RetryAfter``."""

import datetime
import time

import pytest
from telegram import Bot
from telegram.error import RetryAfter

from bot.send.aiohttp_request import AiohttpRequest
from faketg.limits import TOO_OLD, FloodLimits, group_peaks
from faketg.server import Emulator
from faketg.world import ApiError, World

GROUP, OTHER_GROUP, ANN, BOB = -100, -200, 1, 2


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def make_world(limits: FloodLimits | None = None) -> tuple[World, Clock]:
    clock = Clock()
    world = World(clock=clock, limits=limits)
    world.add_person(ANN, "Ann")
    world.add_person(BOB, "Bob")
    world.add_group(GROUP, "G", [ANN, BOB])
    world.add_group(OTHER_GROUP, "H", [ANN, BOB])
    return world, clock


def send(world: World, chat: int, text: str = "x") -> dict:
    return world.call("sendMessage", {"chat_id": chat, "text": text})


def refused(world: World, method: str, params: dict) -> ApiError:
    with pytest.raises(ApiError) as caught:
        world.call(method, params)
    return caught.value


def test_off_by_default_nothing_is_refused():
    world, _ = make_world()
    for number in range(30):
        send(world, GROUP, f"m{number}")
    assert all(request.error is None for request in world.requests)


def test_a_group_gets_20_requests_in_any_60_s_sends_edits_and_deletes_alike():
    world, clock = make_world(FloodLimits())
    start = clock.now
    first = send(world, GROUP, "first")
    for number in range(9):
        clock.now += 1
        send(world, GROUP, f"m{number}")
    for number in range(5):
        clock.now += 1
        world.call(
            "editMessageText", {"chat_id": GROUP, "message_id": first["message_id"], "text": f"e{number}"}
        )
    clock.now += 1
    extra = send(world, GROUP)
    world.call("deleteMessage", {"chat_id": GROUP, "message_id": extra["message_id"]})
    for _ in range(3):
        send(world, GROUP)
    assert sum(request.error is None for request in world.requests) == 20
    assert clock.now == start + 15

    error = refused(world, "sendMessage", {"chat_id": GROUP, "text": "one too many"})
    assert error.code == 429
    assert error.parameters == {"retry_after": 45}  # the first request leaves the window at start + 60
    assert error.description == "Too Many Requests: retry after 45"
    assert world.requests[-1].error == 429
    clock.now = start + 59.5
    edit = {"chat_id": GROUP, "message_id": first["message_id"], "text": "y"}
    assert refused(world, "editMessageText", edit).parameters == {"retry_after": 1}  # rounded up
    send(world, OTHER_GROUP)  # another group has its own budget
    clock.now = start + 60  # the first request left the window; the refused ones never counted
    send(world, GROUP)
    assert refused(world, "sendMessage", {"chat_id": GROUP, "text": "z"}).parameters == {"retry_after": 1}
    assert group_peaks(world.requests, world.chats) == {GROUP: 20, OTHER_GROUP: 1}
    assert group_peaks(world.requests, world.chats, accepted_only=False)[GROUP] == 23


def test_a_private_chat_allows_a_burst_of_3_then_one_a_second():
    world, clock = make_world(FloodLimits())
    for number in range(3):
        send(world, ANN, f"m{number}")
    error = refused(world, "sendMessage", {"chat_id": ANN, "text": "fourth"})
    assert (error.code, error.parameters) == (429, {"retry_after": 1})
    send(world, BOB)  # Bob's DM is another chat
    clock.now += 1.0
    send(world, ANN)
    assert refused(world, "sendMessage", {"chat_id": ANN, "text": "again"}).code == 429
    for _ in range(5):  # then one a second, steadily
        clock.now += 1.0
        send(world, ANN)
    clock.now += 3.0  # quiet for 3 s: a burst of 3 again
    for _ in range(3):
        send(world, ANN)
    assert refused(world, "sendMessage", {"chat_id": ANN, "text": "no"}).code == 429


def test_callback_answers_are_never_limited_but_grow_too_old_after_15_seconds():
    world, clock = make_world(FloodLimits(pessimistic=True))
    table = send(world, GROUP, "table")
    queries = [
        world.press(ANN, GROUP, table["message_id"], f"d{n}")["callback_query"]["id"] for n in range(60)
    ]
    for query in queries[:50]:
        assert world.call("answerCallbackQuery", {"callback_query_id": query}) is True
    clock.now += 15.5
    late = queries[50]
    error = refused(world, "answerCallbackQuery", {"callback_query_id": late})
    assert (error.code, error.description) == (400, TOO_OLD)
    assert world.requests[-1].error == 400
    fresh = world.press(BOB, GROUP, table["message_id"], "now")["callback_query"]["id"]
    assert world.call("answerCallbackQuery", {"callback_query_id": fresh}) is True


def test_the_pessimistic_mode_adds_30_a_second_over_every_request_naming_a_chat():
    world, clock = make_world(FloodLimits(pessimistic=True))
    for person in range(10, 40):
        world.add_person(person, f"P{person}")
    for person in range(10, 39):
        send(world, person)
    world.call("getChatMember", {"chat_id": GROUP, "user_id": ANN})  # reading a chat names it too
    error = refused(world, "sendMessage", {"chat_id": 39, "text": "31st"})
    assert (error.code, error.parameters) == (429, {"retry_after": 1})
    assert world.call("getMe", {})  # names no chat
    clock.now += 1.0
    send(world, 39)
    world_plain, _ = make_world(FloodLimits())
    for person in range(10, 50):
        world_plain.add_person(person, f"P{person}")
        send(world_plain, person)  # without the pessimistic mode, 40 chats at once are fine


def test_a_forced_429_holds_one_chat_for_its_period():
    limits = FloodLimits()
    world, clock = make_world(limits)
    limits.force(GROUP, 30, now=clock.now)
    error = refused(world, "sendMessage", {"chat_id": GROUP, "text": "x"})
    assert (error.code, error.parameters, error.description) == (
        429,
        {"retry_after": 30},
        "Too Many Requests: retry after 30",
    )
    send(world, OTHER_GROUP)
    send(world, ANN)
    clock.now += 10.2
    assert refused(world, "editMessageText", {"chat_id": GROUP, "message_id": 1, "text": "y"}).parameters == {
        "retry_after": 20
    }
    clock.now += 19.8
    send(world, GROUP)
    limits.force(OTHER_GROUP, 5, retry_after=60, now=clock.now)
    assert refused(world, "sendMessage", {"chat_id": OTHER_GROUP, "text": "x"}).parameters == {
        "retry_after": 60
    }
    assert limits.refused == {"forced": 3}


def seconds(error: RetryAfter) -> float:
    value = error.retry_after
    return value.total_seconds() if isinstance(value, datetime.timedelta) else float(value)


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # retry_after as an int
async def test_over_http_a_429_reaches_the_bots_request_layer_as_retry_after():
    limits = FloodLimits()
    world, _ = make_world()
    world.clock = time.time  # the forced period runs on real time here
    emulator = Emulator(world, limits=limits)
    assert world.limits is limits
    url = await emulator.start()
    bot = Bot("1:T", base_url=f"{url}/bot", request=AiohttpRequest())
    try:
        async with bot:
            await bot.send_message(GROUP, "fine")
            limits.force(GROUP, 30, now=world.clock())
            with pytest.raises(RetryAfter) as caught:
                await bot.send_message(GROUP, "refused")
            assert 29 <= seconds(caught.value) <= 30
            await bot.send_message(ANN, "a DM is not held up")
    finally:
        await emulator.stop()
    assert [request.error for request in world.requests if request.method == "sendMessage"] == [
        None,
        429,
        None,
    ]
