"""Several ``python -m bot`` workers on one PostgreSQL database behind one webhook, against the
emulator over HTTP, as an operator runs them: a reverse proxy in front (``Front``: each post to the
next worker alive, as nginx's ``proxy_next_upstream`` does), one shared secret, and the people's
driver. A table is played by what people see (the buttons shown), not by timing: the workers hand
updates over through the inbox, a little after Telegram's post is answered.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

from faketg.driver import Driver
from faketg.server import Emulator
from faketg.world import JSON, World
from tests.process.e2e.process import WEBHOOK_PATH, BotProcess, free_port
from tests.waiting import until

SECRET = "the-workers-shared-webhook-secret"
PARTITIONS = "8"  # (fewer than the default 32: shared out again in a step or two)


class Front:
    """The operator's reverse proxy: each post goes to the next worker in turn; a worker that does
    not answer (killed) is passed over for the next."""

    def __init__(self) -> None:
        self.workers: list[BotProcess] = []
        self._turn = itertools.count()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post(WEBHOOK_PATH, self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}"
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        body = await request.read()
        headers = {
            k: v
            for k, v in request.headers.items()
            if k.lower() in ("content-type", "x-telegram-bot-api-secret-token")
        }
        start = next(self._turn)
        for offset in range(len(self.workers)):
            worker = self.workers[(start + offset) % len(self.workers)]
            try:
                async with self._session.post(
                    worker.http_url + WEBHOOK_PATH, data=body, headers=headers
                ) as answer:
                    return web.Response(status=answer.status, body=await answer.read())
            except (aiohttp.ClientConnectionError, TimeoutError):
                continue  # not there (killed, or not started yet): the next one
        return web.Response(status=502)

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()


@dataclass
class Workers:
    """The emulator, the world, the front proxy and the workers on one database."""

    world: World
    emulator: Emulator
    front: Front
    database_url: str
    folder: Path
    workers: list[BotProcess] = field(default_factory=list)

    @property
    def driver(self) -> Driver:
        return Driver.remote(self.world, self._deliver)

    async def _deliver(self, update: JSON) -> None:
        """Telegram posts the update; a press is waited for until it is answered (by its owner)."""
        await self.emulator.notify()
        update_id = int(update["update_id"])
        query = update.get("callback_query")
        query_id = str(query["id"]) if isinstance(query, dict) else None
        await until(
            lambda: (
                self.emulator.taken_offset > update_id
                and (query_id is None or query_id not in self.world.open_queries)
            ),
            f"update {update_id} taken and answered",
        )

    async def start_worker(self, **env: str) -> BotProcess:
        number = len(self.workers)
        worker = BotProcess(
            self.emulator,
            self.folder / f"unused-{number}.sqlite3",
            self.folder / f"worker-{number}.log",
            webhook=True,
        )
        worker.extra_env.update(
            PAIJU_DATABASE_URL=self.database_url,
            PAIJU_WEBHOOK_URL=self.front.url + WEBHOOK_PATH,
            PAIJU_WEBHOOK_SECRET=SECRET,
            PAIJU_METRICS="local",
            PAIJU_PARTITIONS=PARTITIONS,
            **env,
        )
        self.workers.append(worker)
        self.front.workers.append(worker)
        await worker.start()
        return worker

    async def stop(self) -> None:
        for worker in self.workers:
            if worker.process is not None and worker.process.returncode is None:
                await worker.stop()
        await self.front.stop()
        await self.emulator.stop()


async def make_workers(world: World, folder: Path, database_url: str) -> Workers:
    emulator = Emulator(world)
    await emulator.start()
    front = Front()
    await front.start()
    return Workers(world, emulator, front, database_url, folder)


def world_of(tables: int, seats: int = 3) -> tuple[World, dict[int, list[int]]]:
    """A world with ``tables`` groups, each with its own ``seats`` people (a person sits at one table)."""
    world = World()
    groups: dict[int, list[int]] = {}
    for index in range(tables):
        chat_id = -1_000_000 - index
        people = [1000 * (index + 1) + seat for seat in range(1, seats + 1)]
        for person in people:
            world.add_person(person, f"玩家{person}")
        world.add_group(chat_id, f"牌局群{index + 1}", people)
        groups[chat_id] = people
    return world, groups
