"""``python -m bot``: run the bot by long polling, with settings from the environment or ``.env``."""

from __future__ import annotations

import argparse
import logging
import sys

from telegram import Update

from bot.app import build_application
from bot.logs import configure_logging
from bot.settings import LANGUAGES, Settings, SettingsError

NO_TOKEN = """No bot token: set TELEGRAM_BOT_TOKEN.

1. In Telegram, open @BotFather, send /newbot and follow its questions; it answers with a token
   like 123456789:AAE...
2. Put it in a file named .env in this folder (copy .env.example):  TELEGRAM_BOT_TOKEN=123456789:AAE...
   or in the environment:  TELEGRAM_BOT_TOKEN=... python -m bot
Then add the bot to a group and send /newgame muxi there."""


def main(argv: list[str]) -> int:
    arguments = parse(argv)
    if arguments.command == "sandbox":
        from bot.sandbox.server import main as sandbox

        configure_logging("", logging.WARNING)
        sandbox(arguments.port, arguments.fresh, arguments.language)
        return 0
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
    try:
        application.run_polling(allowed_updates=Update.ALL_TYPES)
    except Exception:  # logged through the token's redaction, never printed raw
        logging.getLogger("bot").exception("the bot stopped")
        return 1
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Run the Paiju Telegram bot.")
    commands = parser.add_subparsers(dest="command")
    sandbox = commands.add_parser("sandbox", help="try the bot in a browser, with no token and no internet")
    sandbox.add_argument("--port", type=int, default=8080, help="the page's port on localhost (default 8080)")
    sandbox.add_argument("--fresh", action="store_true", help="start on a new temporary database")
    sandbox.add_argument("--language", default="zh-hans", choices=LANGUAGES, help="the bot's language")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
