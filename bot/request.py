"""Talking to the Bot API over HTTP, with a second chance for passing failures.

python-telegram-bot retries a 429 (through its rate limiter) but not a 5xx, a timeout or a
dropped connection; a table message or a button answer lost that way would leave a person
waiting. So those are tried again, a few times, after a short pause. (``getUpdates`` is left to
the polling loop, which already retries.)
"""

from __future__ import annotations

import asyncio
import logging

from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import HTTPXRequest, RequestData

log = logging.getLogger(__name__)
PAUSES = (0.3, 1.0, 2.0)  # before the 2nd, 3rd and 4th try
NOT_TWICE = frozenset({"sendMessage"})


class RetryingRequest(HTTPXRequest):
    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = DEFAULT_NONE,
        write_timeout: ODVInput[float] = DEFAULT_NONE,
        connect_timeout: ODVInput[float] = DEFAULT_NONE,
        pool_timeout: ODVInput[float] = DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        api_method = url.rsplit("/", 1)[-1]
        for pause in (*PAUSES, None):
            try:
                code, payload = await super().do_request(
                    url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
                )
            except NetworkError as error:  # a timeout or a dropped connection
                if pause is None or (isinstance(error, TimedOut) and api_method in NOT_TWICE):
                    raise  # a message that timed out may have been sent: never send it twice
                log.warning("%s failed (%s): trying again", api_method, type(error).__name__)
            else:
                if code < 500 or pause is None:
                    return code, payload
                log.warning("%s answered %s: trying again", api_method, code)
            await asyncio.sleep(pause)
        raise AssertionError("unreachable: the last try returns or raises")
