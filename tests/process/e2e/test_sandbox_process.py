"""``python -m bot sandbox`` as a process (issue 16, item 9): a ``--fresh`` sandbox leaves no folder
behind however it is stopped, and runs beside another on the kept database (a database of its own,
issue 14); a port in use is one clear line suggesting ``--port``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bot.web.sandbox.server import DATABASE
from storage import hold_database
from tests.process.e2e.process import ROOT


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(temp: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temp)}  # its temporary folder in ``temp``


def leftovers(temp: Path) -> list[Path]:
    return list(temp.glob("paiju-sandbox-*"))


def ignore_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    ("ending", "before"),
    [(signal.SIGINT, None), (signal.SIGTERM, None), (signal.SIGINT, ignore_ctrl_c)],
    ids=["ctrl-c", "terminate", "ctrl-c-ignored-by-its-parent"],
)
def test_a_fresh_sandbox_removes_its_folder_when_stopped(tmp_path, ending, before):
    """Stopped by Ctrl-C or SIGTERM, it cleans up and exits 0; also when started by a parent that
    ignores Ctrl-C (a child inherits that: asyncio.run alone would then never see it). The kept
    database is held meanwhile (as by another sandbox): a fresh one has a database of its own."""
    kept = hold_database(tmp_path / DATABASE)
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "--port", str(free_port()), "--fresh"],
        cwd=tmp_path,
        env=environment(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=before,
    )
    watchdog = threading.Timer(60, process.kill)  # a hung sandbox must not hang the suite
    watchdog.start()
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # at once if the sandbox dies: EOF
        assert "open http://" in line, line + process.stdout.read()
        assert len(leftovers(tmp_path)) == 1
        process.send_signal(ending)
        output, _ = process.communicate(timeout=30)
    finally:
        watchdog.cancel()
        kept.release()
        if process.poll() is None:  # failed: no sandbox is left running after the test
            process.kill()
            process.wait()
    assert process.returncode == 0, output
    assert "Traceback" not in output
    assert leftovers(tmp_path) == []


def test_a_port_in_use_is_one_line_suggesting_another(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "bot", "sandbox", "--port", str(port), "--fresh"],
            cwd=tmp_path,
            env=environment(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"Port {port} cannot be used (Address already in use): start the sandbox on another one, "
        f"e.g. with --port {port + 1}"
    ]
    assert leftovers(tmp_path) == []
