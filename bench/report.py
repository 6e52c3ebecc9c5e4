"""What every benchmark returns (rows of one markdown table), the machine it ran on, and timing helpers."""

from __future__ import annotations

import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
QUICK_RESULTS = Path(__file__).with_name("RESULTS-quick.md")  # a quick run never overwrites RESULTS.md


@dataclass(frozen=True)
class Result:
    """One row: what was measured (``case``), the figure, and the issue's target when it has one."""

    benchmark: str
    case: str
    figure: str
    target: str = ""
    met: bool | None = None  # None: no target for this row

    def cells(self) -> list[str]:
        verdict = "" if self.met is None else ("✅ met" if self.met else "❌ missed")
        return [self.benchmark, self.case, self.figure, self.target, verdict]


# -- timing ------------------------------------------------------------------------------------------
def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], share: float) -> float:
    """The value below which ``share`` (0..1) of ``values`` lie (nearest rank); 0.0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def timed(run: Callable[[], object]) -> float:
    """Seconds one call of ``run`` takes."""
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def rate(count: float, seconds: float, unit: str = "") -> str:
    """``1,234,567 hands/s``: full digits, which read better next to ratios than ``1.2M``."""
    return f"{count / seconds:,.0f} {unit}/s".replace(" /s", "/s") if seconds > 0 else "n/a"


# -- the machine -------------------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_total() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(*args: str) -> str:
    root = Path(__file__).resolve().parents[1]
    found = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5, check=False
    )
    return found.stdout.strip()


def _commit() -> str:
    try:
        dirty = _git("status", "--porcelain", "--untracked-files=no")
        return _git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> list[tuple[str, str]]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        ("date", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("CPU", cpu_model()),
        ("cores", f"{os.cpu_count()} ({usable} usable by this process)"),
        ("memory", memory_total()),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", f"{platform.python_implementation()} {sys.version.split()[0]}"),
        ("SQLite", sqlite3.sqlite_version),
        ("python-telegram-bot", _version("python-telegram-bot")),
        ("treys", _version("treys")),
        ("commit", _commit()),
    ]


# -- rendering ---------------------------------------------------------------------------------------
HEADER = ["benchmark", "case", "figure", "target", "met?"]


def markdown_table(results: Sequence[Result]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in r.cells()) + " |" for r in results]
    return "\n".join(lines)


def _by_benchmark(results: Sequence[Result]) -> str:
    counts: dict[str, int] = {}
    for result in results:
        counts[result.benchmark] = counts.get(result.benchmark, 0) + 1
    return " (" + ", ".join(f"{name}: {count}" for name, count in counts.items()) + ")" if counts else ""


def document(results: Sequence[Result], command: str, seconds: float, notes: Sequence[str]) -> str:
    met = [r for r in results if r.met is True]
    missed = [r for r in results if r.met is False]
    parts = [
        "# Benchmark results",
        "",
        f"Reproduce with `{command}` from the project root (the whole run took {seconds:.0f} s). "
        "Timings are medians of repeated runs; ratios are measured side by side in the same run. "
        "What each row measures is described in `bench/README.md`.",
        "",
        "## Machine",
        "",
        *[f"- **{name}**: {value}" for name, value in machine()],
        "",
        "## Figures",
        "",
        markdown_table(results),
        "",
        f"Targets met: {len(met)}; missed: {len(missed)}" + _by_benchmark(missed) + ".",
    ]
    if notes:
        parts += ["", "## Notes", "", *[f"- {note}" for note in notes]]
    return "\n".join(parts) + "\n"
