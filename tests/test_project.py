"""Project-wide checks run with the tests: lint, the layering contract, the shared worked examples."""

import fnmatch
import re
import subprocess
import sys
import tomllib
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


def test_the_types_check():
    """mypy as pyproject.toml sets it (strict on games, storage and bot) finds nothing, and every
    ``type: ignore`` left says why, beside it or in a comment just above. Its cache is the
    project's .mypy_cache (git-ignored): a run after the first reads only what changed."""
    result = run(str(BIN / "mypy"), "games", "storage", "bot")
    assert result.returncode == 0, result.stdout + result.stderr
    unexplained = []
    for path in sorted(p for package in ("games", "storage", "bot") for p in (ROOT / package).rglob("*.py")):
        above = ""
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "type: ignore" in line:
                beside = re.search(r"type: ignore\[[^]]*\]\s*#\s*\S", line)
                if beside is None and not above.lstrip().startswith("#"):
                    unexplained.append(f"{path.relative_to(ROOT)}:{number}")
            above = line
    assert not unexplained, f"a type: ignore without a reason: {unexplained}"


@pytest.mark.skipif(not CHECK_EXAMPLES.exists(), reason="../shared is not beside the project")
def test_the_engines_agree_with_every_worked_example():
    result = run(sys.executable, str(CHECK_EXAMPLES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "example rows agree" in result.stdout


def test_every_file_the_bot_reads_goes_with_an_install():
    """Every file of bot/ that is not Python (catalogs, the Mini App's and the sandbox's pages) is
    in the package data, so a non-editable install has it (the Mini App's was missing)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "bot"
    ]
    listed = subprocess.run(["git", "ls-files", "bot"], cwd=ROOT, capture_output=True, text=True, check=True)
    data = [
        Path(name).relative_to("bot").as_posix() for name in listed.stdout.split() if not name.endswith(".py")
    ]
    assert data, "the bot has data files"
    missing = [name for name in data if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns)]
    assert missing == []
