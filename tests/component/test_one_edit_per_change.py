"""One edit per change of a message, never an identical one twice (issue 51, point 3), in a busy
group: with someone on 托管, a round's end edits each DM once, though the autopilot's readiness
presents the table again while those edits are still on their way (Telegram slow to answer)."""

from __future__ import annotations

import asyncio

from faketg.harness import GROUP
from faketg.request import FakeRequest
from tests.component.decks import stack
from tests.component.scenarios import live_table, open_and_start, spend_the_group_budget

DM_EDITS = ("editMessageText", "editMessageReplyMarkup")


def slow_dm_edits(monkeypatch, seconds: float) -> None:
    """Telegram takes ``seconds`` to answer an edit in a private chat."""
    real = FakeRequest.do_request

    async def do_request(self, url, method, request_data=None, *args, **kwargs):
        params = request_data.parameters if request_data else {}
        if url.rsplit("/", 1)[-1] in DM_EDITS and int(params.get("chat_id", 0)) > 0:
            await asyncio.sleep(seconds)
        return await real(self, url, method, request_data, *args, **kwargs)

    monkeypatch.setattr(FakeRequest, "do_request", do_request)


async def test_a_round_end_with_someone_on_autopilot_edits_each_dm_once_in_a_busy_group(
    bot, world, monkeypatch
):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"}, "7S 8H 9S")
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await d.press(3, 3, "不补")
    await bot.fire_timer()  # 小红 does not choose: stands, and goes on 托管
    assert 2 in live_table(bot).view.autopilot
    spend_the_group_budget(bot, {1.0: 8})
    slow_dm_edits(monkeypatch, 0.3)
    before = len(world.requests)
    await d.press(1, 1, "不补")  # the banker stands: the round is over
    sent = [r for r in world.requests[before:] if r.chat_id in (1, 2, 3) and r.method in DM_EDITS]
    assert sent, "the round's end reached the DMs"
    assert [r for r in sent if r.error] == [], [(r.method, r.chat_id, r.error) for r in sent]
    edits = [(r.chat_id, r.params["message_id"], r.params.get("text")) for r in sent]
    assert len(edits) == len(set(edits)), "no identical edit twice"
