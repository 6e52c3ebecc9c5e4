"""An update Telegram delivers again is handled once, the whole process by webhook: a ``/leave``
mid-round posted twice (its first delivery's answer lost, as Telegram sees it) does not confirm
itself, and after a restart the same update is still known (issue 24, finding 3)."""

from __future__ import annotations

import asyncio
import sqlite3

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from faketg.harness import GROUP
from tests.component.scenarios import open_and_start

PEOPLE = [1, 2, 3]


@pytest.fixture
def webhook_env():
    return {"PAIJU_METRICS": "local"}


async def redelivered(stage) -> float:
    async with aiohttp.ClientSession() as http, http.get(stage.bot.http_url + "/metrics") as answer:
        text = await answer.text()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "paiju_updates_redelivered_total":
                return sample.value
    raise AssertionError("no paiju_updates_redelivered_total in /metrics")


def escapes(database) -> int:
    with sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM ledger WHERE reason = 'escape_penalty'").fetchone()[0]


async def deliver_again(stage, update, count: float) -> None:
    """Telegram posts ``update`` once more; wait until the bot has dropped it (the ``count``-th drop)
    or, without the fix, has charged an escape for it."""
    stage.world.updates.append(update)
    await stage.emulator.notify()
    loop = asyncio.get_running_loop()
    give_up = loop.time() + 30
    while await redelivered(stage) < count and not escapes(stage.bot.database):
        assert loop.time() < give_up, "the update delivered again was neither dropped nor handled"
        await asyncio.sleep(0.05)


async def test_a_leave_delivered_twice_is_not_its_own_confirmation(by_webhook):
    stage = by_webhook
    await open_and_start(stage, PEOPLE, "muxi")
    await stage.driver.press(1, GROUP, "当庄")  # the deal: a /leave now is an escape

    update = stage.world.post(2, GROUP, "/leave")
    await stage.emulator.deliver(update)  # the first /leave names the price; a second within 5 s confirms
    await deliver_again(stage, update, 1)
    assert escapes(stage.bot.database) == 0, "a redelivered /leave confirmed the escape"
    assert await redelivered(stage) == 1

    await stage.bot.stop()  # the update ids taken are saved: a restart still knows this one
    await stage.bot.start()
    await deliver_again(stage, update, 1)
    assert escapes(stage.bot.database) == 0
