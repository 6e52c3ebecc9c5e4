"""``python -m bench.unlimited_bot``: ``python -m bot``, built without its own rate limiting where
``bot.app.build_application`` has a switch for it (``limits=Limits.unlimited()``; ``rate_limit=False``
in the trees before issue 26, PTB's AIORateLimiter before issue 15); otherwise exactly
``python -m bot``.

Benchmark 5's optional capacity reference runs it against the emulator with no limits (what the
bot process itself can carry), and benchmark 6 uses it to set up the tables of the restart
scenario quickly. Settings come from the environment as for ``python -m bot``.
"""

from __future__ import annotations

import inspect
import sys

from telegram import Update

from bot.app import build_application
from bot.ops.logs import configure_logging
from bot.send.rate_policy import Limits
from bot.settings import Settings


def main() -> int:
    settings = Settings.from_env()
    if not settings.token:
        print("TELEGRAM_BOT_TOKEN is not set", file=sys.stderr)
        return 2
    configure_logging(settings.token)
    parameters = inspect.signature(build_application).parameters
    switch: dict[str, object] = {}
    if "limits" in parameters:
        switch = {"limits": Limits.unlimited()}
    elif "rate_limit" in parameters:
        switch = {"rate_limit": False}
    build_application(settings, **switch).run_polling(allowed_updates=Update.ALL_TYPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
