"""Benchmark 4: the bot in process against bare python-telegram-bot, on the same fake Telegram.

Ours: the real Application (``faketg.harness.start_bot``: FakeRequest behind PTB's BaseRequest,
no rate limiter), many muxi and showhand tables at once, each played by its people pressing as fast
as the bot answers (``bench.people``), every update through the Application's update processor
(``faketg.driver.process``); the tables are opened first, then the window is timed.
Bare: an Application built the same way with one CallbackQueryHandler that answers the press and
edits its message, the same number of groups, each person pressing again as soon as it is handled,
with the garbage collector tuned as our bot tunes it at start-up (``bot.app.tune_collector``: bare
gains as much from it as we do, so the ratio compares the code, not the process settings).
Windows of ours and bare alternate; the ratio is the median of each pair's updates/s.

Ours runs with every action shown at once (``Limits.unlimited()``: one table edit per action, as
much Telegram work per update as bare does). As shipped, the bot sends within Telegram's limits in
the background after answering: benchmark 5 measures that, through the emulator.

    python -m bench.inprocess [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from telegram import Update
from telegram.ext import ApplicationBuilder, CallbackQueryHandler, ContextTypes

from bench.people import WALLET, BenchWorld, Front, Tally, Window, play_tables, seat_people, table_specs
from bench.report import Result, markdown_table, median, percentile
from bot.app import tune_collector, untune_collector
from bot.send.rate_policy import Limits
from faketg.driver import Driver
from faketg.harness import start_bot, stop_bot
from faketg.request import FakeRequest

TARGET_RATIO = 0.5
SETUP_LIMIT = 60.0
EVERY_ACTION = {"limits": Limits.unlimited()}


def _deadline(seconds: float) -> Callable[[], bool]:
    end = time.perf_counter() + seconds
    return lambda: time.perf_counter() >= end


async def ours(tables: int, seconds: float, presenter: dict[str, Limits]) -> Tally:
    """Updates our bot handled in ``seconds`` with ``tables`` tables playing at once."""
    world, specs = BenchWorld(), table_specs(tables)
    seat_people(world, specs)
    with tempfile.TemporaryDirectory() as tmp:
        bot = await start_bot(world, str(Path(tmp) / "bench.sqlite3"), start_grant=WALLET, **presenter)
        settle = bot.runtime.wait_idle  # an update is done once its edits are sent, as bare's is
        front = Front(world, Driver.in_process(world, bot.application, settle).deliver, Tally())
        session = await play_tables(front, specs, Window(SETUP_LIMIT), seconds)  # opening is not timed
        await bot.runtime.presenter.sender.stop()  # edits still waiting for a budget: not part of the window
        await stop_bot(bot)
    return session.play


async def _tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    assert query is not None and query.message is not None
    await query.answer()
    presses = context.chat_data.setdefault("presses", 0) + 1  # type: ignore[union-attr]
    context.chat_data["presses"] = presses  # type: ignore[index]
    await query.edit_message_text(f"pressed {presses} times", reply_markup=query.message.reply_markup)


async def bare(tables: int, seconds: float) -> Tally:
    """Updates bare PTB handled in ``seconds``: answer the press, edit the message."""
    world, specs = BenchWorld(), table_specs(tables)
    seat_people(world, specs)
    request = FakeRequest(world)
    application = (
        ApplicationBuilder()
        .token("123456:BARE")
        .request(request)
        .get_updates_request(request)
        .concurrent_updates(True)
    ).build()
    application.add_handler(CallbackQueryHandler(_tap))
    await application.initialize()
    collector = tune_collector()
    keyboard = {"inline_keyboard": [[{"text": "press", "callback_data": "tap"}]]}
    messages = [
        int(
            str(
                world.call("sendMessage", {"chat_id": s.chat_id, "text": "press", "reply_markup": keyboard})[
                    "message_id"
                ]
            )
        )  # type: ignore[index]
        for s in specs
    ]
    tally = Tally()
    front = Front(world, Driver.in_process(world, application).deliver, tally)
    stop = _deadline(seconds)

    async def group(index: int) -> None:
        people = specs[index].people
        for turn in range(10**9):
            if stop():
                return
            await front.press(people[turn % len(people)], specs[index].chat_id, messages[index], "tap")

    started = time.perf_counter()
    await asyncio.gather(*(group(index) for index in range(tables)))
    tally.elapsed = time.perf_counter() - started
    untune_collector(collector)
    await application.shutdown()
    return tally


def _per_second(tally: Tally) -> float:
    return tally.updates / tally.elapsed


async def compare(tables: int, seconds: float, pairs: int) -> list[Result]:
    results = []
    bare_rates: list[float] = []
    # Only with every action shown: as shipped, the bot sends within Telegram's limits in the
    # background, so people here would press on DMs not yet sent (benchmark 5 measures that).
    for name, presenter in (("every action shown", EVERY_ACTION),):
        ratios, our_rates, latencies, refused, rounds = [], [], [], 0, 0
        for _ in range(pairs):  # side by side: a window of ours, then one of bare
            mine = await ours(tables, seconds, presenter)
            theirs = await bare(tables, seconds)
            our_rates.append(_per_second(mine))
            bare_rates.append(_per_second(theirs))
            ratios.append(our_rates[-1] / bare_rates[-1])
            latencies += mine.latencies
            refused += mine.refused
            rounds += sum(mine.rounds.values())
        ratio = median(ratios)
        results += [
            Result(
                "4 bot in process",
                f"ours, {tables} tables (muxi 5 / showhand 4 people), {name}: {rounds} rounds, "
                f"{refused} refused presses; p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
                f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms",
                f"{median(our_rates):,.0f} updates/s",
            ),
            Result(
                "4 bot in process",
                f"ratio ours, {name}, / bare PTB ({pairs} windows of {seconds:g} s each, side by side)",
                f"{ratio:.2f}×",
                f"≥ {TARGET_RATIO}",
                ratio >= TARGET_RATIO,
            ),
        ]
    results.insert(
        0,
        Result(
            "4 bot in process",
            f"bare PTB, {tables} groups: answer the press + edit one message (same FakeRequest/World)",
            f"{median(bare_rates):,.0f} updates/s",
        ),
    )
    return results


def run(quick: bool) -> list[Result]:
    tables, seconds, pairs = (20, 1.0, 2) if quick else (50, 4.0, 3)
    return asyncio.run(compare(tables, seconds, pairs))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.inprocess", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    print(markdown_table(run(parser.parse_args().quick)))


if __name__ == "__main__":
    main()
