"""``python -m bot``: run the bot (by long polling, or by webhook), with settings from the environment
or ``.env``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from dataclasses import replace

from bot.app import build_application
from bot.ops.logs import configure_logging
from bot.serve import serve
from bot.settings import LANGUAGES, Settings, SettingsError
from bot.web.webhook import new_secret
from storage import DatabaseInUse, DatabaseUnreachable, hold

NO_TOKEN = """No bot token: set TELEGRAM_BOT_TOKEN.

1. In Telegram, open @BotFather, send /newbot and follow its questions; it answers with a token
   like 123456789:AAE...
2. Put it in a file named .env in this folder (copy .env.example):  TELEGRAM_BOT_TOKEN=123456789:AAE...
   or in the environment:  TELEGRAM_BOT_TOKEN=... python -m bot
Then add the bot to a group and send /newgame muxi there."""

IN_USE = """Not started: the database {path} is in use by {holder}, another Paiju bot on the same database.
Two bots on one database would deal and pay the same tables twice. {advice}"""
BOT_ADVICE = (
    "Stop the other bot first, or set PAIJU_DB (PAIJU_DATABASE_URL) to another file (database)"
    " to run a separate bot."
)
SANDBOX_ADVICE = "Stop the other sandbox first, or start this one with --fresh (a new temporary database)."


def main(argv: list[str]) -> int:
    arguments = parse(argv)
    if arguments.command == "sandbox":
        from bot.web.sandbox.server import main as sandbox

        configure_logging("", logging.WARNING)
        try:
            return sandbox(arguments.port, arguments.fresh, arguments.language, arguments.seed)
        except DatabaseInUse as error:
            print(in_use(error, SANDBOX_ADVICE), file=sys.stderr)
            return 2
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        print(f"Bad setting: {error}", file=sys.stderr)
        return 2
    if not settings.token:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    if settings.webhook_url is not None and settings.webhook_secret is None:
        settings = replace(settings, webhook_secret=new_secret())  # a new one each start
    secrets = [settings.webhook_secret] if settings.webhook_secret else []
    configure_logging(settings.token, json_lines=settings.log_format == "json", secrets=secrets)
    application = build_application(settings)
    try:
        asyncio.run(free(settings.database))  # refused before any call to Telegram
        asyncio.run(serve(application, settings))  # prepare() holds the database
    except DatabaseInUse as error:  # from prepare() too, if another bot took the file meanwhile
        print(in_use(error, BOT_ADVICE), file=sys.stderr)
        return 2
    except DatabaseUnreachable as error:
        print(f"Not started: {error}.", file=sys.stderr)
        return 2
    except Exception:  # logged through the token's redaction, never printed raw
        logging.getLogger("bot").exception("the bot stopped")
        return 1
    return 0


async def free(database: str) -> None:
    """Raise ``DatabaseInUse`` if another bot holds the database (else let it go at once)."""
    (await hold(database)).release()


def in_use(error: DatabaseInUse, advice: str) -> str:
    return IN_USE.format(path=error.path, holder=error.holder, advice=advice)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Run the Paiju Telegram bot.")
    commands = parser.add_subparsers(dest="command")
    sandbox = commands.add_parser("sandbox", help="try the bot in a browser, with no token and no internet")
    sandbox.add_argument("--port", type=int, default=8080, help="the page's port on localhost (default 8080)")
    sandbox.add_argument("--fresh", action="store_true", help="start on a new temporary database")
    sandbox.add_argument("--language", default="zh-hans", choices=LANGUAGES, help="the bot's language")
    sandbox.add_argument("--seed", type=int, help="shuffle from this seed: the same cards every time")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
