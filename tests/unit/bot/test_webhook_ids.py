"""The webhook route refuses a post whose ``update_id`` is not a positive integer (issue 47, point
11): Telegram numbers updates from 1 up, so 0, -1, 1.5, ``true``, ``"7"`` or none at all is not an
update from Telegram, and is never queued (nor, with several workers, stored in the inbox)."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.web.webhook import SECRET_HEADER, add_route

SECRET = "s3cret"
MESSAGE = {
    "message_id": 5,
    "date": 1_700_000_000,
    "chat": {"id": 1, "type": "private", "first_name": "阿明"},
    "from": {"id": 1, "is_bot": False, "first_name": "阿明"},
    "text": "/balance",
}


async def post(bot, body: object) -> int:
    app = web.Application()
    add_route(app, bot.application, "/hook", SECRET)
    async with TestClient(TestServer(app)) as client:
        answer = await client.post("/hook", json=body, headers={SECRET_HEADER: SECRET})
        return answer.status


@pytest.mark.parametrize("update_id", [0, -3, 1.5, True, "7", None, 2**63])
async def test_an_update_id_that_is_not_a_positive_integer_is_refused(bot, update_id):
    queue = bot.application.update_queue
    body = {"message": MESSAGE} if update_id is None else {"update_id": update_id, "message": MESSAGE}
    assert await post(bot, body) == 400
    assert queue.empty(), "nothing was queued"


async def test_a_positive_update_id_is_taken(bot):
    assert await post(bot, {"update_id": 7, "message": MESSAGE}) == 200
    assert bot.application.update_queue.get_nowait().update_id == 7


async def test_a_body_that_is_not_an_object_is_refused(bot):
    for body in ([1, 2], "update", 7):
        assert await post(bot, body) == 400
    assert bot.application.update_queue.empty()
