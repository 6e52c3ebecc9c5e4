"""Buttons after a crash (issue 31): after a SIGKILL at any point of handling a press, and a start
again on the same database, the table and every DM offer only buttons the engine accepts now: no two
live prompts for one person, none for someone who is not asked, and whoever is asked has theirs.

Whole process (``python -m bot`` against the emulator over HTTP), with the cards chosen: a showhand
betting round after card 4 (a bet, an all-in, a fold, the first to speak asked again and calling)
and a muxi round (the bank, two players' choices, the banker's). Each test kills the bot at one
``KillPoint`` of every press of its round, checks what people see once the restarted bot is done
sending (``tests.process.e2e.buttons.findings``) and plays on. The last two hold back the edit that takes an
answered prompt's buttons away until the same person is asked again (Telegram's 429), as seen in
the issue: the old prompt must lose its buttons before the new one comes, or with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from bot.display.views.showhand import ACTION_CODES
from bot.model import callbacks
from faketg.harness import GROUP, PEOPLE, make_world, too_many
from games.showhand import Move
from tests.process.e2e.buttons import (
    Hold,
    KillPoint,
    accepts,
    after_a_prompt,
    dealt_stage,
    find_button,
    findings,
    live_moves,
    must_act,
    press_and_kill,
    restart,
    settle,
    to_chat,
    until,
)
from tests.process.reliability.players import Saved, saved_table
from tests.unit.games.muxi_helpers import rigged as muxi_deck
from tests.unit.games.showhand_helpers import rigged as showhand_deck

PLAYERS = [1, 2, 3]
SHOWHAND = showhand_deck(PLAYERS, 1, {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH", 3: "KD QH JC 10S 9D"}).deck
MUXI = muxi_deck([2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"}).deck  # 5 points each: all choose


@dataclass(frozen=True)
class Step:
    """One press of the round: who presses which button, read from the table as saved."""

    says: str
    choose: Callable[[Saved], tuple[int, str, str | None]]  # (person, action code, argument)


def showhand_move(move: Move) -> Callable[[Saved], tuple[int, str, str | None]]:
    """Whoever's turn it is presses ``move`` (its least amount)."""

    def choose(saved: Saved) -> tuple[int, str, str | None]:
        person = saved.engine.turn
        options = [option for option in saved.engine.legal_actions(person) if option.move is move]
        assert options, f"{PEOPLE[person]} may not {move} now"
        return person, ACTION_CODES[move], str(min(option.amount for option in options))

    return choose


# In both, the first to press is asked again at the last step.
SHOWHAND_CARD_4 = [
    Step("the first to speak bets the least", showhand_move(Move.BET)),
    Step("the next goes all in", showhand_move(Move.ALL_IN)),
    Step("the third folds", showhand_move(Move.FOLD)),
    Step("the first to speak, asked again, calls the all-in", showhand_move(Move.CALL)),
]
MUXI_ROUND = [
    Step("阿明 takes the bank", lambda saved: (1, "banker", None)),
    Step("小红 draws", lambda saved: (2, "draw", None)),
    Step("阿强 stands", lambda saved: (3, "stand", None)),
    Step("阿明, the banker, asked again, stands", lambda saved: (1, "stand", None)),
]


@pytest.fixture
async def staged(tmp_path):
    """Make a stage dealing a chosen deck with ``await staged(deck)``; stopped after the test."""
    made = []

    async def make(deck):
        made.append(await dealt_stage(make_world(), tmp_path, deck))
        return made[-1]

    yield make
    for stage in made:
        stage.emulator.release()
        await stage.bot.stop()
        await stage.emulator.stop()


async def open_round(stage, game):
    """Everyone sits down and starts; for showhand, cards 2 and 3 are checked through at the table.
    The bot is then done sending."""
    d = stage.driver
    await d.send(PLAYERS[0], GROUP, f"/newgame {game}")
    await until(lambda: "加入" in d.labels(GROUP), "the lobby is shown")  # a command has no answer to wait on
    for person in PLAYERS[1:]:
        await d.press(person, GROUP, "加入")
    for person in PLAYERS:
        await d.press(person, GROUP, "开始")
    database = str(stage.bot.database)
    while game == "showhand" and (saved := saved_table(database)).engine.card_no < 4:
        data = callbacks.encode(game, saved.table_id, saved.engine.game_no, "check", 0)
        await stage.emulator.deliver(stage.world.press(saved.engine.turn, GROUP, saved.message_id, data))
    await settle(stage)


def chosen(stage, step, table=True):
    """The person of ``step`` and their button: in their DM when it has it, else (with ``table``)
    at the table; None when neither has it."""
    person, action, arg = step.choose(saved_table(str(stage.bot.database)))
    return person, find_button(stage.world, person, action, arg, table)


async def press_step(stage, step):
    """The person of ``step`` presses its button in their DM, once it is there."""
    await until(lambda: chosen(stage, step, table=False)[1], f"the prompt for: {step.says}")
    person, button = chosen(stage, step, table=False)
    await stage.driver.press_data(person, button.chat_id, button.message.message_id, button.data)
    return person


class Problems:
    """What was wrong, each said once: when it was first seen, and when it was seen again."""

    def __init__(self):
        self.first: dict[str, str] = {}  # place -> when it was first seen: what was wrong
        self.again: dict[str, list[str]] = {}

    def add(self, when, found):
        for place, line in found:
            if place in self.first:
                self.again[place].append(when)
            else:
                self.first[place], self.again[place] = f"{when}: {line}", []

    def __bool__(self):
        return bool(self.first)

    def __str__(self):
        return "\n".join(
            line + (f" (still so: {'; '.join(self.again[place])})" if self.again[place] else "")
            for place, line in self.first.items()
        )


async def play_killing(stage, steps, point):
    """Play ``steps``, each press's handling cut by a SIGKILL at ``point``; after each restart, what
    is wrong with the buttons people see."""
    database, problems = str(stage.bot.database), Problems()
    for number, step in enumerate(steps, 1):
        saved = saved_table(database)
        person, button = chosen(stage, step)
        assert button is not None, f"step {number} ({step.says}): {PEOPLE[person]} has no button for it"
        assert accepts(saved, button.press, person), f"step {number} ({step.says}): judged refused"
        await press_and_kill(stage, person, button, point)
        after = saved_table(database)
        assert after.engine.to_dict() != saved.engine.to_dict(), f"step {number} ({step.says}) was not taken"
        # The judge refuses the same press now (a second bet, a second choice): it tells them apart.
        assert not accepts(after, button.press, person), f"step {number} ({step.says}): judged accepted again"
        problems.add(f"killed {point.value} at step {number} ({step.says})", await findings(stage, PLAYERS))
    return problems


# At every point, a new prompt Telegram showed whose answer never reached the bot (killed meanwhile)
# included: the restarted bot takes its buttons away (``bot.send.orphans``).
KILL_POINTS = list(KillPoint)


@pytest.mark.parametrize("point", KILL_POINTS, ids=lambda point: point.value)
async def test_showhand_betting_offers_only_accepted_buttons_after_a_sigkill(staged, point):
    stage = await staged(SHOWHAND)
    await open_round(stage, "showhand")
    problems = await play_killing(stage, SHOWHAND_CARD_4, point)
    assert "结算" in stage.driver.table(GROUP), "the game is over: the all-in was called"
    assert not problems, str(problems)


@pytest.mark.parametrize("point", KILL_POINTS, ids=lambda point: point.value)
async def test_muxi_round_offers_only_accepted_buttons_after_a_sigkill(staged, point):
    stage = await staged(MUXI)
    await open_round(stage, "muxi")
    problems = await play_killing(stage, MUXI_ROUND, point)
    assert "结算" in stage.driver.table(GROUP), "the round is over: everyone chose"
    assert not problems, str(problems)


def can_act(stage, person):
    """Does ``person``'s DM offer them a move the engine takes now?"""
    saved = saved_table(str(stage.bot.database))
    return any(accepts(saved, button.press, person) for button in live_moves(stage.world, [person]))


async def answered_then_asked_again(stage, steps):
    """The first step's person answers their prompt, but the edit that follows in their DM waits
    (held, then refused with a 429) until the other steps have asked them again; whatever the bot
    sends to their DM after the new prompt is lost, and the bot is killed. What is wrong with the
    buttons before the kill (the answered prompt must have lost its buttons by the time the new one
    shows, or with it) and after the restart, then after the last step."""
    problems, database = Problems(), str(stage.bot.database)
    person = steps[0].choose(saved_table(database))[0]
    waits = stage.emulator.hold = Hold(to_chat(person), done=False)
    await press_step(stage, steps[0])
    await until(lambda: waits.has(chat_id=person), f"the bot edits {PEOPLE[person]}'s DM")
    for step in steps[1:-1]:
        await press_step(stage, step)
    assert person in must_act(saved_table(database)), f"{PEOPLE[person]} is asked again"
    prompted: set[str] = set()
    stage.emulator.hold = Hold(after_a_prompt(prompted, [person]), done=False)
    waits.release(too_many(1))
    await until(lambda: can_act(stage, person), f"{PEOPLE[person]}'s DM asks them again")
    await settle(stage)
    problems.add("asked again, before any restart", await findings(stage, PLAYERS))
    await restart(stage)
    problems.add("after the restart", await findings(stage, PLAYERS))
    await press_step(stage, steps[-1])
    await settle(stage)
    problems.add(f"after the last step ({steps[-1].says})", await findings(stage, PLAYERS))
    return problems


async def test_showhand_an_answered_prompt_loses_its_buttons_before_the_next_one(staged):
    stage = await staged(SHOWHAND)
    await open_round(stage, "showhand")
    problems = await answered_then_asked_again(stage, SHOWHAND_CARD_4)
    # The all-in was called: the last card is dealt on the table, then the game is over.
    await until(lambda: "结算" in stage.driver.table(GROUP), "the game is over: the all-in was called")
    assert not problems, str(problems)


async def test_muxi_an_answered_prompt_loses_its_buttons_before_the_next_one(staged):
    stage = await staged(MUXI)
    await open_round(stage, "muxi")
    problems = await answered_then_asked_again(stage, MUXI_ROUND)
    assert "结算" in stage.driver.table(GROUP), "the round is over: everyone chose"
    assert not problems, str(problems)
