"""Bot processes started warm: ``python -m bot`` without waiting for its imports.

Most of a bot process's start-up is Python importing the bot (PTB, aiohttp, the hand tables
``games.showhand.hands`` builds): 1.5 to 3 s on a busy machine, and the process tests start about a
hundred bots (a restart after a SIGKILL is a start). A *spare* is a Python process started ahead of
need, in the background, that imports the bot's modules and then waits on its stdin to be told what
to be: ``Spare.run`` hands it the environment, the folder, the log file and the arguments of one
``python -m bot``; it takes them (the environment replaced as a whole, the log file as its stdout
and stderr, stdin at /dev/null, a ``sitecustomize.py`` the new PYTHONPATH brings run as Python would
have at start-up) and runs ``bot/__main__.py`` as ``__main__``, as ``python -m bot`` does
(``runpy.run_module``, which multiprocessing's forkserver then knows as ``bot.__main__`` too). From
then on it is that bot: its own process and PID, signalled, killed and waited for as a process the
test started (``Child``). Nothing the bot reads from its environment or its folder is read at
import time (``Settings.from_env`` and the database are read in ``main``).

``warm()`` starts ``WAITING`` spares (the process tests' folders ask for it once, as their first
test begins); ``take()`` hands out the readiest and starts the next one at once, so the next start
is warm too; a spare left over ends with the session (its stdin closes).
``PAIJU_TEST_COLD_START=1`` makes every start a plain ``python -m bot`` (as the tests that start
the bot by hand, and under a launcher, do).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
COLD = os.environ.get("PAIJU_TEST_COLD_START") == "1"
PYTHON = sys.executable  # a test that runs the bot under a launcher patches sys.executable: cold then

SPARE = """
import json, os, runpy, sys, tempfile
import bot.app, bot.serve, bot.web.sandbox.server, storage  # (what python -m bot imports first)
own_log = sys.argv[1]  # (what it said while importing: kept only if that failed)
line = sys.stdin.readline()
if not line:
    os.unlink(own_log)
    sys.exit(0)  # not needed after all
asked = json.loads(line)
os.environ.clear()
os.environ.update(asked["env"])
tempfile.tempdir = None  # (found again from the new TMPDIR, if ever asked)
os.chdir(asked["cwd"])
log = os.open(asked["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
with open(own_log, "rb") as own:
    os.write(log, own.read())
os.unlink(own_log)
os.dup2(log, 1)
os.dup2(log, 2)
os.close(log)
nothing = os.open(os.devnull, os.O_RDONLY)
os.dup2(nothing, 0)
os.close(nothing)
for entry in reversed([e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]):
    if entry not in sys.path:
        sys.path.insert(0, entry)
        hook = os.path.join(entry, "sitecustomize.py")
        if os.path.exists(hook):  # (Python runs it at start-up: this process started before it)
            runpy.run_path(hook, run_name="sitecustomize")
sys.argv = ["-m", *asked["argv"]]
runpy.run_module("bot", run_name="__main__", alter_sys=True)
"""


class Child:
    """A process this test process started, as ``asyncio.subprocess.Process`` shows one (``pid``,
    ``returncode``, ``wait``, ``send_signal``, ``kill``), but usable from any event loop: a spare
    outlives the test's loop that started it."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        while (code := self._popen.poll()) is None:
            await asyncio.sleep(0.01)
        return code

    def send_signal(self, signum: int) -> None:
        if self._popen.poll() is None:
            self._popen.send_signal(signum)

    def kill(self) -> None:
        if self._popen.poll() is None:
            self._popen.kill()

    def terminate(self) -> None:
        if self._popen.poll() is None:
            self._popen.terminate()


class Spare:
    """A Python process that has imported the bot and waits to be told to run as one. Its own log (what
    it says while importing) goes into the bot's log when it runs as one, and away when it is not
    needed: left in the temporary folder only when it failed."""

    def __init__(self) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PAIJU_", "TELEGRAM_"))}
        env["PYTHONPATH"] = str(ROOT)
        self.log = tempfile.NamedTemporaryFile(prefix="paiju-spare-", suffix=".log", delete=False)  # noqa: SIM115
        self.popen = subprocess.Popen(
            [PYTHON, "-c", SPARE, self.log.name],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.log.close()  # (the spare has it)

    def run(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> Child | None:
        """Be ``python -m bot <argv>`` in ``cwd`` with ``env``, writing to ``log``; None if this
        spare is gone (it failed to import: its own log says why)."""
        asked = {"argv": argv, "env": env, "cwd": str(cwd), "log": str(log)}
        assert self.popen.stdin is not None
        try:
            self.popen.stdin.write(json.dumps(asked).encode() + b"\n")
            self.popen.stdin.close()
        except BrokenPipeError:
            return None
        return Child(self.popen)

    def end(self) -> None:
        """Not needed: told so (its stdin closes), killed if it does not end at once."""
        if self.popen.stdin is not None and not self.popen.stdin.closed:
            self.popen.stdin.close()
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


WAITING = 2  # spares kept ready: a test restarting a bot at once, or starting two workers, finds one
_waiting: list[Spare] = []


def warm() -> None:
    """Have ``WAITING`` spares ready (a session fixture asks it before the first process test)."""
    if not COLD:
        while len(_waiting) < WAITING:
            _waiting.append(Spare())


def take() -> Spare | None:
    """The readiest spare (another started at once), or None when starts are cold."""
    if COLD or sys.executable != PYTHON:
        return None
    spare = _waiting.pop(0) if _waiting else Spare()  # (the oldest: its imports are the furthest on)
    warm()
    return spare


@atexit.register
def _end_spares() -> None:
    while _waiting:
        _waiting.pop().end()
