"""The bot while Telegram misbehaves (issues 30 and 47), served in this process as ``python -m bot``
serves it, against the emulator over HTTP, faults injected there (``tests/component/serving.py``): a
command menu refused at every try does not hold start-up back nor stop the bot from playing, and is
set once Telegram recovers; a membership check that fails gets the admin a "try again" and the log
one line; a failing poll is one line and polling resumes by itself; a server that answers
``getUpdates`` at once costs a bounded poll rate; a turn does not run out while the bot cannot hear.

The pauses between tries (a request's, the menu's, a quick poll's) are shortened here where a test
waits them out; what is tried, how often, and what the log says is not.
(A start that fails is a process's exit: ``tests/process/e2e/test_telegram_fails.py``.)
"""

from __future__ import annotations

import gc
import logging

import pytest

from bot import app as botapp
from bot.app import MENU_LANGUAGES
from bot.display.i18n import t
from bot.send import aiohttp_request
from bot.updates import hearing
from faketg.harness import ADMIN, GROUP
from faketg.server import Faults
from tests.component.decks import ESCAPE_DEAL, stack
from tests.component.scenarios import open_and_start
from tests.component.serving import Serving
from tests.waiting import until

RIGHTS_UNKNOWN = t("zh-hans", "rights.unknown")
TRIES = len(aiohttp_request.PAUSES) + 1  # a request that keeps failing is tried this many times


@pytest.fixture
def quick_retries(monkeypatch):
    """A failed request is tried again after 10 ms, not after a third of a second and more."""
    monkeypatch.setattr(aiohttp_request, "PAUSES", (0.01,) * len(aiohttp_request.PAUSES))


@pytest.fixture
def logged(caplog):
    caplog.set_level(logging.INFO)
    return caplog


def group_texts(stage: Serving) -> list[str]:
    return [message.text for message in stage.world.bot_messages(GROUP)]


def lines(caplog, words: str) -> list[str]:
    return [record.getMessage() for record in caplog.records if words in record.getMessage()]


def tracebacks(caplog) -> list[str]:
    """The lines logged with a traceback, and the sessions aiohttp found unclosed (once collected)."""
    gc.collect()
    return [
        record.getMessage()
        for record in caplog.records
        if record.exc_info or "Unclosed" in record.getMessage() or "an update failed" in record.getMessage()
    ]


async def test_the_bot_starts_and_plays_while_the_menu_is_refused_and_sets_it_later(
    serving, quick_retries, monkeypatch, logged
):
    monkeypatch.setattr(botapp, "MENU_PAUSES", (0.1, 0.2, 0.3))
    stage = await serving(Faults(always={"setMyCommands": "internal_error"}))  # it polls: not held back
    assert not stage.application.bot_data.menu.done(), "the menu is still being tried"

    await open_and_start(stage, [1, 2, 3], "muxi")  # a whole round, the menu still refused
    await stage.driver.press(1, GROUP, "当庄")
    await stage.driver.finish_muxi_round(GROUP, [1, 2, 3])
    assert "第 1 局 · 结算" in stage.driver.table_message(GROUP).text
    assert stage.world.commands == {}
    await until(lambda: stage.emulator.faults.injected.get("internal_error", 0) >= 2 * TRIES)  # two rounds

    stage.emulator.faults = Faults()  # Telegram recovers: the menu is set, in every language
    await until(lambda: len(stage.world.commands) == len(MENU_LANGUAGES))
    assert stage.world.commands[""][0]["command"] == "newgame"
    await stage.stop()
    assert len(lines(logged, "command menu could not be set")) == 1, logged.text[-3000:]
    assert len(lines(logged, "command menu is set")) == 1, logged.text[-3000:]
    assert tracebacks(logged) == []


async def test_a_failed_membership_check_answers_the_admin_and_logs_one_line(serving, quick_retries, logged):
    stage = await serving()
    await stage.driver.send(ADMIN, GROUP, "/settings")  # shown while Telegram answers
    stage.emulator.faults = Faults(always={"getChatMember": "internal_error"})

    # Three admins (the same reply to the same person is sent once in a few seconds).
    stage.world.chats[GROUP].admins |= {1, 2}
    commands = ((ADMIN, "/settings"), (1, "/cancel"), (2, "/language"))
    for number, (admin, command) in enumerate(commands, start=1):
        await stage.driver.send(admin, GROUP, command)
        await until(lambda n=number: group_texts(stage).count(RIGHTS_UNKNOWN) == n)
    await stage.driver.press(ADMIN, GROUP, "English")  # on the settings shown: a popup answers
    await until(lambda: RIGHTS_UNKNOWN in [popup.text for popup in stage.world.popups.get(ADMIN, [])])

    # Each failed check was tried 4 times (the request layer's retries, no second loop on them).
    assert TRIES == 4
    assert stage.emulator.faults.injected["internal_error"] == TRIES * (len(commands) + 1)
    stage.emulator.faults = Faults()
    await stage.driver.send(ADMIN, GROUP, "/cancel")  # Telegram answers again: so does the bot
    await until(lambda: t("zh-hans", "table.none") in group_texts(stage))  # (within the reply budget)
    await stage.stop()
    assert len(lines(logged, "getChatMember")) == len(commands) + 1, logged.text[-3000:]
    assert tracebacks(logged) == []


async def test_a_server_that_does_not_long_poll_is_polled_at_a_bounded_rate(serving, monkeypatch, logged):
    every = 0.1  # seconds between polls once they come back at once (1 s in the bot)
    monkeypatch.setattr(aiohttp_request, "POLL_EVERY", every)
    faults = Faults(always={"getUpdates": "at_once"})
    stage = await serving(faults)
    polls, first = 12, stage.emulator.polls
    await until(lambda: stage.emulator.polls >= first + polls + 1)
    times = [r.at for r in stage.world.requests if r.method == "getUpdates"][-polls - 1 :]
    # A few quick answers are taken as they come; then no more than about one poll each ``every``.
    assert times[-1] - times[0] >= 0.9 * every * (polls - aiohttp_request.QUICK_POLLS - 1), times

    await stage.driver.send(1, GROUP, "/help")  # the bot still takes what comes, at that pace
    await until(lambda: len(group_texts(stage)) == 1)
    stage.emulator.faults = Faults()
    await stage.stop()
    assert len(lines(logged, "does not long-poll")) == 1, logged.text[-3000:]


async def test_a_failing_poll_is_one_log_line_and_polling_resumes(serving, monkeypatch, logged):
    monkeypatch.setattr(hearing, "POLL_PAUSES", (0.05,) * len(hearing.POLL_PAUSES))  # (0.5 s to 3 s)
    stage = await serving()
    stage.emulator.faults = Faults(always={"getUpdates": "internal_error"})
    await stage.emulator.end_polls()  # (the poll in flight ends: the next ones fail)
    await until(lambda: stage.emulator.faults.injected.get("internal_error", 0) >= 3)
    stage.emulator.faults = Faults()
    await stage.driver.send(1, GROUP, "/help")  # polling went on by itself
    await until(lambda: len(group_texts(stage)) == 1)
    await stage.stop()
    assert len(lines(logged, "getUpdates failed")) >= 3, logged.text[-3000:]
    assert tracebacks(logged) == []


async def test_a_turn_does_not_run_out_while_the_bot_cannot_hear_and_polling_is_back_within_seconds(
    serving, logged
):
    """Issue 47, point 9: getUpdates fails for longer than the whole turn (Telegram takes the bot's
    sends, but gives it no update). The deadline is held meanwhile and the turn gets that time
    back: a draw pressed once the bot hears again is taken. Polling comes back within a few
    seconds of the server (PTB's own loop waited up to 30 s between tries). Turns of 5 s here (the
    shortest the environment may set is 10 s: the same clock, a shorter wait)."""
    turn = 5
    stage = await serving(turn_seconds=turn)
    stack(stage, [2, 3, 1], ESCAPE_DEAL)  # 1 the banker; 2 and 3 must choose (none stands by itself)
    await open_and_start(stage, [1, 2, 3])
    await stage.driver.press(1, GROUP, "当庄")
    await until(lambda: stage.driver.labels(2) or stage.driver.labels(3), "someone is asked to draw")
    stage.emulator.faults = faults = Faults(always={"getUpdates": "internal_error"})
    await stage.emulator.end_polls()  # (the poll in flight ends: the next ones fail)
    await until(lambda: faults.injected.get("internal_error"), "polls fail")
    failing = stage.world.clock()
    await until(lambda: stage.world.clock() - failing > 1.4 * turn, "deaf for longer than the turn")
    stage.emulator.faults = Faults()
    back = stage.world.clock()
    assert await stage.driver.finish_muxi_round(GROUP, [1, 2, 3]) >= 1, "their answers were taken"
    heard = next(r.at for r in stage.world.requests if r.method == "getUpdates" and r.at > back)
    assert heard - back < 4.0, "polling is back within seconds"
    assert "超时" not in stage.driver.table_message(GROUP).text, stage.driver.table_message(GROUP).text
    await stage.stop()
    assert len(lines(logged, "turns' clocks are held")) == 1, logged.text[-3000:]
