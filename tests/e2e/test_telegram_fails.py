"""The real bot process while Telegram misbehaves (issue 30), faults injected by the emulator: a
command menu refused at every try does not stop the bot from starting and playing (it is set once
Telegram recovers); a start that fails closes its connections; a membership check that fails gets
the admin a "try again" and the log one line; a failing poll is one line and polling resumes; a
server that answers ``getUpdates`` at once costs a bounded poll rate."""

from __future__ import annotations

import pytest

from bot.app import MENU_LANGUAGES
from bot.display.i18n import t
from faketg.harness import ADMIN, GROUP, make_world
from faketg.server import Faults
from tests.bot.scenarios import open_and_start
from tests.e2e.process import Stage, make_stage
from tests.e2e.rounds import dm_buttons, finish_muxi_round, table_of
from tests.waiting import until

RIGHTS_UNKNOWN = t("zh-hans", "rights.unknown")


@pytest.fixture
async def staged(tmp_path):
    """A stage whose bot is not started yet (each test starts it under its own faults)."""
    stage = await make_stage(make_world(), tmp_path)
    yield stage
    stage.emulator.faults = Faults()
    if stage.bot.process is not None:
        await stage.bot.stop()
    await stage.emulator.stop()


def group_texts(stage: Stage) -> list[str]:
    return [message.text for message in stage.world.bot_messages(GROUP)]


def lines(stage: Stage, word: str) -> list[str]:
    return [line for line in stage.bot.log.read_text().splitlines() if word in line]


async def test_the_bot_starts_and_plays_while_the_menu_is_refused_and_sets_it_later(staged):
    staged.emulator.faults = Faults(always={"setMyCommands": "internal_error"})
    await staged.bot.start()  # it polls: the menu did not hold start-up back

    await open_and_start(staged, [1, 2, 3], "muxi")  # a whole round, the menu still refused
    await staged.driver.press(1, GROUP, "当庄")
    await finish_muxi_round(staged, [1, 2, 3])
    assert "第 1 局 · 结算" in table_of(staged).text
    assert staged.world.commands == {}
    await until(lambda: staged.emulator.faults.injected.get("internal_error", 0) >= 8)  # two rounds

    staged.emulator.faults = Faults()  # Telegram recovers: the menu is set, in every language
    await until(lambda: len(staged.world.commands) == len(MENU_LANGUAGES), timeout=60)
    assert staged.world.commands[""][0]["command"] == "newgame"
    assert await staged.bot.stop() == 0
    log = staged.bot.log.read_text()
    assert len(lines(staged, "command menu could not be set")) == 1, log[-3000:]
    assert len(lines(staged, "command menu is set")) == 1, log[-3000:]
    assert "Traceback" not in log and "Unclosed" not in log, log[-3000:]


async def test_a_start_that_fails_closes_its_http_sessions(staged):
    staged.emulator.faults = Faults(always={"getMe": "internal_error"})  # needed to play: no start
    with pytest.raises(RuntimeError, match="did not start"):
        await staged.bot.start()
    assert staged.bot.process is not None
    assert await staged.bot.process.wait() == 1
    log = staged.bot.log.read_text()
    assert "the bot stopped" in log and "Unclosed" not in log, log[-3000:]


async def test_a_failed_membership_check_answers_the_admin_and_logs_one_line(staged):
    await staged.bot.start()
    await staged.driver.send(ADMIN, GROUP, "/settings")  # shown while Telegram answers
    staged.emulator.faults = Faults(always={"getChatMember": "internal_error"})

    # Three admins (the same reply to the same person is sent once in a few seconds).
    staged.world.chats[GROUP].admins |= {1, 2}
    commands = ((ADMIN, "/settings"), (1, "/cancel"), (2, "/language"))
    for number, (admin, command) in enumerate(commands, start=1):
        await staged.driver.send(admin, GROUP, command)
        await until(lambda n=number: group_texts(staged).count(RIGHTS_UNKNOWN) == n)
    await staged.driver.press(ADMIN, GROUP, "English")  # on the settings shown: a popup answers
    await until(lambda: RIGHTS_UNKNOWN in [popup.text for popup in staged.world.popups.get(ADMIN, [])])

    # Each failed check was tried 4 times (the request layer's retries, no second loop on them).
    assert staged.emulator.faults.injected["internal_error"] == 4 * (len(commands) + 1)
    staged.emulator.faults = Faults()
    await staged.driver.send(ADMIN, GROUP, "/cancel")  # Telegram answers again: so does the bot
    await until(lambda: t("zh-hans", "table.none") in group_texts(staged))  # (within the reply budget)
    assert await staged.bot.stop() == 0
    log = staged.bot.log.read_text()
    assert len(lines(staged, "getChatMember")) == len(commands) + 1, log[-3000:]
    assert "Traceback" not in log and "an update failed" not in log, log[-3000:]


async def test_a_server_that_does_not_long_poll_is_polled_at_a_bounded_rate(staged):
    staged.emulator.faults = Faults(always={"getUpdates": "at_once"})
    first = staged.emulator.polls
    await staged.bot.start()
    polls = 12
    await until(lambda: staged.emulator.polls >= first + polls + 1)
    times = [r.at for r in staged.world.requests if r.method == "getUpdates"][-polls - 1 :]
    # A few quick answers are taken as they come; then no more than about one poll a second.
    assert times[-1] - times[0] >= 0.9 * (polls - 4), times

    await staged.driver.send(1, GROUP, "/help")  # the bot still takes what comes, at that pace
    await until(lambda: len(group_texts(staged)) == 1)
    staged.emulator.faults = Faults()
    assert await staged.bot.stop() == 0
    log = staged.bot.log.read_text()
    assert len(lines(staged, "does not long-poll")) == 1, log[-3000:]


async def test_a_failing_poll_is_one_log_line_and_polling_resumes(staged):
    await staged.bot.start()
    staged.emulator.faults = Faults(always={"getUpdates": "internal_error"})
    await until(lambda: staged.emulator.faults.injected.get("internal_error", 0) >= 3)
    staged.emulator.faults = Faults()
    await staged.driver.send(1, GROUP, "/help")  # polling went on by itself
    await until(lambda: len(group_texts(staged)) == 1)
    assert await staged.bot.stop() == 0
    log = staged.bot.log.read_text()
    assert len(lines(staged, "getUpdates failed")) >= 3, log[-3000:]
    assert "Traceback" not in log and "an update failed" not in log, log[-3000:]


async def test_a_turn_does_not_run_out_while_the_bot_cannot_hear_and_polling_is_back_within_seconds(staged):
    """Issue 47, point 9: getUpdates fails for longer than the whole turn (Telegram takes the bot's
    sends, but gives it no update). The deadline is held meanwhile and the turn gets that time
    back: a draw pressed once the bot hears again is taken. Polling comes back within a few
    seconds of the server (PTB's own loop waited up to 30 s between tries)."""
    staged.bot.extra_env["PAIJU_TURN_SECONDS"] = "10"
    await staged.bot.start()
    await open_and_start(staged, [1, 2, 3])
    await staged.driver.press(1, GROUP, "当庄")
    await until(lambda: dm_buttons(staged, 2) or dm_buttons(staged, 3), "someone is asked to draw")
    staged.emulator.faults = faults = Faults(always={"getUpdates": "internal_error"})
    staged.world.post(1, 1, "/balance")  # (ends the poll in flight: the next ones fail)
    await staged.emulator.notify()
    await until(lambda: faults.injected.get("internal_error"), "polls fail")
    failing = staged.world.clock()
    await until(lambda: staged.world.clock() - failing > 14, "deaf for longer than the turn", timeout=30)
    staged.emulator.faults = Faults()
    back = staged.world.clock()
    assert await finish_muxi_round(staged, [1, 2, 3]) >= 1, "their answers were taken"
    heard = next(r.at for r in staged.world.requests if r.method == "getUpdates" and r.at > back)
    assert heard - back < 4.0, "polling is back within seconds"
    assert "超时" not in table_of(staged).text, table_of(staged).text
    assert await staged.bot.stop() == 0
    log = staged.bot.log.read_text()
    assert len(lines(staged, "turns' clocks are held")) == 1, log[-3000:]
