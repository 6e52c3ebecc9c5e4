"""Two profiles: a short one that CI runs, and ``PAIJU_RELIABILITY=long`` for the figures of
docs/RELIABILITY.md: how many games the crash, fault and fuzz tests play."""

import os

LONG = os.environ.get("PAIJU_RELIABILITY") == "long"
PROFILE = {
    "crash_games": 50 if LONG else 6,
    "fault_games": 20 if LONG else 3,
    "fuzz_games": 10_000 if LONG else 300,
}
