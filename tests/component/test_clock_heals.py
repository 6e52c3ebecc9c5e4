"""A turn's clock heals itself (issue 47, point 1): a job that starts late still acts, however
late (a paused process, a starved CPU), and a table whose saved deadline has passed with no job
armed is found by the sweep and played on."""

from __future__ import annotations

import time

from tests.component.decks import stack
from tests.component.scenarios import live_table, open_and_start
from tests.waiting import until


async def test_a_deadline_that_fires_seconds_late_still_acts(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    jobs = bot.application.job_queue
    await jobs.start()  # (the running bot's: the harness's holds its jobs pending)
    try:
        await open_and_start(bot, [1, 2])
        live = live_table(bot)
        asked = live.engine.asked_person()
        bot.runtime.turns.arm(live, delay=0.05)  # the banker question's deadline, due at once
        time.sleep(2.5)  # the whole process stops past it (SIGSTOP, a GC pause, a frozen VM)
        await until(lambda: live_table(bot).engine.asked_person() != asked, "the deadline acted")
    finally:
        await jobs.stop(wait=False)


async def test_a_table_whose_deadline_passed_without_a_job_is_found_by_the_sweep(bot):
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    live = live_table(bot)
    asked, clock = live.engine.asked_person(), bot.runtime.turns
    clock.disarm(live.table_id)  # lost, whatever the cause
    live.turn = type(live.turn)(live.turn.timer, time.time() - 10)  # and its moment long gone
    jobs = bot.application.job_queue
    await jobs.start()
    try:
        clock.sweep()
        await until(lambda: live_table(bot).engine.asked_person() != asked, "the deadline acted")
        assert clock.moment(live.table_id) is not None, "the next turn is armed"
    finally:
        await jobs.stop(wait=False)


async def test_a_job_the_scheduler_holds_overdue_is_run_by_the_sweep(bot):
    """A scheduler that never runs a job (stuck, or its task gone) holds it past its moment: the
    sweep carries it out itself."""
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
    await open_and_start(bot, [1, 2])
    live = live_table(bot)
    asked, clock = live.engine.asked_person(), bot.runtime.turns
    jobs = bot.application.job_queue
    await jobs.start()
    jobs.scheduler.pause()  # it holds its jobs and runs none
    try:
        clock.arm(live, delay=0.0)
        time.sleep(2.5)
        clock.sweep()
        await until(lambda: live_table(bot).engine.asked_person() != asked, "the deadline acted")
    finally:
        await jobs.stop(wait=False)
