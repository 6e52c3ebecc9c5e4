"""The browser tests' fixtures: one Chromium and one fresh sandbox (``python -m bot sandbox``) per
module. Each scenario runs once, in one theme; what differs by theme is asserted for both (the
theme taken from the address, the switch, the Mini App's colours), and the sandbox's screenshots
are taken in both (``tests/process/browser/sandbox_page.py``)."""

import os
import re
import subprocess
import sys

import pytest
from playwright.sync_api import sync_playwright

from tests.process.browser.sandbox_page import CHROMIUM, FLAGS
from tests.process.e2e.process import ROOT, free_port


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def sandbox_url():
    """A fresh sandbox for the module."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "--port", str(free_port()), "--fresh", "--seed", "1"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "open http://" in line, line
    yield re.search(r"http://\S+/", line).group(0)
    process.terminate()
    process.wait(timeout=30)
