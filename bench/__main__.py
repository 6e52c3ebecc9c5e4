"""``python -m bench [--quick] [--only 1,5] [--bot-root DIR]``: every benchmark, one markdown table.

The table is printed and written, with the machine's description, to ``bench/RESULTS.md``
(``--output`` for another file); ``--quick`` runs everything with fewer hands, rounds, tables and
shorter windows, in about two minutes, and writes to ``bench/RESULTS-quick.md`` so a
quick run never overwrites the full results. The full run takes about 13 minutes.
``--bot-root`` runs benchmarks 5 and 6 against the bot of another source tree (e.g. a commit
exported with ``git archive <commit> | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from bench import emulated, engines, incidents, inprocess, storage_bench
from bench.report import QUICK_RESULTS, RESULTS, Result, document, markdown_table
from bench.stage import BotSpec

Benchmark = Callable[[bool, BotSpec], list[Result]]
BENCHMARKS: dict[str, tuple[str, Benchmark]] = {
    "1": ("hand evaluation, and 2: engines", lambda quick, _: engines.run(quick)),
    "3": ("storage", lambda quick, _: storage_bench.benchmark(quick)),
    "4": ("the bot in process against bare python-telegram-bot", lambda quick, _: inprocess.run(quick)),
    "5": ("load at a human pace through the emulator, Telegram's limits on", emulated.run),
    "6": ("incidents: one group's 429, a restart, a flood", incidents.run),
}
NOTES = [
    "Benchmarks 1 and 2 share a module and run together (`--only 1`).",
    "Benchmarks 5 and 6 run the bot as a subprocess against `faketg.server.Emulator` with "
    "Telegram's limits enforced (`faketg.limits`: 20 requests a minute per group, a burst of 3 then "
    "one a second per private chat, callback answers unlimited but too old after 15 s; 429 with "
    "retry_after past them). People press 2–6 s after their prompt shows, in an open loop. "
    "Definitions of every figure: `bench/README.md` and `bench/figures.py`.",
]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="everything, smaller, in a few minutes")
    parser.add_argument("--only", help="comma-separated benchmarks to run (1 also runs 2): 1,3,4,5,6")
    parser.add_argument(
        "--output",
        type=Path,
        help="where to write the markdown (default: bench/RESULTS.md, quick: RESULTS-quick.md)",
    )
    emulated.add_bot_arguments(parser)
    args = parser.parse_args(argv)
    output = args.output or (QUICK_RESULTS if args.quick else RESULTS)
    bot = emulated.bot_spec(args)
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
        try:
            results += run(args.quick, bot)
        except Exception as error:  # one broken benchmark must not cost the others' figures
            traceback.print_exc()
            results.append(Result(name, "the benchmark failed", f"{type(error).__name__}: {error}"[:300]))
        print(f"  done in {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    command = (
        "python -m bench"
        + (" --quick" if args.quick else "")
        + (f" --only {args.only}" if args.only else "")
        + (f" --bot-root {args.bot_root}" if args.bot_root else "")
        + (f' --bot-label "{args.bot_label}"' if args.bot_label else "")
    )
    notes = [*NOTES, f"Benchmarks 5 and 6 ran the bot {bot.describe()}."]
    print(markdown_table(results))
    output.write_text(document(results, command, seconds, notes), encoding="utf-8")
    print(f"\nwritten to {output} ({seconds:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
