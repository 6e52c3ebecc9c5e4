"""Benchmark 5: the bot process under load through the HTTP emulator with Telegram's limits on,
people playing at a human pace in an open loop.

The bot runs as a subprocess (``python -m bot``, ``PAIJU_BOT_API_URL`` pointing at
``faketg.server.Emulator`` on 127.0.0.1, its other settings as shipped but a large starting grant);
the emulator enforces Telegram's limits (``faketg.limits``: 20 requests a minute per group, about
one a second per private chat, callback answers unlimited but too old after 15 s) and answers 429
with retry_after past them. The people (``bench.crowd``) each press 2–6 s after what they must act
on becomes visible to them, whoever else is waiting; muxi tables of 5 and showhand tables of 4,
alternately. The tables are opened during a ramp (each opener sends ``/newgame`` at its moment,
the others join when they see the table), then a warm-up, then the measured window; then the
people stop and the presses in flight are given time to be answered.

Runs: (a) 1,000 tables with the per-chat limits; (b) 100 tables with the pessimistic global limit
of 30 requests a second on top. ``--quick``: 100 and 20 tables, short windows. Optional
(``--scenario capacity``, not in ``python -m bench``): 1,000 tables with no limits at all and the
bot's own rate limiting off where it has a switch (``bench.unlimited_bot``): what the bot process
itself can carry. ``--games muxi``: muxi tables only, the load on which the real bot is compared with
the minimal reference bot (``--bot-module bench.reference_bot``, which plays muxi only).

    python -m bench.emulated [--quick] [--scenario per-chat|pessimistic|capacity] [--tables N]
                             [--games muxi|showhand|muxi,showhand] [--bot-root DIR] [--bot-module bot]
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

from bench.figures import Figures, Span, Spread
from bench.people import table_specs
from bench.report import Result, markdown_table
from bench.session import Session
from bench.stage import BotSpec
from bench.telegram_cost import per_round
from faketg.limits import FloodLimits

BENCH = "5 load at a human pace"
GAMES = ("muxi", "showhand")  # the tables' games, taken in turn (default: alternately)


@dataclass(frozen=True)
class Timing:
    ramp: float  # the tables open over this many seconds
    warmup: float  # then play goes on this long before the window
    window: float  # the measured window
    drain: float = 20.0  # the people stop; presses in flight get this long to be answered


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    tables: int
    limits: str  # "per-chat", "pessimistic" or "none"
    timing: Timing
    targets: dict[str, float]  # answer_p99_ms, prompt_p99_s, too_many, timeouts, cpu, rss_mb

    def make_limits(self) -> FloodLimits | None:
        if self.limits == "none":
            return None
        return FloodLimits(pessimistic=self.limits == "pessimistic")


LIMITS_TEXT = {
    "per-chat": "per-chat limits",
    "pessimistic": "per-chat limits + pessimistic global 30/s",
    "none": "no limits",
}
FULL = {
    "per-chat": Scenario(
        "per-chat",
        "(a)",
        1000,
        "per-chat",
        Timing(ramp=30, warmup=30, window=90, drain=15),
        {"answer_p99_ms": 300, "prompt_p99_s": 1.5, "too_many": 0, "timeouts": 0, "cpu": 0.5, "rss_mb": 200},
    ),
    "pessimistic": Scenario(
        "pessimistic",
        "(b)",
        100,
        "pessimistic",
        Timing(ramp=10, warmup=20, window=90, drain=15),
        {"answer_p99_ms": 300, "prompt_p99_s": 3.0, "too_many": 0},
    ),
    "capacity": Scenario(
        "capacity", "(reference)", 1000, "none", Timing(ramp=30, warmup=30, window=90, drain=15), {}
    ),
}
QUICK = {
    "per-chat": Scenario(
        "per-chat",
        "(a) quick",
        100,
        "per-chat",
        Timing(ramp=2, warmup=6, window=10, drain=3),
        FULL["per-chat"].targets,
    ),
    "pessimistic": Scenario(
        "pessimistic",
        "(b) quick",
        20,
        "pessimistic",
        Timing(ramp=1, warmup=6, window=10, drain=3),
        FULL["pessimistic"].targets,
    ),
    "capacity": Scenario(
        "capacity", "(reference) quick", 100, "none", Timing(ramp=2, warmup=6, window=10, drain=3), {}
    ),
}
CAPACITY_MODULE = "bench.unlimited_bot"


@dataclass
class Measured:
    scenario: Scenario
    games: tuple[str, ...]
    bot: BotSpec
    figures: Figures
    window: Span
    cpu: float  # the bot's, share of a core
    driver_cpu: float
    rss_mb: float
    opened: int
    seconds: float  # the whole run, wall clock


async def measure(scenario: Scenario, bot: BotSpec, games: tuple[str, ...] = GAMES) -> Measured:
    timing = scenario.timing
    specs = table_specs(scenario.tables, games=games)
    async with Session(scenario.tables, scenario.make_limits(), bot, specs=specs) as run:
        assert run.crowd is not None and run.bot is not None
        run.crowd.open_tables(timing.ramp)
        await run.until(run.t0 + timing.ramp + timing.warmup)
        window = await run.measure(timing.window)
        await run.finish(timing.drain)
    return Measured(
        scenario,
        games,
        bot,
        run.figures(),
        window,
        run.cpu_share(window),
        run.driver_share(window),
        run.bot.rss_mb,
        len(run.crowd.seen.opened),
        run.end - run.t0,
    )


def _verdict(targets: dict[str, float], key: str, ok: bool) -> bool | None:
    return ok if key in targets else None


def rows(measured: Measured) -> list[Result]:
    s, f, w, t = measured.scenario, measured.figures, measured.window, measured.scenario.targets
    only = "" if measured.games == GAMES else f" {'/'.join(measured.games)}"
    label = f"{s.title} {s.tables:,}{only} tables, {LIMITS_TEXT[s.limits]}"
    answers = f.answers(w)
    by_kind, unmeasured = f.prompts_by_kind(w)
    prompts = Spread.merged(by_kind.values())
    kinds = "; ".join(f"{kind} {spread.text()}" for kind, spread in by_kind.items())
    limit_ms = t.get("prompt_p99_s", 0) * 1000
    every_kind = bool(by_kind) and all(spread.below(0.99, limit_ms) for spread in by_kind.values())
    lag = f.table_lag(w)
    rounds = f.rounds(w)
    per_minute = sum(rounds.values()) / w.minutes
    timeouts = f.timeouts(w)
    by_method = f.too_many_by_method(w)
    too_many = sum(by_method.values())
    refused = f.world.limits.refused if f.world.limits else {}  # over the run, by the limit that refused
    causes = ", ".join(f"{cause} {count:,}" for cause, count in sorted(refused.items()))
    methods = ", ".join(f"{method} {count:,}" for method, count in by_method.most_common())
    split = ", ".join(f"{count:,} {game}" for game, count in sorted(rounds.items())) or "none"
    lost = sum(timeouts.values())
    lost_text = ", ".join(f"{count:,} {kind}" for kind, count in sorted(timeouts.items()))
    cost = per_round(f.world.requests, f.world.chats, w, rounds, f.game_of())
    return [
        Result(
            BENCH,
            f"{label}: bot {measured.bot.describe()}; tables opened (ramp {s.timing.ramp:g} s), "
            f"rounds finished in the {s.timing.window:g} s window",
            f"{measured.opened:,}/{s.tables:,} opened; {split}: {per_minute:,.1f} rounds a minute",
        ),
        Result(
            BENCH,
            f"{label}: press → answer p50 / p99 ({f.too_old(w):,} answered too late, "
            f"{f.refused(w):,} refused)",
            answers.text(),
            f"p99 < {t['answer_p99_ms']:g} ms" if "answer_p99_ms" in t else "",
            _verdict(t, "answer_p99_ms", answers.below(0.99, t.get("answer_p99_ms", 0))),
        ),
        Result(
            BENCH,
            f"{label}: turn start → prompt visible p50 / p99 ({unmeasured:,} prompts with no start to "
            "measure from: after a timeout)",
            prompts.text(),
            f"p99 < {t['prompt_p99_s']:g} s" if "prompt_p99_s" in t else "",
            _verdict(t, "prompt_p99_s", prompts.below(0.99, t.get("prompt_p99_s", 0) * 1000)),
        ),
        Result(
            BENCH,
            f"{label}: turn start → prompt visible p50 / p99, by kind of prompt",
            kinds or "no samples",
            f"p99 < {t['prompt_p99_s']:g} s for each" if "prompt_p99_s" in t else "",
            _verdict(t, "prompt_p99_s", every_kind),
        ),
        Result(BENCH, f"{label}: table message lag behind a move, p50 / p99", lag.text()),
        Result(
            BENCH,
            f"{label}: 429s the bot received in the window (by method; over the whole run, by the limit "
            "that refused)",
            f"{too_many:,}" + (f" ({methods}; {causes})" if too_many else ""),
            "0" if "too_many" in t else "",
            _verdict(t, "too_many", too_many == 0),
        ),
        Result(
            BENCH,
            f"{label}: timeouts nobody chose (deadlines that fired on people who would have pressed)",
            f"{lost:,}" + (f": {lost_text}" if lost_text else ""),
            "0" if "timeouts" in t else "",
            _verdict(t, "timeouts", lost == 0),
        ),
        Result(
            BENCH,
            f"{label}: bot CPU (share of one core) over the window; the driver's (emulator + people)",
            f"{measured.cpu:.0%}; driver {measured.driver_cpu:.0%}",
            f"< {t['cpu']:.0%}" if "cpu" in t else "",
            _verdict(t, "cpu", measured.cpu < t.get("cpu", 0)),
        ),
        Result(
            BENCH,
            f"{label}: bot peak RSS (VmHWM)",
            f"{measured.rss_mb:,.0f} MB",
            f"< {t['rss_mb']:g} MB" if "rss_mb" in t else "",
            _verdict(t, "rss_mb", measured.rss_mb < t.get("rss_mb", 0)),
        ),
        Result(
            BENCH,
            f"{label}: Bot API requests per finished round (showhand: game) in the window, by kind",
            cost,
        ),
    ]


def bot_for(scenario: Scenario, bot: BotSpec) -> BotSpec:
    if scenario.key == "capacity":
        return BotSpec(CAPACITY_MODULE, bot.root, bot.env, bot.label)
    if scenario.limits == "pessimistic":  # its operator tells the bot the budget it is held to
        budget = ("PAIJU_BOT_REQUESTS_PER_SECOND", str(FloodLimits().global_requests))
        return replace(bot, env=(*bot.env, budget))
    return bot


def run(
    quick: bool,
    bot: BotSpec | None = None,
    scenarios: list[str] | None = None,
    tables: int | None = None,
    games: tuple[str, ...] = GAMES,
) -> list[Result]:
    """Benchmark 5 for ``python -m bench``: scenarios (a) and (b); ``games``: the tables' games in turn."""
    chosen = QUICK if quick else FULL
    results: list[Result] = []
    for key in scenarios or ["per-chat", "pessimistic"]:
        scenario = chosen[key]
        if tables is not None:
            scenario = Scenario(
                scenario.key, scenario.title, tables, scenario.limits, scenario.timing, scenario.targets
            )
        spec = bot_for(scenario, bot or BotSpec())
        results += rows(asyncio.run(measure(scenario, spec, games)))
    return results


def bot_spec(arguments: argparse.Namespace) -> BotSpec:
    root = Path(arguments.bot_root).resolve() if arguments.bot_root else BotSpec().root
    return BotSpec(arguments.bot_module, root, label=arguments.bot_label or "")


def add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bot-root", help="run the bot from this source tree (default: this one)")
    parser.add_argument("--bot-module", default="bot", help="the bot's module (default: bot)")
    parser.add_argument(
        "--bot-label", help='what that tree is, for the results (e.g. "as committed at 8d0cab0")'
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.emulated", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scenario", action="append", choices=list(FULL))
    parser.add_argument("--tables", type=int, help="override the number of tables")
    parser.add_argument(
        "--games",
        default=",".join(GAMES),
        help="the tables' games, comma-separated, taken in turn (default: muxi,showhand, alternately; "
        "muxi: muxi tables only, as the reference bot plays)",
    )
    add_bot_arguments(parser)
    arguments = parser.parse_args()
    games = tuple(arguments.games.split(","))
    if not games or set(games) - set(GAMES):
        parser.error(f"--games: choose from {', '.join(GAMES)}")
    bot = bot_spec(arguments)
    print(markdown_table(run(arguments.quick, bot, arguments.scenario, arguments.tables, games)))


if __name__ == "__main__":
    main()
