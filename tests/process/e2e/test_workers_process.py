"""Several workers (``python -m bot`` on PostgreSQL) behind one webhook, the whole process against
the emulator (issue 29): tables played to the end at both workers, every coin accounted for and
every update handled once; a worker SIGKILLed mid-round at several tables, its tables taken over by
the other within the target and finished, nobody charged twice, their deadlines kept; a worker
started later takes its share without a table held by two."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time

import aiohttp
import asyncpg
import pytest

from faketg.world import World
from storage.partitions import partition_of
from tests.postgres_server import waits_on_a_lock
from tests.process.e2e.process import ROOT
from tests.process.e2e.workers_stage import PARTITIONS as WORKERS_PARTITIONS
from tests.process.e2e.workers_stage import Workers, make_workers, world_of
from tests.waiting import until

PARTITIONS = int(WORKERS_PARTITIONS)


@pytest.fixture
async def stage_of(tmp_path, postgres_url):
    made: list[Workers] = []

    async def make(world: World) -> Workers:
        made.append(await make_workers(world, tmp_path, postgres_url))
        return made[-1]

    yield make
    for stage in made:
        await stage.stop()


async def metric(worker, name: str) -> float:
    async with aiohttp.ClientSession() as session, session.get(worker.http_url + "/metrics") as answer:
        text = await answer.text()
    found = re.search(rf"^{name} ([0-9.e+]+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def health(worker) -> dict:
    async with aiohttp.ClientSession() as session, session.get(worker.http_url + "/healthz") as answer:
        return await answer.json()


async def owned(stage: Workers) -> list[int]:
    return [
        (await health(worker))["partitions_owned"]
        for worker in stage.workers
        if worker.process.returncode is None
    ]


def check(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storage", "check", url], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


async def test_twenty_tables_at_two_workers_are_played_to_the_end_each_update_handled_once(
    stage_of, postgres_url
):
    world, groups = world_of(20)
    stage = await stage_of(world)
    first, second = await stage.start_worker(), await stage.start_worker()
    await until(lambda: owned(stage), "both workers report")
    await until(async_equal(lambda: owned(stage), [PARTITIONS // 2] * 2), "the partitions shared out")

    games = {chat_id: ("muxi" if index % 2 else "showhand") for index, chat_id in enumerate(groups)}

    async def play(chat_id: int) -> None:
        people = groups[chat_id][: 3 if games[chat_id] == "muxi" else 2]
        await stage.driver.open_table(chat_id, people, games[chat_id])
        await stage.driver.play_to_the_end(chat_id, people)

    await asyncio.gather(*(play(chat_id) for chat_id in groups))
    assert all(stage.driver.settled(chat_id) for chat_id in groups)

    result = check(postgres_url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "20 open tables" in result.stdout  # each round settled; the tables wait for the next
    posted = {post.update_id for post in stage.emulator.webhook.posts if post.status == 200}
    handled = [await metric(worker, "paiju_inbox_updates_total") for worker in (first, second)]
    assert sum(handled) == len(posted), (handled, len(posted))  # every update handled, once
    assert all(count > 0 for count in handled)  # by both
    assert await metric(first, "paiju_inbox_depth") == 0


def async_equal(read, expected):
    async def equal() -> bool:
        return await read() == expected

    return equal


async def balances_match_the_rounds(url: str) -> list[tuple[int, int, int]]:
    """People whose coins are not their grant plus what their recorded rounds say they won: a
    charge booked twice, or one lost (none, when all is well)."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT p.id, p.balance, (10000 + COALESCE(SUM(rr.net), 0))::bigint AS expected FROM people p"
            " LEFT JOIN round_results rr ON rr.person_id = p.id GROUP BY p.id, p.balance"
            " HAVING p.balance <> 10000 + COALESCE(SUM(rr.net), 0)"
        )
    finally:
        await conn.close()
    return [tuple(row) for row in rows]


async def test_a_worker_killed_mid_round_loses_its_tables_to_the_other_which_finishes_them(
    stage_of, postgres_url
):
    world, groups = world_of(8)
    stage = await stage_of(world)
    env = {"PAIJU_TURN_SECONDS": "10"}
    doomed, survivor = await stage.start_worker(**env), await stage.start_worker(**env)
    await until(async_equal(lambda: owned(stage), [PARTITIONS // 2] * 2), "the partitions shared out")
    chats = list(groups)
    await asyncio.gather(*(stage.driver.open_table(chat_id, groups[chat_id], "muxi") for chat_id in chats))
    # Mid-round everywhere: the bank is taken at all but the last table, whose question waits.
    await asyncio.gather(*(press_bank(stage, chat_id, groups[chat_id]) for chat_id in chats[:-1]))
    at_doomed = (await health(doomed))["open_tables"]
    assert at_doomed > 0 and (await health(survivor))["open_tables"] > 0  # both hold tables

    await doomed.kill()  # SIGKILL: no chance to let go of anything
    killed = time.monotonic()
    await until(
        async_equal(lambda: owned(stage), [PARTITIONS]), "the survivor owns every partition", timeout=15
    )
    takeover = time.monotonic() - killed
    assert takeover < 10, takeover
    assert (await health(survivor))["open_tables"] == len(chats)

    await asyncio.gather(*(stage.driver.play_to_the_end(chat_id, groups[chat_id]) for chat_id in chats[:-1]))
    # Nobody presses at the last table: its deadline, re-armed by the survivor, moves it on.
    await until(lambda: timed_out(world, chats[-1], groups[chats[-1]]), "the last table's turn timed out")

    result = check(postgres_url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert await balances_match_the_rounds(postgres_url) == []  # nobody charged twice, nothing lost
    assert await metric(survivor, "paiju_worker_takeovers_total") >= PARTITIONS


async def press_bank(stage: Workers, chat_id: int, people: list[int]) -> None:
    await until(
        lambda: any("当庄" in stage.driver.buttons(where) for where in (chat_id, *people)), "the bank asked"
    )
    where = next(where for where in (chat_id, *people) if "当庄" in stage.driver.buttons(where))
    await stage.driver.press(people[0] if where == chat_id else where, where, "当庄")


def timed_out(world: World, chat_id: int, people: list[int]) -> bool:
    """The first asked to bank let the question run out: their DM says so (``muxi.did.timeout_banker``)."""
    return any("超时" in message.text for person in people for message in world.bot_messages(person))


async def test_a_worker_started_later_takes_its_share_and_no_table_is_held_by_two(stage_of, postgres_url):
    world, groups = world_of(6)
    stage = await stage_of(world)
    first = await stage.start_worker()
    await until(async_equal(lambda: owned(stage), [PARTITIONS]), "the first owns every partition")
    chats = list(groups)
    await asyncio.gather(*(stage.driver.open_table(chat_id, groups[chat_id], "muxi") for chat_id in chats))
    assert (await health(first))["open_tables"] == len(chats)

    await stage.start_worker()
    held_at_once: list[int] = []

    async def shared() -> bool:  # watched all along: never a table in two workers' memory
        reports = [await health(worker) for worker in stage.workers]
        held_at_once.append(sum(report["open_tables"] for report in reports))
        return [report["partitions_owned"] for report in reports] == [PARTITIONS // 2] * 2

    await until(shared, "the partitions shared out", timeout=30)
    assert max(held_at_once) == len(chats), held_at_once
    await asyncio.gather(*(stage.driver.play_to_the_end(chat_id, groups[chat_id]) for chat_id in chats))
    result = check(postgres_url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert await balances_match_the_rounds(postgres_url) == []


async def test_a_press_whose_save_a_killed_worker_never_finished_is_handled_by_the_other(
    stage_of, postgres_url
):
    """A worker is SIGKILLed while the save of a press's action waits (the test holds the table's
    row): nothing of the press was saved, its update's id included (it is saved in the action's
    transaction), so the update is still in the inbox, and the other worker, taking the chat over,
    handles it: the bank is taken by that press, not by its deadline."""
    world, groups = world_of(4)
    stage = await stage_of(world)
    workers = [await stage.start_worker(), await stage.start_worker()]
    await until(async_equal(lambda: owned(stage), [PARTITIONS // 2] * 2), "the partitions shared out")
    chats = list(groups)
    await asyncio.gather(*(stage.driver.open_table(chat_id, groups[chat_id], "muxi") for chat_id in chats))
    names = {(await health(worker))["worker"]: worker for worker in workers}
    conn, watcher = await asyncpg.connect(postgres_url), await asyncpg.connect(postgres_url)
    try:
        chat_id = chats[0]
        owner = await conn.fetchval(
            "SELECT owner FROM partitions WHERE partition = $1", partition_of(chat_id, PARTITIONS)
        )
        doomed = names[owner]
        table_id = await conn.fetchval("SELECT max(id) FROM tables WHERE chat_id = $1", chat_id)
        people = groups[chat_id]
        await until(
            lambda: any("当庄" in stage.driver.buttons(where) for where in (chat_id, *people)),
            "the bank asked",
        )
        where = next(where for where in (chat_id, *people) if "当庄" in stage.driver.buttons(where))
        person = people[0] if where == chat_id else where
        message_id, data = stage.driver.button_data(where, "当庄")
        async with conn.transaction():
            await conn.execute("SELECT 1 FROM tables WHERE id = $1 FOR UPDATE", table_id)
            world.press(person, where, message_id, data)
            await stage.emulator.notify()
            await until(lambda: waits_on_a_lock(watcher), "the press's save waits for the row")
            await doomed.kill()
    finally:
        await conn.close()
        await watcher.close()
    await until(async_equal(lambda: owned(stage), [PARTITIONS]), "the other owns every partition")
    banker = f"庄家 {world.people[person].first_name}"
    await until(lambda: banker in stage.driver.table(chat_id), "the bank taken by the press")
    assert not timed_out(world, chat_id, people)
    await stage.driver.play_to_the_end(chat_id, people)
    assert await balances_match_the_rounds(postgres_url) == []
