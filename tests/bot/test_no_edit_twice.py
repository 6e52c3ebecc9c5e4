"""No identical edit twice (issue 47, point 10; issue 51, point 3): with someone on 托管, the end
of a round changes each DM once, then the autopilot's readiness presents the table again while
those edits are still in flight (Telegram slow to answer): what they already show is not sent
again (Telegram would refuse it: "message is not modified").

The bot served in process against the emulator over HTTP (``tests/bot/serving.py``), with turns of
4 s (the environment's least is 10 s: the same clock, a shorter wait)."""

from __future__ import annotations

from faketg.harness import GROUP
from faketg.server import Faults
from tests.bot.decks import ESCAPE_DEAL, stack
from tests.bot.scenarios import open_and_start
from tests.waiting import until

TURN = 4


async def test_a_round_end_with_someone_on_autopilot_edits_each_dm_once(serving):
    stage = await serving(turn_seconds=TURN)
    world = stage.world
    stack(stage, [2, 3, 1], ESCAPE_DEAL)  # 1 the banker; 5 points each: everyone is asked
    await open_and_start(stage, [1, 2, 3])
    await stage.driver.press(1, GROUP, "当庄")
    await until(lambda: stage.driver.labels(2) or stage.driver.labels(3), "someone is asked to draw")
    await until(lambda: "🤖" in stage.driver.table_message(GROUP).text, "a deadline acts: 托管", timeout=20)
    stage.emulator.faults = Faults(always={"editMessageText": "slow"}, slow_seconds=1.0)
    await until(lambda: {"补牌", "不补"} & set(stage.driver.labels(1)), "the banker is asked", timeout=20)
    await stage.driver.press(1, 1, "不补" if "不补" in stage.driver.labels(1) else "补牌")
    await until(lambda: "结算" in stage.driver.table_message(GROUP).text, "the round is over", timeout=30)
    await until(lambda: stage.emulator.in_flight == 0, "every edit answered", timeout=30)
    refused = [r for r in world.requests if r.error == 400 and r.chat_id in (1, 2, 3)]
    assert refused == [], [(r.method, r.chat_id) for r in refused]
