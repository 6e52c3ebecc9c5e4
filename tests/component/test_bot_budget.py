"""A bot held to a global budget on every request (``PAIJU_BOT_REQUESTS_PER_SECOND``), through the
fake Telegram enforcing that budget (its pessimistic mode): the bot paces itself and is never
refused, where without the setting the same play draws 429s."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.send.rate_policy import Limits
from bot.settings import Settings
from faketg.harness import GROUP, make_world, start_bot, stop_bot
from faketg.limits import FloodLimits
from tests.component.decks import stack
from tests.component.scenarios import labels, newest, open_and_start

GLOBAL = 4  # requests a second Telegram takes from the bot, every chat together


def telegram_holding_the_bot_to(per_second: int) -> FloodLimits:
    """Only the global budget binds (the per-chat ones are far away): what is measured is it."""
    return FloodLimits(
        group_requests=10_000,
        private_burst=10_000,
        private_rate=10_000.0,
        pessimistic=True,
        global_requests=per_second,
    )


async def answers_to_a_round(database: str, limits: Limits) -> list[int]:
    """Three people play a muxi round to its end; the answers of Telegram to the bot's requests that
    count against the global budget, in order (200 or 429)."""
    world = make_world()
    world.limits = telegram_holding_the_bot_to(GLOBAL)
    bot = await start_bot(world, database, limits=limits)
    try:
        stack(bot, [1, 2, 3], {1: "3H 4H", 2: "5S 6H", 3: "9S 8H"}, "7S 8D")
        await open_and_start(bot, [1, 2, 3])
        await bot.driver.bank_and_stand(GROUP, 1, [2, 3], in_dms=True)
        await bot.runtime.wait_idle()
        assert "继续下一局" in labels(newest(bot, GROUP)), "the round ended: its next can start"
    finally:
        await stop_bot(bot)
    counted = [request for request in world.requests if request.chat_id is not None]
    return [request.error or 200 for request in counted if request.method != "answerCallbackQuery"]


@pytest.mark.parametrize("capped", [True, False], ids=["capped", "uncapped"])
async def test_a_bot_capped_at_the_global_budget_is_never_refused(tmp_path, capped):
    limits = replace(Limits.unlimited(), requests_per_second=GLOBAL if capped else 0)
    answers = await answers_to_a_round(str(tmp_path / "paiju.sqlite3"), limits)
    if capped:
        assert 429 not in answers, "it paced itself to the budget"
        assert len(answers) > 2 * GLOBAL, "the round needed several seconds of the budget"
    else:
        assert 429 in answers, "the same play without the cap learns the budget from refusals"


def test_the_cap_is_a_setting_off_by_default():
    default = Settings.from_env({"TELEGRAM_BOT_TOKEN": "x"}, env_file="/nonexistent")
    assert default.bot_requests_per_second == 0
    settings = Settings.from_env(
        {"TELEGRAM_BOT_TOKEN": "x", "PAIJU_BOT_REQUESTS_PER_SECOND": "30"}, env_file="/nonexistent"
    )
    assert Limits.of_settings(15, settings.bot_requests_per_second).requests_per_second == 30
