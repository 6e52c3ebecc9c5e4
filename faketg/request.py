"""The in-process front door: python-telegram-bot's ``BaseRequest`` answered by a ``World``."""

from __future__ import annotations

import json

from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.request import BaseRequest, RequestData

from faketg.world import ApiError, World


class FakeRequest(BaseRequest):
    """Every Bot API call the bot makes goes to ``world.call``; nothing leaves the process."""

    def __init__(self, world: World) -> None:
        self.world = world

    @property
    def read_timeout(self) -> float | None:
        return 5.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

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
        params = dict(request_data.parameters) if request_data else {}
        try:
            result = self.world.call(api_method, params)
        except ApiError as error:
            body: dict[str, object] = {
                "ok": False,
                "error_code": error.code,
                "description": error.description,
            }
            if error.parameters:
                body["parameters"] = error.parameters
            return error.code, json.dumps(body).encode()
        return 200, json.dumps({"ok": True, "result": result}).encode()
