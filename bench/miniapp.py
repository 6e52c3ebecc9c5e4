"""Benchmark 7: the Mini App's push. The bot in process (``faketg.harness.start_bot``) serves
its web app (``bot.web.server.build_web_app`` with ``PAIJU_WEBAPP_URL``) on a real local port; a separate
process opens N Server-Sent Events streams to it (N = 100; 20 quick), each as its own member of the
group (4 seated, the rest spectators), with initData signed as Telegram would (in a header, for a
ticket that opens the stream, asked again when told the membership checks are busy). The bot process then
makes A actions, one at a time (a person joins, then leaves: each a press of the table's button
through ``Application.process_update``, which the table message and every open page then show),
and waits until every stream has the new table before the next.

Reported: push latency, from just before the press to each stream's receipt of the new view, p50
and p99 over every (action, stream) pair, and the same for the slowest stream of each action
("every open Mini App updated"); the bot process's CPU time per action (``time.process_time`` over
the action until all N have it: the press, the table message, the views made and N written, the
write on SQLite's writer thread); the views made per action (one per player with a page open, one
for the spectators of a language); the bot process's resident memory with the pages open and once
they are closed.

    python -m bench.miniapp [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web

from bench.report import median, percentile
from bot.display.views.common import MINI_APP
from bot.web.miniapp.auth import signed_for
from bot.web.miniapp.hub import Hub
from bot.web.miniapp.routes import HEADER
from bot.web.server import build_web_app
from faketg.harness import GROUP, make_world, start_bot, stop_bot

TOKEN = "123456:BENCH-TOKEN"
FIRST_VIEWER = 10_000


def _listen(port: int, table: int, viewers: list[int], pipe) -> None:  # the client process
    asyncio.run(_listen_async(port, table, viewers, pipe))


async def _listen_async(port: int, table: int, viewers: list[int], pipe) -> None:
    seen: dict[int, dict[int, float]] = {viewer: {} for viewer in viewers}  # viewer -> version -> when
    latest: dict[int, int] = {}
    opened = asyncio.Event()

    async def one(session: aiohttp.ClientSession, viewer: int) -> None:
        init = signed_for(viewer, f"p{viewer}", TOKEN, time.time(), start_param=f"t{table}")
        api, query = f"http://127.0.0.1:{port}/miniapp/api/", {"table": str(table)}
        while True:  # a ticket, as the page gets one; asked again when the checks are busy, as it does
            async with session.post(api + "ticket", params=query, headers={HEADER: init}) as got:
                if got.status == 503:
                    await asyncio.sleep(float(got.headers["Retry-After"]))
                    continue
                assert got.status == 200, got.status
                ticket = (await got.json())["ticket"]
                break
        async with session.get(api + "events", params={**query, "ticket": ticket}) as response:
            assert response.status == 200, response.status
            async for line in response.content:
                if line.startswith(b"data: "):
                    version = json.loads(line[6:])["version"]
                    seen[viewer].setdefault(version, time.time())
                    latest[viewer] = version
                    if len(latest) == len(viewers):
                        opened.set()

    loop = asyncio.get_running_loop()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=None)
    ) as session:
        tasks = [asyncio.create_task(one(session, viewer)) for viewer in viewers]
        await opened.wait()
        pipe.send("open")
        while True:
            wanted = await loop.run_in_executor(None, pipe.recv)
            if wanted is None:
                break
            while min(latest.values()) < wanted:
                await asyncio.sleep(0.001)
            pipe.send("all")
        pipe.send(seen)
        for task in tasks:
            task.cancel()


async def measure(streams: int, actions: int) -> dict[str, float]:
    world = make_world()
    viewers = [*range(FIRST_VIEWER, FIRST_VIEWER + streams - 4), 1, 2, 3, 4]
    for viewer in viewers[: streams - 4]:
        world.add_person(viewer, f"p{viewer}")
        world.chats[GROUP].members.add(viewer)
    with tempfile.TemporaryDirectory() as folder:
        bot = await start_bot(
            world, str(Path(folder) / "bench.sqlite3"), token=TOKEN, webapp_url="https://x/miniapp/"
        )
        runner = web.AppRunner(build_web_app(bot.application, bot.runtime.settings), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        d = bot.driver
        await d.send(1, GROUP, "/newgame muxi")
        for person in (2, 3, 4):
            await d.press(person, GROUP, "加入")
        live = bot.runtime.tables.get(GROUP)
        ours, theirs = multiprocessing.get_context("spawn").Pipe()
        child = multiprocessing.get_context("spawn").Process(
            target=_listen, args=(port, live.table_id, viewers, theirs)
        )
        child.start()
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, ours.recv) == "open"
        hub = bot.runtime.watchers
        assert isinstance(hub, Hub)
        rss_open, made = _rss_mb(), hub.rendered
        started: dict[int, float] = {}
        cpu: list[float] = []
        for number in range(actions):
            label = "离桌" if number % 2 else "加入"
            person = 5
            cpu_before, started_at = time.process_time(), time.time()
            await d.press(person, GROUP, label)
            started[live.engine.version] = started_at
            ours.send(live.engine.version)
            assert await loop.run_in_executor(None, ours.recv) == "all"
            cpu.append(time.process_time() - cpu_before)
        ours.send(None)
        seen = await loop.run_in_executor(None, ours.recv)
        child.join(10)
        views_per_action = (hub.rendered - made) / actions
        await d.press(5, GROUP, "离桌" if actions % 2 else "加入")  # written to: the closed pages are seen
        while hub.count():
            await asyncio.sleep(0.01)
        rss_closed = _rss_mb()
        await runner.cleanup()
        MINI_APP.set(None, None)
        await stop_bot(bot)
    each = [
        at - started[version] for got in seen.values() for version, at in got.items() if version in started
    ]
    slowest = [max(seen[viewer][version] for viewer in seen) - at for version, at in started.items()]
    return {
        "streams": streams,
        "actions": actions,
        "p50_ms": median(each) * 1000,
        "p99_ms": percentile(each, 99) * 1000,
        "all_p50_ms": median(slowest) * 1000,
        "all_p99_ms": percentile(slowest, 99) * 1000,
        "cpu_ms_per_action": median(cpu) * 1000,
        "views_per_action": views_per_action,
        "rss_open_mb": rss_open,
        "rss_closed_mb": rss_closed,
    }


def _rss_mb() -> float:
    """This process's resident memory (Linux), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    streams, actions = (20, 20) if args.quick else (100, 200)
    result = asyncio.run(measure(streams, actions))
    print(
        f"| 7 | Mini App push, {result['streams']} open pages, {result['actions']} actions | "
        f"each page p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms; every page p50 "
        f"{result['all_p50_ms']:.1f} ms, p99 {result['all_p99_ms']:.1f} ms; bot CPU "
        f"{result['cpu_ms_per_action']:.1f} ms per action; {result['views_per_action']:.1f} views made "
        f"per action; bot RSS {result['rss_open_mb']:.0f} MB with the pages open, "
        f"{result['rss_closed_mb']:.0f} MB once closed |"
    )


if __name__ == "__main__":
    main()
