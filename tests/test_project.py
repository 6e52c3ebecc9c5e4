"""Project-wide checks run with the tests: lint, the layering contract, the shared worked examples."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECK_EXAMPLES = ROOT.parent / "shared" / "tools" / "check_examples.py"
BIN = Path(sys.executable).parent


def run(*command):
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_is_clean():
    result = run(str(BIN / "ruff"), "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_layers_import_in_one_direction():
    """games imports none of storage, bot, telegram, aiosqlite, asyncio; storage imports no bot."""
    result = run(str(BIN / "lint-imports"), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not CHECK_EXAMPLES.exists(), reason="../shared is not beside the project")
def test_the_engines_agree_with_every_worked_example():
    result = run(sys.executable, str(CHECK_EXAMPLES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "example rows agree" in result.stdout
