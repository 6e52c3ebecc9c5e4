"""``python -m bench.unlimited_bot``: ``python -m bot``, built without PTB's AIORateLimiter.

Benchmark 5 runs the bot process as shipped, where AIORateLimiter holds every request that names a
chat to Telegram's 30 a second (and a group's to 20 a minute), and without it, to show what the
bot itself can handle. Everything else is as shipped (the same requests, ``bot.request``).
Settings come from the environment as for ``python -m bot``.
"""

from __future__ import annotations

import sys

from telegram import Update

from bot.app import build_application
from bot.logs import configure_logging
from bot.settings import Settings


def main() -> int:
    settings = Settings.from_env()
    if not settings.token:
        print("TELEGRAM_BOT_TOKEN is not set", file=sys.stderr)
        return 2
    configure_logging(settings.token)
    build_application(settings, rate_limit=False).run_polling(allowed_updates=Update.ALL_TYPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
