"""A press saved but never answered (issue 47, point 5): the bot is killed after a press's action
is saved and before its answer reaches Telegram (here its answer's connection drops). The
restarted bot answers it, while Telegram still takes an answer: the person's button stops spinning,
and is answered once."""

from __future__ import annotations

import pytest

from faketg.harness import GROUP, make_world
from faketg.server import Faults
from tests.component.scenarios import open_and_start
from tests.process.e2e.process import make_stage
from tests.waiting import until


@pytest.fixture
async def stage(tmp_path):
    staged = await make_stage(make_world(), tmp_path)
    await staged.bot.start()
    yield staged
    staged.emulator.faults = Faults()
    if staged.bot.process is not None and staged.bot.process.returncode is None:
        await staged.bot.stop()
    await staged.emulator.stop()


async def test_a_press_saved_by_a_bot_killed_before_its_answer_is_answered_after_the_restart(stage):
    world = stage.world
    await open_and_start(stage, [1, 2, 3])
    table = next(
        m for m in reversed(world.bot_messages(GROUP)) if any("当庄" in str(b["text"]) for b in m.buttons)
    )
    data = next(str(b["callback_data"]) for b in table.buttons if "当庄" in str(b["text"]))
    stage.emulator.faults = faults = Faults(always={"answerCallbackQuery": "dropped"})
    update = world.press(1, GROUP, table.message_id, data)
    query_id = str(update["callback_query"]["id"])
    await stage.emulator.notify()
    await until(lambda: "庄家 阿明" in world.messages[(GROUP, table.message_id)].text, "the press acted")
    await until(lambda: faults.injected.get("dropped"), "its answer is lost on its way")
    await until(
        lambda: stage.emulator.taken_offset > int(update["update_id"]), "Telegram will not send it again"
    )
    await stage.bot.kill()
    assert query_id in world.open_queries, "(never answered)"
    stage.emulator.faults = Faults()
    await stage.bot.start()
    await until(lambda: query_id not in world.open_queries, "answered by the restarted bot", timeout=15)
    answers = [
        r
        for r in world.requests
        if r.method == "answerCallbackQuery" and r.params.get("callback_query_id") == query_id
    ]
    assert [r.error for r in answers if r.error is None] != [], answers
    said = "presses saved by a process that ended before answering are answered"  # (once it has)
    await until(lambda: said in stage.bot.log.read_text(), f"the log says so: {said}", timeout=10)
