"""Benchmark 6: incidents, through the HTTP emulator with Telegram's per-chat limits on and people
at a human pace (``bench.crowd``), the bot as a subprocess (see ``bench.emulated``).

(c) **One group's 429.** 100 tables play; then every request to one group is answered 429 with
    retry_after 30 for 30 s (``FloodLimits.force``), as Telegram does to a group edited too often. The
    other groups' press → answer and turn → prompt p99 during those 30 s against the same figures
    in the minute before.
(d) **Restart.** 1,000 tables are opened and play one round each (a fast setup: no limits, people
    pressing within 0.05–0.3 s, the bot without its rate limiter where it has one), everything is
    shown, the bot is stopped (SIGTERM) and started again on the same database with the limits on.
    Nothing changed while it was down. Counted: the requests it sends in its first minute; and five
    presses (a seated person pressing 加入 again: a refusal, no change) made 0, 6, 12, 24 and 42 s
    after it first polls: the time until each is answered.
(e) **A flood next to a table.** One muxi table of 5 plays; a bystander in its group (not seated)
    sends 40 commands in a minute (/newgame muxi and /join alternately; the table exists and is
    full, so each is refused). That table's press → answer p99 during the flood, and the most
    requests the bot made to that group in any 60 s, 429s included (the limit allows 20).

``--quick``: 20 tables and retry_after 6 s; 30 tables to restart, an 8 s "minute"; 10 commands in
15 s; every window a few seconds.

    python -m bench.incidents [--quick] [--scenario 429|restart|flood] [--bot-root DIR]
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass

from bench.crowd import LANGUAGE
from bench.emulated import CAPACITY_MODULE, add_bot_arguments, bot_spec
from bench.figures import Figures, Span
from bench.people import table_specs
from bench.report import Result, markdown_table
from bench.session import Session
from bench.stage import BotSpec
from faketg.limits import FloodLimits, group_peaks

BENCH = "6 incidents"
GROWTH_TARGET_MS = 100
RESTART_REQUESTS, FIRST_PRESS_S = 50, 1.0
FLOOD_ANSWER_MS, GROUP_LIMIT = 300, 20
RESTART_PRESSES = (0.0, 0.1, 0.2, 0.4, 0.7)  # shares of the first minute: 0, 6, 12, 24, 42 s


@dataclass(frozen=True)
class Plan:
    tables_429: int  # (c)
    ramp: float
    warmup: float
    before: float
    retry_after: int  # and the seconds it lasts
    restart_tables: int  # (d)
    setup_limit: float
    first_minute: float
    flood_warmup: float  # (e): the table opens, people sit down
    flood_before: float
    flood_commands: int
    flood_seconds: float
    drain: float


FULL = Plan(
    tables_429=100,
    ramp=10,
    warmup=20,
    before=40,
    retry_after=30,
    restart_tables=1000,
    setup_limit=240,
    first_minute=60,
    flood_warmup=15,
    flood_before=15,
    flood_commands=40,
    flood_seconds=60,
    drain=15,
)
QUICK = Plan(
    tables_429=20,
    ramp=1,
    warmup=6,
    before=6,
    retry_after=6,
    restart_tables=30,
    setup_limit=30,
    first_minute=8,
    flood_warmup=6,
    flood_before=4,
    flood_commands=10,
    flood_seconds=15,
    drain=3,
)


# -- (c) one group's 429 --------------------------------------------------------------------------------
@dataclass
class Group429:
    figures: Figures
    before: Span
    during: Span
    forced: int  # the table index whose group got the 429s
    forced_chat: int
    tables: int
    retry_after: int


async def one_group_429(plan: Plan, bot: BotSpec) -> Group429:
    limits = FloodLimits()
    async with Session(plan.tables_429, limits, bot) as run:
        assert run.crowd is not None
        run.crowd.open_tables(plan.ramp)
        await run.until(run.t0 + plan.ramp + plan.warmup)
        before = await run.measure(plan.before)
        seen = run.crowd.seen
        playing = [i for i in range(len(run.specs)) if i in seen.opened] or [0]
        forced = max(playing, key=lambda i: sum(1 for end in seen.rounds if end.table == i))
        chat = run.specs[forced].chat_id
        limits.force(chat, plan.retry_after, now=run.now)
        during = await run.measure(plan.retry_after)
        await run.finish(plan.drain)
    return Group429(run.figures(), before, during, forced, chat, plan.tables_429, plan.retry_after)


def rows_429(measured: Group429) -> list[Result]:
    f, others = measured.figures, [i for i in range(measured.tables) if i != measured.forced]
    label = (
        f"(c) {measured.tables:,} tables, per-chat limits; one group answered 429 (retry_after "
        f"{measured.retry_after}) for {measured.retry_after} s"
    )
    before, during = f.answers(measured.before, others), f.answers(measured.during, others)
    (was, was_bound), (now, now_bound) = before.at(0.99), during.at(0.99)
    growth = now - was
    known = bool(before.values) and bool(during.values) and not was_bound and not now_bound
    if known:
        growth_text = f"{growth:+,.0f} ms"
    elif not was_bound and now_bound:
        growth_text = f"≥ {growth:+,.0f} ms (p99 during: a lower bound)"
    else:
        growth_text = "unknown: the p99 before is only a lower bound (presses still unanswered at the end)"
    prompts_before, _ = f.prompts(measured.before, others)
    prompts_during, _ = f.prompts(measured.during, others)
    forced_429 = f.too_many(Span(measured.during.start, f.end), [measured.forced_chat])
    other_chats = {spec.chat_id for i, spec in enumerate(f.specs) if i != measured.forced}
    other_chats |= {
        person for i, spec in enumerate(f.specs) if i != measured.forced for person in spec.people
    }
    other_429 = f.too_many(Span(measured.before.start, f.end), other_chats)
    timeouts = f.timeouts(Span(measured.before.start, f.end), others)
    return [
        Result(
            BENCH,
            f"{label}: the other groups' press → answer p50 / p99, the "
            f"{measured.before.end - measured.before.start:.0f} s before",
            before.text(),
        ),
        Result(BENCH, f"{label}: the same during the 429s", during.text()),
        Result(
            BENCH,
            f"{label}: growth of the other groups' answer p99",
            growth_text,
            f"< {GROWTH_TARGET_MS} ms",
            known and growth < GROWTH_TARGET_MS,
        ),
        Result(
            BENCH,
            f"{label}: the other groups' turn start → prompt visible p50 / p99, before; during",
            f"{prompts_before.text()}; {prompts_during.text()}",
        ),
        Result(
            BENCH,
            f"{label}: 429s the bot received: from the group refused (during and after); anywhere else "
            "(from the window before on)",
            f"{forced_429:,}; {other_429:,}",
        ),
        Result(
            BENCH,
            f"{label}: timeouts nobody chose at the other tables (from the window before on)",
            f"{sum(timeouts.values()):,}" + (f": {timeouts}" if timeouts else ""),
        ),
    ]


# -- (d) restart --------------------------------------------------------------------------------------
@dataclass
class Restart:
    tables: int
    ready: int  # tables that had played their round when the bot was stopped
    quiet: bool
    setup_seconds: float
    requests: dict[str, int]
    first_minute: float
    presses: list[float | None]  # each test press's latency (None: not answered in the minute)
    answered_429: int


async def restart(plan: Plan, bot: BotSpec) -> Restart:
    setup = BotSpec(CAPACITY_MODULE, bot.root, bot.env, bot.label)
    async with Session(plan.restart_tables, None, setup, pace=(0.05, 0.3), rounds=1) as run:
        assert run.crowd is not None
        seen = run.crowd.seen
        run.crowd.open_tables(min(10.0, plan.restart_tables / 100))
        give_up = run.t0 + plan.setup_limit
        while run.now < give_up and len({end.table for end in seen.rounds}) < plan.restart_tables:
            await asyncio.sleep(0.5)
        run.crowd.stop()
        quiet = await run.quiet(3.0, 30.0)
        ready = len({end.table for end in seen.rounds})
        setup_seconds = run.now - run.t0
        process = await run.restart(bot, FloodLimits())
        started = process.started_at
        presses: list[tuple[str, float]] = []
        tables = [table for table in run.crowd.tables if table.index in {end.table for end in seen.rounds}]
        for offset, table in zip(
            RESTART_PRESSES, tables[:: max(1, len(tables) // len(RESTART_PRESSES))], strict=False
        ):
            await run.until(started + offset * plan.first_minute)
            view = table.view
            if view is None or "join" not in table.view_datas:
                continue
            person = table.spec.people[1]
            update = run.world.press(person, table.spec.chat_id, view.message_id, table.view_datas["join"][0])
            query = update["callback_query"]
            assert isinstance(query, dict)
            presses.append((str(query["id"]), run.world.pressed_at[str(query["id"])]))
            await run.emulator.notify()
        await run.until(started + plan.first_minute)
    span = Span(started, started + plan.first_minute)
    answered = {
        str(r.params.get("callback_query_id")): r.at
        for r in run.world.requests
        if r.method == "answerCallbackQuery" and r.at in span
    }
    requests = _restart_requests(run, span)
    latencies = [answered[query] - made if query in answered else None for query, made in presses]
    too_many = sum(1 for r in run.world.requests if r.at in span and r.error == 429)
    return Restart(
        plan.restart_tables, ready, quiet, setup_seconds, requests, plan.first_minute, latencies, too_many
    )


def _restart_requests(run: Session, span: Span) -> dict[str, int]:
    counts = {"to groups": 0, "to DMs": 0, "callback answers": 0, "other": 0}
    for request in run.world.requests:
        if request.at not in span or request.method == "getUpdates":
            continue
        chat = run.world.chats.get(request.chat_id) if request.chat_id is not None else None
        if request.method == "answerCallbackQuery":
            counts["callback answers"] += 1
        elif chat is None:
            counts["other"] += 1
        else:
            counts["to DMs" if chat.type == "private" else "to groups"] += 1
    return counts


def rows_restart(measured: Restart) -> list[Result]:
    label = (
        f"(d) restart with {measured.ready:,} open tables unchanged while down "
        f"(of {measured.tables:,}; setup {measured.setup_seconds:.0f} s"
        + ("" if measured.quiet else ", the old bot still busy when stopped")
        + ")"
    )
    total = sum(measured.requests.values())
    split = ", ".join(f"{count:,} {kind}" for kind, count in measured.requests.items())
    first = measured.presses[0] if measured.presses else None
    shown = [
        f"{latency * 1000:,.0f} ms" if latency is not None else "not answered" for latency in measured.presses
    ]
    offsets = ", ".join(f"{offset * measured.first_minute:g}" for offset in RESTART_PRESSES[: len(shown)])
    return [
        Result(
            BENCH,
            f"{label}: Bot API requests in the first {measured.first_minute:g} s after start "
            f"(getUpdates aside; {measured.answered_429:,} of them answered 429)",
            f"{total:,}: {split}",
            f"< {RESTART_REQUESTS}" if measured.first_minute >= 60 else "",
            total < RESTART_REQUESTS if measured.first_minute >= 60 else None,
        ),
        Result(
            BENCH,
            f"{label}: press → answer for presses made {offsets} s after the bot first polled",
            "; ".join(shown) or "no press made",
            f"first < {FIRST_PRESS_S:g} s",
            first is not None and first < FIRST_PRESS_S,
        ),
    ]


# -- (e) a flood next to a table ---------------------------------------------------------------------
@dataclass
class Flood:
    figures: Figures
    before: Span
    during: Span
    commands: int
    replies: int
    peak_attempted: int
    peak_accepted: int
    too_many: int


BYSTANDER = 1_900_000


async def flood(plan: Plan, bot: BotSpec) -> Flood:
    specs = table_specs(1)
    chat = specs[0].chat_id
    async with Session(1, FloodLimits(), bot, specs=specs) as run:
        assert run.crowd is not None
        run.world.add_person(BYSTANDER, f"P{BYSTANDER}", language=LANGUAGE)
        run.world.chats[chat].members.add(BYSTANDER)
        run.crowd.open_tables(0)
        await run.until(run.t0 + plan.flood_warmup)
        before = await run.measure(plan.flood_before)
        first = len(run.world.requests)
        sender = asyncio.create_task(_send_flood(run, chat, plan.flood_commands, plan.flood_seconds))
        during = await run.measure(plan.flood_seconds)
        await sender
        await run.finish(plan.drain)
        replies = sum(
            1
            for r in run.world.requests[first:]
            if r.method == "sendMessage"
            and r.chat_id == chat
            and r.error is None
            and "reply_markup" not in r.params
        )
    f = run.figures()
    peak_attempted = group_peaks(run.world.requests, run.world.chats, accepted_only=False).get(chat, 0)
    peak_accepted = group_peaks(run.world.requests, run.world.chats).get(chat, 0)
    too_many = f.too_many(Span(run.t0, f.end), [chat])
    return Flood(f, before, during, plan.flood_commands, replies, peak_attempted, peak_accepted, too_many)


async def _send_flood(run: Session, chat: int, commands: int, seconds: float) -> None:
    assert run.crowd is not None
    start = run.now
    for number in range(commands):
        await run.until(start + seconds * number / commands)
        run.crowd.command(BYSTANDER, chat, "/newgame muxi" if number % 2 == 0 else "/join")


def rows_flood(measured: Flood) -> list[Result]:
    f = measured.figures
    rate = f"{measured.commands} commands in {measured.during.end - measured.during.start:.0f} s"
    label = (
        f"(e) a bystander sends {rate} (/newgame, /join: refused) into a group where a muxi table of 5 plays"
    )
    before, during = f.answers(measured.before), f.answers(measured.during)
    prompts, _ = f.prompts(measured.during)
    return [
        Result(BENCH, f"{label}: the table's press → answer p50 / p99 before the flood", before.text()),
        Result(
            BENCH,
            f"{label}: the table's press → answer p50 / p99 during the flood",
            during.text(),
            f"p99 < {FLOOD_ANSWER_MS} ms",
            during.below(0.99, FLOOD_ANSWER_MS),
        ),
        Result(
            BENCH,
            f"{label}: the table's turn start → prompt visible p50 / p99 during the flood",
            prompts.text(),
        ),
        Result(
            BENCH,
            f"{label}: most requests the bot made to the group in any 60 s, 429s included (accepted only: "
            f"{measured.peak_accepted}); 429s received there; replies to the bystander",
            f"{measured.peak_attempted}; {measured.too_many:,}; {measured.replies}",
            f"≤ {GROUP_LIMIT}",
            measured.peak_attempted <= GROUP_LIMIT,
        ),
    ]


# -- the benchmark ---------------------------------------------------------------------------------------
SCENARIOS = ("429", "restart", "flood")


def run(quick: bool, bot: BotSpec | None = None, scenarios: list[str] | None = None) -> list[Result]:
    plan, bot = (QUICK if quick else FULL), bot or BotSpec()
    results: list[Result] = []
    for key in scenarios or SCENARIOS:
        if key == "429":
            results += rows_429(asyncio.run(one_group_429(plan, bot)))
        elif key == "restart":
            results += rows_restart(asyncio.run(restart(plan, bot)))
        else:
            results += rows_flood(asyncio.run(flood(plan, bot)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.incidents", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    add_bot_arguments(parser)
    arguments = parser.parse_args()
    print(markdown_table(run(arguments.quick, bot_spec(arguments), arguments.scenario)))


if __name__ == "__main__":
    main()
