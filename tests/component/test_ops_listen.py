"""``/healthz`` and ``/metrics`` kept off the public server (issue 24, finding 8), with the bot served
by webhook in process (``tests/component/serving.py``: ``bot.serve.serve`` starts its servers as
``python -m bot`` does): with ``PAIJU_METRICS_LISTEN`` they are served on their own address only,
so a reverse proxy that forwards everything to the bot's public server never reaches them; with
``PAIJU_METRICS=local`` a request a proxy passed on (it says so in its headers) is not taken as
this machine's."""

from __future__ import annotations

import aiohttp

from tests.process.e2e.process import WEBHOOK_PATH, free_port

FORWARDED = [{"X-Forwarded-For": "203.0.113.9"}, {"X-Real-IP": "203.0.113.9"}, {"Forwarded": "for=x"}]


async def status(url: str, headers: dict[str, str] | None = None) -> int:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as answer:
        return answer.status


async def test_the_public_server_has_no_health_nor_metrics_when_they_have_their_own(serving):
    port = free_port()
    stage = await serving(webhook=True, metrics="local", metrics_listen=("127.0.0.1", port))
    public, ops = stage.http_url, f"http://127.0.0.1:{port}"
    assert await status(public + "/metrics") == 404
    assert await status(public + "/healthz") == 404
    async with aiohttp.ClientSession() as http, http.post(public + WEBHOOK_PATH) as answer:
        assert answer.status == 403, "the webhook is still on the public server"
    assert await status(ops + "/metrics") == 200
    assert await status(ops + "/healthz") == 200


async def test_local_metrics_refuse_what_a_proxy_passed_on(serving):
    stage = await serving(webhook=True, metrics="local")
    url = stage.http_url + "/metrics"
    assert await status(url) == 200
    for forwarded in FORWARDED:
        assert await status(url, forwarded) == 403, forwarded
