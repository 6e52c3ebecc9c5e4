"""``python -m bench [--quick] [--only 1,5]``: every benchmark of issue 9, one markdown table.

The table is printed and written, with the machine's description, to ``bench/RESULTS.md``
(``--output`` for another file). ``--quick`` runs everything with fewer hands, rounds and shorter
windows, in under a minute; the full run takes a few minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench import emulated, engines, inprocess, storage_bench, telegram_cost
from bench.report import RESULTS, Result, document, markdown_table

BENCHMARKS: dict[str, tuple[str, Callable[[bool], list[Result]]]] = {
    "1": ("hand evaluation, and 2: engines", engines.run),
    "3": ("storage", storage_bench.benchmark),
    "4": ("the bot in process against bare python-telegram-bot", inprocess.run),
    "5": ("the bot process through the HTTP emulator", emulated.run),
    "6": ("Telegram cost per round", telegram_cost.run),
}
NOTES = [
    "Benchmarks 1 and 2 share a module and run together (`--only 1`).",
    "Benchmark 5, variant `shipped`, is the bot as it runs in production: PTB's AIORateLimiter "
    "holds every request naming a chat to 30 a second, so its throughput is Telegram's limit, not "
    "the bot's; `unlimited` is the same bot without the limiter. Both send their requests through "
    "`bot/request.py` (aiohttp).",
    "Benchmark 5's people press as soon as the bot answers: one press in flight per table, so the "
    "mean latency is the number of tables divided by the rate (Little's law); the fast-pace run "
    "shows the latency of a busy bot that is not saturated.",
]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="everything, smaller, in under a minute")
    parser.add_argument("--only", help="comma-separated benchmarks to run (1 also runs 2): 1,3,4,5,6")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the markdown")
    args = parser.parse_args(argv)
    chosen = args.only.split(",") if args.only else list(BENCHMARKS)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)} (choose from {', '.join(BENCHMARKS)})")
    started = time.perf_counter()
    results: list[Result] = []
    for name in chosen:
        title, run = BENCHMARKS[name]
        began = time.perf_counter()
        print(f"running {name}: {title} ...", file=sys.stderr, flush=True)
        results += run(args.quick)
        print(f"  done in {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    command = (
        "python -m bench" + (" --quick" if args.quick else "") + (f" --only {args.only}" if args.only else "")
    )
    print(markdown_table(results))
    args.output.write_text(document(results, command, seconds, NOTES), encoding="utf-8")
    print(f"\nwritten to {args.output} ({seconds:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
