"""A prototype for the bot: PTB's ``BaseRequest`` over aiohttp instead of httpx (a proposed fix).

Profiles of the bot process under load (``python -m bench.emulated --profile DIR``) put more than
half of its CPU in httpx/httpcore, per request; aiohttp, already one of the bot's dependencies,
does the same work for less. ``python -m bench.unlimited_bot --aiohttp`` runs the bot with this
request object so that the benchmark can measure the difference; the bot itself is unchanged.
"""

from __future__ import annotations

import asyncio

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData


class AiohttpRequest(BaseRequest):
    """Form-encoded POSTs (no file uploads: the bot sends none) through one aiohttp session."""

    def __init__(self, pool_size: int = 256, read_timeout: float | None = 5.0) -> None:
        self._pool_size = pool_size
        self._read_timeout = read_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size)
            self._session = aiohttp.ClientSession(connector=connector)

    async def shutdown(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if request_data is not None and request_data.contains_files:
            raise ValueError("this prototype sends no files (the bot sends none)")
        if self._session is None:
            await self.initialize()
        assert self._session is not None
        read = self._read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        timeout = aiohttp.ClientTimeout(total=None, sock_read=read, sock_connect=5.0)
        data = request_data.json_parameters if request_data is not None else None
        try:
            async with self._session.request(method, url, data=data, timeout=timeout) as response:
                return response.status, await response.read()
        except TimeoutError as error:
            raise TimedOut from error
        except asyncio.CancelledError:
            raise
        except aiohttp.ClientError as error:
            raise NetworkError(f"aiohttp.ClientError: {error}") from error
