"""The turn clock (bot/tables/turn_clock.py) and what a table saves of it and of its messages: one job per
table, the turn saved with the table (also when it moves between actions), and tables saved by an
older version (the deadline in the view, digest strings and a ``reminded`` entry among the shown
hashes) carried on exactly."""

from __future__ import annotations

import json
import sqlite3

from bot.model.live_table import Turn
from bot.model.shown import Shown
from faketg.harness import GROUP, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.scenarios import open_and_start, remind


def test_what_a_message_shows_reads_as_saved_now_and_as_older_versions_saved_it():
    prompt = Shown.of("text", {"inline_keyboard": []}, turn=7, reminded=True)
    assert Shown.from_saved(prompt.to_saved()) == prompt
    assert Shown.from_saved(f"{prompt.text_hash}:{prompt.buttons_hash}:7.1") == prompt, (
        "an older digest string"
    )
    plain = Shown.of("text", None, turn=7)
    assert plain.turn is None and not plain.has_buttons, "no buttons: no prompt"
    assert Shown.from_saved(f"{plain.text_hash}:{plain.buttons_hash}") == plain
    assert plain == prompt.without_buttons()


def test_a_turn_saves_what_a_restart_carries_on_and_not_what_it_cannot():
    turn = Turn(3, 1_000.5, reminded=True, given_back=2.0, held=True, called=True)
    assert Turn.from_plain(json.loads(json.dumps(turn.to_plain()))) == Turn(3, 1_000.5, True, 2.0)


async def test_one_job_a_table_moves_from_the_reminder_to_the_deadline(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    live = bot.runtime.tables.get(GROUP)
    jobs = bot.application.job_queue.get_jobs_by_name(f"table {live.table_id}")
    assert len(jobs) == 1 and bot.runtime.turns.moment(live.table_id) == "reminder"
    await remind(bot)
    jobs = bot.application.job_queue.get_jobs_by_name(f"table {live.table_id}")
    assert len(jobs) == 1 and bot.runtime.turns.moment(live.table_id) == "deadline"


async def test_a_change_that_leaves_the_turn_alone_leaves_its_job_alone(bot):
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "9C 2D"})
    jobs = bot.application.job_queue
    await jobs.start()  # (as the running bot's: the harness's holds its jobs pending)
    try:
        await open_and_start(bot, [1, 2, 3])
        await bot.driver.press(1, GROUP, "当庄")
        live = bot.runtime.tables.get(GROUP)
        name, timer = f"table {live.table_id}", live.engine.core.timer
        armed = jobs.scheduler.get_job(name)
        await bot.driver.press(2, GROUP, "不补")  # player 3 still to act: the same turn
        assert live.engine.core.timer == timer and bot.runtime.turns.moment(live.table_id) == "reminder"
        assert jobs.scheduler.get_job(name) is armed, "not made again"
        await bot.driver.press(3, GROUP, "不补")  # the banker's turn: a new one
        assert jobs.scheduler.get_job(name) is not armed and live.engine.core.timer != timer
    finally:
        await jobs.stop(wait=False)


async def test_a_reminder_is_saved_with_the_table_when_it_goes(bot, database):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    await remind(bot)
    live = bot.runtime.tables.get(GROUP)
    with sqlite3.connect(database) as db:
        (state,) = db.execute("SELECT state FROM tables WHERE id = ?", (live.table_id,)).fetchone()
    saved = json.loads(state)["turn"]
    assert saved["reminded"] and saved["timer"] == live.engine.core.timer
    assert saved["deadline"] == live.deadline


def _as_an_older_version_saved_it(database: str, table_id: int) -> None:
    """The table's row as the version before the turn clock wrote it."""
    with sqlite3.connect(database) as db:
        state, shown = db.execute("SELECT state, shown FROM tables WHERE id = ?", (table_id,)).fetchone()
        state, shown = json.loads(state), json.loads(shown)
        turn = state.pop("turn")
        state["view"]["deadline"] = turn["deadline"]
        digests = {}
        for key, value in shown.items():
            kept = Shown.from_saved(value)
            prompt = "" if kept.turn is None else f":{kept.turn}.{int(kept.reminded)}"
            digests[key] = f"{kept.text_hash}:{kept.buttons_hash}{prompt}"
        if turn["reminded"]:
            digests["reminded"] = str(turn["timer"])
        db.execute(
            "UPDATE tables SET state = ?, shown = ? WHERE id = ?",
            (json.dumps(state), json.dumps(digests), table_id),
        )


async def test_a_table_saved_by_the_older_version_carries_on_without_a_request(world, database):
    bot = await start_bot(world, database)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    await remind(bot)
    before = bot.runtime.tables.get(GROUP)
    deadline, timer, shown = before.deadline, before.engine.core.timer, dict(before.shown)
    await stop_bot(bot)
    _as_an_older_version_saved_it(database, before.table_id)

    bot = await start_bot(world, database)
    sent = len(world.requests)
    await bot.runtime.wait_idle()
    sent_to_the_table = [r.method for r in world.requests[sent:] if r.chat_id in (1, 2, GROUP)]
    assert sent_to_the_table == [], "every message shows what it should: nothing is sent"
    live = bot.runtime.tables.get(GROUP)
    assert live.deadline == deadline and live.reminded and live.turn.timer == timer
    assert live.shown == shown
    assert bot.runtime.turns.moment(live.table_id) == "deadline"
    await bot.driver.press(2, 2, "不补")
    assert "小红  ✋ 不补" in bot.driver.table(GROUP), "the round plays on"
    await stop_bot(bot)


async def test_a_failed_save_after_the_reminder_neither_reminds_nor_prompts_again(bot, monkeypatch):
    """A save that fails puts the table back as it was saved, and its turn as it was before the
    action: the reminder that went out since the last action is not forgotten (it was: everyone
    still to act was posted a new prompt once more)."""
    world = bot.world
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"}, "7S 8H 9S")
    await open_and_start(bot, [1, 2, 3])
    await bot.driver.press(1, GROUP, "当庄")
    await remind(bot)
    live = bot.runtime.tables.get(GROUP)
    assert live.reminded
    sent = len(world.requests)
    real, failures = bot.runtime.store.commit_action, [RuntimeError("database is locked")]

    async def commit_action(*args, **kwargs):
        if failures:
            raise failures.pop()
        return await real(*args, **kwargs)

    monkeypatch.setattr(bot.runtime.store, "commit_action", commit_action)
    await bot.driver.press(2, 2, "补牌")  # not saved: the table goes back
    assert not failures and live.reminded, "the reminder is still known to have gone"
    await bot.driver.press(2, 2, "补牌")
    await bot.runtime.wait_idle()
    assert [r.method for r in world.requests[sent:] if r.chat_id == 3 and r.method == "sendMessage"] == []
    assert bot.runtime.turns.moment(live.table_id) == "deadline"


async def test_time_given_back_for_a_late_prompt_redraws_no_prompt_still_waiting(bot):
    """Under load a prompt reaches someone late and the turn gets that time back. The table shows
    the new deadline at its next edit; the DM prompts still waiting keep the one they were sent
    with (less time than there is misleads nobody), or the next move would edit every one of them:
    a request each (benchmark 5 (a): DM edits a muxi round doubled)."""
    world = bot.world
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"}, "7S 8H")
    await open_and_start(bot, [1, 2, 3])
    await bot.driver.press(1, GROUP, "当庄")
    live = bot.runtime.tables.get(GROUP)
    shown_before = world.bot_messages(3)[-1].text
    bot.runtime.turns.delivered_late(live, 5.0)
    mark = len(world.requests)
    await bot.driver.press(2, 2, "不补")

    assert [r for r in world.requests[mark:] if r.chat_id == 3] == [], "3's prompt is not redrawn"
    assert world.bot_messages(3)[-1].text == shown_before
    table = bot.driver.table(GROUP)
    assert bot.runtime.time_text(live.deadline) in table, "the table shows the time given back"
