"""The real Application against the fake Telegram, in process (DESIGN.md, tests level 3): a world
with a group of friends (``make_world``), the bot started on it (``start_bot``) and stopped.

The one faketg module that imports the bot: the tests and the benchmarks both start the bot this
way, and the benchmarks import nothing from ``tests``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bot.app import build_application, close, prepare
from bot.botdata import App
from bot.send.rate_policy import Limits
from bot.settings import Settings
from bot.tables.runtime import Runtime
from faketg.driver import Driver
from faketg.request import FakeRequest
from faketg.world import ApiError, World

GROUP = -100_123
PEOPLE = {1: "阿明", 2: "小红", 3: "阿强", 4: "老王", 5: "阿珍", 6: "路人"}
ADMIN = 9
TOKEN = "123456:TEST-TOKEN"  # the bot's token unless a test gives another


@dataclass
class Bot:
    world: World
    application: App
    driver: Driver

    @property
    def runtime(self) -> Runtime:
        runtime = self.application.bot_data.runtime
        assert runtime is not None, "the bot is not started"
        return runtime

    async def balance(self, person: int) -> int:
        return await self.runtime.store.balance(person)

    async def fire_timer(self) -> None:
        """The running deadline of the group's table passes now."""
        live = self.runtime.tables.get(GROUP)
        assert live is not None and self.runtime.turns.moment(live.table_id) is not None, (
            "no deadline is armed"
        )
        self.runtime.turns.disarm(live.table_id)
        await self.runtime.turns.timeout(GROUP, live.table_id, live.engine.core.timer)
        await self.runtime.wait_idle()


def make_world() -> World:
    world = World()
    for person, name in PEOPLE.items():
        world.add_person(person, name)
    world.add_person(ADMIN, "群主")
    world.add_group(GROUP, "潮汕老乡", [*PEOPLE, ADMIN], admins=[ADMIN])
    return world


async def start_bot(
    world: World, database: str, *, seed: int = 1, limits: Limits | None = None, **options: object
) -> Bot:
    options.setdefault("table_requests_per_minute", 10_000)  # every edit at once: tests read the table
    options.setdefault("token", TOKEN)
    # The next round at once and an all-in's cards all at once, unless a test asks for the pause
    # and the reveal (tests/component/test_breath_and_reveal.py): the others read the table then.
    options.setdefault("pause_seconds", 0)
    options.setdefault("reveal_seconds", 0)
    settings = Settings(database=database, **options)
    application = build_application(
        settings,
        request=FakeRequest(world),
        limits=limits or Limits.unlimited(),  # every change sent at once, unless given
        rng=random.Random(seed),
    )
    await application.initialize()
    runtime = await prepare(application)
    return Bot(world, application, Driver.in_process(world, application, runtime.wait_idle))


async def stop_bot(bot: Bot) -> None:
    await close(bot.application)
    await bot.application.shutdown()


async def escape(driver: Driver, person: int, chat_id: int = GROUP) -> None:
    """Leave during one's round: the escape button, pressed twice (the first press tells the price)."""
    await driver.press(person, chat_id, "逃跑")
    popup = driver.world.popups[person][-1]
    assert "再按一次确认" in popup.text and popup.show_alert, popup
    await driver.press(person, chat_id, "逃跑")


def too_many(seconds: int = 1) -> ApiError:
    """Telegram's 429, to retry after ``seconds``."""
    return ApiError(429, f"Too Many Requests: retry after {seconds}", {"retry_after": seconds})


def refuse_once_per_chat(monkeypatch, world, matches) -> set[int]:
    """Telegram answers the first request in each chat that ``matches(method, params)`` with a 429
    (retry after 1 s); the chats refused so far."""
    real, refused = world.call, set()

    def call(method, params):
        chat = params.get("chat_id")
        if matches(method, params) and chat not in refused:
            refused.add(chat)
            raise too_many()
        return real(method, params)

    monkeypatch.setattr(world, "call", call)
    return refused
