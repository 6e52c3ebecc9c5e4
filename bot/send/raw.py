"""Bot API requests whose answers are used as they come: no parsing into python-telegram-bot objects.

Telegram answers every edit of a table or a DM with the whole message, which PTB turns into a
``Message`` (with its chat, user and keyboard objects): 110 of the 138 µs an edit costs in process
(measured against the fake Telegram). The presenter needs at most the new message's id, so its
requests go through ``Bot.do_api_request``, which takes the
same way as ``Bot.send_message`` and the others (the rate limiter, the request class, errors
raised as ``TelegramError``) and returns the JSON result. That call warns when the method has its
own ``Bot`` function; the warning is silenced for the methods sent here, and only for them.
"""

from __future__ import annotations

import warnings
from typing import Any

from telegram import Bot
from telegram.constants import ParseMode
from telegram.warnings import PTBUserWarning

from bot.telegram_facts import message_text

METHODS = ("sendMessage", "editMessageText", "editMessageReplyMarkup")
WITH_TEXT = ("sendMessage", "editMessageText")
warnings.filterwarnings(
    "ignore", message=rf"Please use 'Bot\.({'|'.join(METHODS)})'", category=PTBUserWarning
)


async def call(bot: Bot, method: str, **params: object) -> Any:
    """Send ``method`` with ``params`` (None values left out, objects as their JSON); the raw result.
    A text longer than Telegram takes is cut to fit (``bot.telegram_facts.message_text``): a table or a
    reply that grew past it still shows, rather than being refused for good."""
    assert method in METHODS, method
    text = params.get("text")
    if method in WITH_TEXT and isinstance(text, str):
        params["text"] = message_text(text, html=params.get("parse_mode") == ParseMode.HTML)
    return await bot.do_api_request(method, api_kwargs=params)
