"""The bot served in this process as ``python -m bot`` serves it (``bot.serve.serve``: its own
Bot API requests over HTTP, its polling, its start-up and shutdown in order), against the emulator
(``faketg.server``) in this process too: a component test of what Telegram's misbehaviour does to
the whole bot, without a process to start. The settings are given in full (a test may set what
the environment could not: a turn of a few seconds), and module constants such as the retries'
pauses may be patched (``monkeypatch``) to take less time than the real ones.

``serve_bot`` returns once the bot polls; ``Serving.stop`` asks it to stop as SIGTERM does and
waits until it has stopped (what ``serve`` raised, if it failed, is raised there).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bot.app import build_application
from bot.botdata import App
from bot.serve import serve
from bot.settings import Settings
from bot.tables.runtime import Runtime
from bot.web.webhook import new_secret
from faketg.driver import Driver
from faketg.harness import TOKEN
from faketg.server import Emulator, Faults
from faketg.world import World
from tests.process.e2e.process import WEBHOOK_PATH, free_port


@dataclass
class Serving:
    """The emulator, the world behind it, the people's driver, and the bot served in this process
    (``stage``-like: ``tests.component.scenarios`` and ``tests.process.e2e.buttons`` take it as they
    take a process)."""

    world: World
    emulator: Emulator
    driver: Driver
    application: App
    task: asyncio.Task[None]
    stoppers: list[Callable[[], object]] = field(default_factory=list)  # what a stop signal calls

    @property
    def http_url(self) -> str:
        """The bot's HTTP server (the webhook, the Mini App; /healthz and /metrics unless apart)."""
        return f"http://127.0.0.1:{self.application.bot_data.settings.port}"

    @property
    def runtime(self) -> Runtime:
        runtime = self.application.bot_data.runtime
        assert runtime is not None, "the bot is not started"
        return runtime

    async def stop(self) -> None:
        """Stop as on SIGTERM, and wait until the bot has stopped (its error raised, if any)."""
        if not self.task.done():
            for stopper in self.stoppers:
                stopper()
            await self.emulator.release_polls()  # (a long poll in flight ends now)
        await asyncio.wait_for(asyncio.shield(self.task), 30)


async def serve_bot(
    world: World, folder: Path, faults: Faults | None = None, *, webhook: bool = False, **options: object
) -> Serving:
    """Serve the bot on ``world`` (a database in ``folder``; ``options``: more settings) until it
    polls (with ``webhook``: until its webhook is set, its HTTP server at ``Serving.http_url``).
    Stop it with ``Serving.stop``, then ``emulator.stop()``."""
    emulator = Emulator(world, faults)
    await emulator.start()
    options.setdefault("table_requests_per_minute", 1000)  # as the process tests: every edit at once
    options.setdefault("pause_seconds", 0)  # the next round at once (as faketg/harness.py)
    options.setdefault("reveal_seconds", 0)
    if webhook:
        port = free_port()
        options.update(
            webhook_url=f"http://127.0.0.1:{port}{WEBHOOK_PATH}", webhook_secret=new_secret(), http_port=port
        )
    database = str(folder / "paiju.sqlite3")
    settings = Settings(token=TOKEN, database=database, base_url=emulator.url, **options)  # type: ignore[arg-type]
    application = build_application(settings)
    loop = asyncio.get_running_loop()
    stoppers: list[Callable[[], object]] = []

    def listening() -> int:  # (what grows once the bot takes updates)
        return emulator.webhook.registrations if webhook else emulator.polls

    before = listening()

    def add_signal_handler(signum: int, callback: Callable[..., object], *args: object) -> None:
        stoppers.append(lambda: callback(*args))  # (the test's process keeps its own signals)

    with _patched(loop, "add_signal_handler", add_signal_handler):
        task = asyncio.create_task(serve(application, settings), name="the bot served")
        while listening() <= before and not task.done():
            await asyncio.sleep(0.01)
    serving = Serving(world, emulator, Driver.remote(world, emulator.deliver), application, task, stoppers)
    if task.done():
        await emulator.stop()
        task.result()  # (serve returned or failed before its first poll: raised here)
        raise RuntimeError("the bot stopped before it polled")
    return serving


@contextlib.contextmanager
def _patched(target: object, name: str, value: object):
    """``target.name`` is ``value`` meanwhile (serve adds its handlers as it starts)."""
    setattr(target, name, value)
    try:
        yield
    finally:
        delattr(target, name)
