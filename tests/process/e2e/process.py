"""The real ``python -m bot`` as a subprocess, against the emulator over HTTP (DESIGN.md level 4)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from faketg.driver import Driver
from faketg.server import Emulator, Faults
from faketg.world import World
from tests.process.e2e import spares

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "424242:E2E-SECRET-TOKEN"
WEBHOOK_PATH = "/telegram/updates"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class BotProcess:
    emulator: Emulator
    database: Path
    log: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    process: asyncio.subprocess.Process | spares.Child | None = None
    webhook: bool = False  # updates by webhook (posted by the emulator) rather than by polling
    http_port: int = field(default_factory=free_port)  # the bot's HTTP server, when it has one

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PAIJU_", "TELEGRAM_"))}
        env.update(
            TELEGRAM_BOT_TOKEN=TOKEN,
            PAIJU_DB=str(self.database),
            PAIJU_BOT_API_URL=self.emulator.url,
            PAIJU_TABLE_REQUESTS_PER_MINUTE="1000",
            PYTHONPATH=str(ROOT),
        )
        if self.webhook:
            env.update(PAIJU_WEBHOOK_URL=self.http_url + WEBHOOK_PATH, PAIJU_HTTP_PORT=str(self.http_port))
        env.update(self.extra_env)
        return env

    def _listening(self) -> int:
        """What grows once the bot takes updates: its polls, or its webhook registrations."""
        return self.emulator.webhook.registrations if self.webhook else self.emulator.polls

    async def start(self, timeout: float = 30.0) -> None:
        """Start the bot and wait until it polls for updates (or has set its webhook). It starts
        warm: a spare that imported the bot already becomes it (``tests/process/e2e/spares.py``)."""
        self.emulator.hurry = False
        listening = self._listening()
        spare = spares.take()
        self.process = None if spare is None else spare.run([], self.env(), self.database.parent, self.log)
        if self.process is None:
            with self.log.open("a") as log:
                self.process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "bot",
                    cwd=self.database.parent,
                    env=self.env(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout
        while self._listening() <= listening:
            if self.process.returncode is not None or loop.time() > give_up:
                raise RuntimeError(f"the bot did not start: {self.log.read_text()[-2000:]}")
            await asyncio.sleep(0.05)

    async def kill(self) -> None:
        """SIGKILL: no chance to save or say goodbye."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    async def stop(self) -> int:
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            await self.emulator.release_polls()
            try:
                await asyncio.wait_for(self.process.wait(), 20)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        return self.process.returncode or 0


# Tests under a lowered open-file limit need util-linux's prlimit: skipped without it, except in CI.
needs_prlimit = pytest.mark.skipif(
    shutil.which("prlimit") is None and not os.environ.get("CI"), reason="needs prlimit (util-linux)"
)


def limited_python(folder: Path, open_files: int) -> Path:
    """A stand-in for ``sys.executable`` that runs Python under ``prlimit --nofile=open_files``
    (patch ``sys.executable`` with it while ``BotProcess.start`` runs)."""
    launcher = folder / "python-limited"
    limit = f"--nofile={open_files}:{open_files}"
    launcher.write_text(f'#!/bin/sh\nexec prlimit {limit} "{sys.executable}" "$@"\n')
    launcher.chmod(0o755)
    return launcher


def processes_of(pid: int) -> list[int]:
    """A process and the processes it started (theirs too)."""
    found, index = [pid], 0
    while index < len(found):
        for children in Path(f"/proc/{found[index]}/task").glob("*/children"):
            found.extend(int(child) for child in children.read_text().split())
        index += 1
    return found


def storage_check(database: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storage", "check", str(database)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@dataclass
class Stage:
    """The emulator, the world behind it, the people's driver, and the bot process."""

    world: World
    emulator: Emulator
    driver: Driver
    bot: BotProcess


async def make_stage(world: World, tmp: Path, faults: Faults | None = None) -> Stage:
    emulator = Emulator(world, faults)
    await emulator.start()
    bot = BotProcess(emulator, tmp / "paiju.sqlite3", tmp / "bot.log")
    return Stage(world, emulator, Driver.remote(world, emulator.deliver), bot)
