"""Telegram faults: with a tenth of the bot's requests failing (429 with retry_after, 5xx, slow
answers, dropped connections), games of both kinds finish correctly, nothing is booked twice, and
the bot's log holds no unhandled exception."""

import random

from faketg.harness import ADMIN, GROUP
from faketg.server import Faults
from tests.process.e2e.process import storage_check
from tests.process.reliability.players import Report, paid_twice, play
from tests.process.reliability.profile import PROFILE

TENTH = Faults(rate_limited=0.025, server_error=0.025, slow=0.025, dropped=0.025, slow_seconds=1.0, seed=7)


async def test_games_finish_with_a_tenth_of_requests_failing(stages):
    stage = await stages(TENTH)
    rng, report = random.Random(7), Report()
    games = PROFILE["fault_games"]
    await play(stage, "muxi", [1, 2, 3, 4, 5], games, rng, report=report)
    await stage.driver.send(ADMIN, GROUP, "/cancel")
    await play(stage, "showhand", [1, 2, 3, 4], games, rng, report=report)
    injected = dict(stage.emulator.faults.injected)
    stage.emulator.faults = Faults()
    await stage.bot.stop()
    assert sum(injected.values()) > 0 and report.games == 2 * games
    assert not stage.world.flagged_groups(), "never more than 20 bot requests a minute in the group"
    assert paid_twice(str(stage.bot.database)) == []
    check = storage_check(stage.bot.database)
    assert check.returncode == 0, check.stdout + check.stderr
    log = stage.bot.log.read_text()
    assert "Traceback" not in log and "an update failed" not in log, log[-3000:]
    print(f"fault profile: {report}, faults injected: {injected}")
