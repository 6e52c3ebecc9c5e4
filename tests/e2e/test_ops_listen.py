"""``/healthz`` and ``/metrics`` kept off the public server (issue 24, finding 8), the whole process:
with ``PAIJU_METRICS_LISTEN`` they are served on their own address only, so a reverse proxy that
forwards everything to the bot's public server never reaches them; with ``PAIJU_METRICS=local``
a request a proxy passed on (it says so in its headers) is not taken as this machine's."""

from __future__ import annotations

import aiohttp
import pytest

from faketg.harness import make_world
from tests.e2e.process import WEBHOOK_PATH, free_port, make_stage


@pytest.fixture
async def split(tmp_path):
    staged = await make_stage(make_world(), tmp_path)
    staged.bot.webhook = True
    ops = free_port()
    staged.bot.extra_env.update(PAIJU_METRICS="local", PAIJU_METRICS_LISTEN=f"127.0.0.1:{ops}")
    await staged.bot.start()
    yield staged, f"http://127.0.0.1:{ops}"
    await staged.bot.stop()
    await staged.emulator.stop()


@pytest.fixture
def webhook_env():
    return {"PAIJU_METRICS": "local"}


async def status(url: str, headers: dict[str, str] | None = None) -> int:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as answer:
        return answer.status


async def test_the_public_server_has_no_health_nor_metrics_when_they_have_their_own(split):
    stage, ops = split
    public = stage.bot.http_url
    assert await status(public + "/metrics") == 404
    assert await status(public + "/healthz") == 404
    async with aiohttp.ClientSession() as http, http.post(public + WEBHOOK_PATH) as answer:
        assert answer.status == 403, "the webhook is still on the public server"
    assert await status(ops + "/metrics") == 200
    assert await status(ops + "/healthz") == 200


@pytest.mark.parametrize(
    "forwarded", [{"X-Forwarded-For": "203.0.113.9"}, {"X-Real-IP": "203.0.113.9"}, {"Forwarded": "for=x"}]
)
async def test_local_metrics_refuse_what_a_proxy_passed_on(by_webhook, forwarded):
    url = by_webhook.bot.http_url + "/metrics"
    assert await status(url) == 200
    assert await status(url, forwarded) == 403
