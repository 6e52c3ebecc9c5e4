"""The Mini App of the real ``python -m bot`` (by webhook, against the emulator) under hostile use,
as issue 24 found it: one person or a crowd opening streams until the process nears its limit of
open files (here lowered to ``OPEN_FILES`` with ``prlimit``), and a flood of membership checks by
people who are not in the group while Telegram answers them slowly. Meanwhile ``/healthz`` answers
and a press in another group is handled; the log stays short."""

from __future__ import annotations

import asyncio
import json
import sys
import time

import aiohttp
import pytest

from bot.web.miniapp.auth import signed_for
from bot.web.miniapp.members import IN_ALL
from bot.web.miniapp.routes import HEADER
from bot.web.miniapp.streams import PER_PERSON, RESERVED_FILES
from faketg.harness import GROUP, make_world
from faketg.server import Faults
from tests.process.e2e.process import TOKEN, limited_python, make_stage, needs_prlimit
from tests.waiting import until

pytestmark = needs_prlimit

OPEN_FILES = RESERVED_FILES + 128  # the bot's limit of open files: room for 128 streams
CROWD_GROUP = -100_555
CROWD = range(100, 150)  # members of the crowd's group, each with pages of their own
OUTSIDERS = range(50_000, 50_400)  # on Telegram, not in the group: each signs with their own account
API = "/miniapp/api/"


def world_with_a_crowd():
    world = make_world()
    for person in CROWD:
        world.add_person(person, f"看客{person}")
    for person in OUTSIDERS:
        world.add_person(person, f"路过{person}")
    world.add_group(CROWD_GROUP, "大群", [1, 2, *CROWD])
    return world


async def start_limited(stage, tmp_path, monkeypatch):
    """The bot by webhook with the Mini App on, started under ``prlimit --nofile=OPEN_FILES``."""
    stage.bot.webhook = True
    stage.bot.extra_env["PAIJU_WEBAPP_URL"] = "https://paiju.example/miniapp/"
    with monkeypatch.context() as patched:
        patched.setattr(sys, "executable", str(limited_python(tmp_path, OPEN_FILES)))
        await stage.bot.start()


@pytest.fixture
async def crowd_stage(tmp_path, monkeypatch):
    staged = await make_stage(world_with_a_crowd(), tmp_path, Faults())
    await start_limited(staged, tmp_path, monkeypatch)
    yield staged
    await staged.bot.stop()
    await staged.emulator.stop()


def init(person, table):
    return signed_for(person, f"p{person}", TOKEN, time.time(), start_param=f"t{table}")


async def open_stream(session, url, person, table, tries=10):
    """``person``'s page opened: (status, the open stream or None). As the page does, it asks again
    when told the membership checks are busy (a burst of pages at once), a few times."""
    for _ in range(tries):
        async with session.post(
            url + API + "ticket", params={"table": str(table)}, headers={HEADER: init(person, table)}
        ) as got:
            if got.status == 200:
                code = (await got.json())["ticket"]
                break
            if got.status != 503 or (await got.json())["error"] != "busy":
                return got.status, None
            await asyncio.sleep(float(got.headers["Retry-After"]))
    else:
        return 503, None
    stream = await session.get(url + API + "events", params={"table": str(table), "ticket": code})
    if stream.status != 200:
        stream.close()
        return stream.status, None
    while not (await stream.content.readline()).startswith(b"data: "):
        pass
    return 200, stream


async def open_table_id(stage, chat):
    """The table opened in ``chat``, read from its message's Mini App button (waited for, bounded:
    on a busy machine the message may come after the emulator's quiet moment)."""
    await table_with_button(stage, chat, "🀄 打开牌桌")
    message = stage.driver.message_with(chat, label="🀄 打开牌桌")
    urls = [button.get("url", "") for row in message.reply_markup["inline_keyboard"] for button in row]
    return int(next(url for url in urls if "startapp=t" in url).rsplit("startapp=t", 1)[1])


async def table_with_button(stage, chat, label, seconds=30.0):
    """Wait (bounded) until the bot's message in ``chat`` offers ``label``: under a flood its
    answer may come after the emulator's quiet moment."""
    async with asyncio.timeout(seconds):
        while not any(label in str(b["text"]) for m in stage.world.bot_messages(chat) for b in m.buttons):
            await asyncio.sleep(0.05)


async def table_showing(stage, chat, text, seconds=30.0):
    async with asyncio.timeout(seconds):
        while text not in stage.driver.table(chat):
            await asyncio.sleep(0.05)


async def test_streams_flooded_to_the_open_file_limit_leave_the_bot_answering(crowd_stage):
    stage = crowd_stage
    url = stage.bot.http_url
    await stage.driver.send(1, CROWD_GROUP, "/newgame muxi")
    table = await open_table_id(stage, CROWD_GROUP)
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=30)) as session:
        # one person opens page after page
        one = [await open_stream(session, url, 2, table) for _ in range(3 * PER_PERSON)]
        assert [status for status, _ in one] == [200] * PER_PERSON + [429] * (2 * PER_PERSON)
        # a crowd opens more pages than the process has open files to spare
        crowd = await asyncio.gather(*(open_stream(session, url, p, table) for p in CROWD for _ in range(3)))
        statuses = [status for status, _ in crowd]
        assert set(statuses) <= {200, 429, 503} and statuses.count(503) > 0
        streams = [stream for _, stream in one + crowd if stream is not None]
        assert len(streams) == OPEN_FILES - RESERVED_FILES

        # meanwhile: the bot answers /healthz and plays in another group
        async with session.get(url + "/healthz") as health:
            assert health.status == 200, await health.text()
        await stage.driver.send(4, GROUP, "/newgame muxi")
        await table_with_button(stage, GROUP, "加入")
        await stage.driver.press(5, GROUP, "加入")  # waits until the press is answered
        await table_showing(stage, GROUP, "阿珍")

        # the open pages see the table change; then they close, and the room is given back
        await stage.driver.press(100, CROWD_GROUP, "加入")
        seen = await asyncio.wait_for(read_data(streams[0]), 10)
        assert 100 in [seat["person"] for seat in seen["seats"]]
        for stream in streams:
            stream.close()
        await stage.driver.press(101, CROWD_GROUP, "加入")  # written to: the closed pages are seen
        status, again = await until_opened(session, url, 149, table)
        assert status == 200
        again.close()
    log = stage.bot.log.read_text()
    assert "out of system resource" not in log and "Traceback" not in log
    refusals = [line for line in log.splitlines() if "refused" in line]
    assert 1 <= len(refusals) <= 4, refusals  # a line per cause, not per request


async def read_data(stream):
    while True:
        line = await stream.content.readline()
        if line.startswith(b"data: "):
            return json.loads(line[6:])


async def until_opened(session, url, person, table, seconds=20.0):
    """A page of ``person`` opened, once the bot has room again (a bounded wait on that)."""
    async with asyncio.timeout(seconds):
        while True:
            status, stream = await open_stream(session, url, person, table)
            if status == 200:
                return status, stream
            await asyncio.sleep(0.2)


def checks_asked(stage) -> int:
    """The getChatMember calls Telegram answered (the emulator also notes each call it slows down,
    when the slowing starts: that note is not a call of its own)."""
    return sum(r.method == "getChatMember" and r.error != "slow" for r in stage.world.requests)


async def test_outsiders_flooding_membership_checks_cost_telegram_a_bounded_number(crowd_stage):
    stage = crowd_stage
    stage.emulator.faults.always["getChatMember"] = "slow"  # Telegram takes its time to answer
    stage.emulator.faults.slow_seconds = 0.5
    url = stage.bot.http_url
    await stage.driver.send(1, CROWD_GROUP, "/newgame muxi")
    table = await open_table_id(stage, CROWD_GROUP)
    before = checks_asked(stage)
    connector = aiohttp.TCPConnector(limit=200, force_close=True)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:

        async def state(person):
            headers = {HEADER: init(person, table)}
            async with session.get(
                url + API + "state", params={"table": str(table)}, headers=headers
            ) as answer:
                return answer.status

        # Waves of the outsiders' requests until the game elsewhere has gone on (bounded).
        statuses: list[int] = []
        played = asyncio.Event()

        async def flooding():
            give_up = asyncio.get_running_loop().time() + 30  # bounded in time, whatever happens
            while not played.is_set() and asyncio.get_running_loop().time() < give_up:
                statuses.extend(await asyncio.gather(*(state(person) for person in OUTSIDERS)))

        flood = asyncio.create_task(flooding())
        try:
            # The game elsewhere, during the flood: each step waited for by what it shows, not by
            # the bot falling quiet (its membership checks go on all along).
            stage.world.post(4, GROUP, "/newgame muxi")
            await stage.emulator.notify()
            await table_with_button(stage, GROUP, "加入")
            message_id, data = stage.driver.button_data(GROUP, "加入")
            query = str(stage.world.press(5, GROUP, message_id, data)["callback_query"]["id"])
            await stage.emulator.notify()
            await until(lambda: query not in stage.world.open_queries, "阿珍's press answered")
            assert not flood.done(), "the game went on during the flood"
        finally:
            played.set()
            await flood
    assert set(statuses) <= {403, 503} and statuses.count(503) > 0
    asked = checks_asked(stage) - before
    assert 1 <= asked <= min(IN_ALL, len(OUTSIDERS)), asked  # (asked by the bot's checking bot)
    await table_showing(stage, GROUP, "阿珍")
    log = stage.bot.log.read_text()
    assert "Traceback" not in log
    assert len([line for line in log.splitlines() if "refused" in line]) <= 4
