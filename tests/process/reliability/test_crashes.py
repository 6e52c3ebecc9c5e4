"""Crashes: whole games with the bot SIGKILLed at random moments (while it handles a press) and
started again; every game ends by its rules, the books balance, and no round is paid twice."""

import random

from faketg.harness import ADMIN, GROUP
from storage import check_database
from tests.process.e2e.process import storage_check
from tests.process.reliability.players import Report, paid_twice, play, saved_table
from tests.process.reliability.profile import PROFILE


async def test_games_finish_and_nothing_is_paid_twice_across_sigkills(stages):
    stage = await stages()
    rng, report = random.Random(2026), Report()
    database = str(stage.bot.database)
    games = PROFILE["crash_games"]
    for number in range(games):
        game = "muxi" if number < games // 2 else "showhand"
        if game == "showhand" and saved_table(database) is not None and saved_table(database).game == "muxi":
            await stage.driver.send(ADMIN, GROUP, "/cancel")  # one table per group: the muxi one ends
        people = [1, 2, 3, 4, 5] if game == "muxi" else [1, 2, 3, 4]
        await play(stage, game, people, 1, rng, crash=0.12, escapes=0.02, report=report)
        check = check_database(database)
        assert check.ok, check.render()
    assert report.games == games and report.crashes > 0
    await stage.bot.stop()
    assert paid_twice(database) == []
    final = storage_check(stage.bot.database)
    assert final.returncode == 0, final.stdout + final.stderr
    print(f"crash profile: {report}")
