"""The link to SQLite's writer process: what one call costs the bot's CPU and the writer's.

A store on a throwaway file; ``WriterProcess.pid()`` (the smallest call: a function sent, its
result sent back) made N times one after the other, then N times 8 at once. Reported for each:
the bot process's CPU a call (``time.process_time``: every thread of it), the writer's
(``/proc/<pid>/stat``), and the wall time a call. ``--root DIR`` measures another tree's storage
code (one with ``storage/writer_process.py``: e4f5928 and later).

    python -m bench.writer_link [--calls N] [--root DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path


async def measure(calls: int) -> list[str]:
    from bench.stage import cpu_seconds  # (imported here: after ``--root`` chose the storage code)
    from storage import open_store

    lines = []
    with tempfile.TemporaryDirectory() as folder:
        store = await open_store(str(Path(folder) / "bench.sqlite3"))
        try:
            writer = store.backend.writer
            child = await writer.pid()
            for together in (1, 8):
                cpu, wall, child_cpu = time.process_time(), time.perf_counter(), cpu_seconds(child)
                for _ in range(calls // together):
                    await asyncio.gather(*(writer.pid() for _ in range(together)))
                done = calls // together * together
                lines.append(
                    f"{together} at once: the bot's CPU {(time.process_time() - cpu) / done * 1e6:.0f} µs "
                    f"a call, the writer's {(cpu_seconds(child) - child_cpu) / done * 1e6:.0f} µs, "
                    f"wall {(time.perf_counter() - wall) / done * 1e6:.0f} µs"
                )
        finally:
            await store.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--root", help="the source tree whose storage code is measured")
    args = parser.parse_args()
    if args.root:  # (the writer's forkserver imports the storage code from the folder it starts in)
        root = Path(args.root).resolve()
        os.chdir(root)
        sys.path.insert(0, str(root))
    for line in asyncio.run(measure(args.calls)):
        print(line)


if __name__ == "__main__":
    main()
