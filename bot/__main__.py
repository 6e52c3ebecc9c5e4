"""``python -m bot``: run the bot by long polling, with settings from the environment or ``.env``."""

from __future__ import annotations

import sys

from telegram import Update

from bot.app import build_application
from bot.logs import configure_logging
from bot.settings import Settings, SettingsError

NO_TOKEN = """No bot token: set TELEGRAM_BOT_TOKEN.

1. In Telegram, open @BotFather, send /newbot and follow its questions; it answers with a token
   like 123456789:AAE...
2. Put it in a file named .env in this folder (copy .env.example):  TELEGRAM_BOT_TOKEN=123456789:AAE...
   or in the environment:  TELEGRAM_BOT_TOKEN=... python -m bot
Then add the bot to a group and send /newgame muxi there."""


def main(argv: list[str]) -> int:
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        print(f"Bad setting: {error}", file=sys.stderr)
        return 2
    if not settings.token:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    configure_logging(settings.token)
    application = build_application(settings)
    application.run_polling(allowed_updates=Update.ALL_TYPES)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
