"""The cost of a round in /metrics (issue 27 item 4): the Bot API requests about a game's table, by
kind, as the fake Telegram recorded them, and the same divided by the rounds settled since the
bot started.

The bot's own request class tells the metrics of every answer (``AiohttpRequest.observe``); the
fake Telegram's front door in process does the same here, so the requests counted are the ones the
fake Telegram answered.
"""

from __future__ import annotations

import random
from collections import Counter

from prometheus_client.parser import text_string_to_metric_families
from telegram._utils.defaultvalue import DEFAULT_NONE

from bot.app import build_application, prepare
from bot.ops.metrics import GAME_KINDS, Metrics
from bot.send.rate_policy import Limits
from bot.settings import Settings
from faketg.driver import Driver
from faketg.harness import GROUP, TOKEN, Bot, start_bot, stop_bot
from faketg.request import FakeRequest
from faketg.world import Request, World
from tests.component.decks import stack
from tests.component.scenarios import open_and_start

SEATED = (1, 2)
CHANGES = {
    "sendMessage": "new",
    "editMessageText": "edit",
    "editMessageReplyMarkup": "edit",
    "deleteMessage": "delete",
}


class Observed(FakeRequest):
    """The fake Telegram's front door, telling ``observe`` of each answer as the bot's own request
    class does: the method, what was sent, the HTTP status."""

    observe = None

    async def do_request(
        self,
        url,
        method,
        request_data=None,
        read_timeout=DEFAULT_NONE,
        write_timeout=DEFAULT_NONE,
        connect_timeout=DEFAULT_NONE,
        pool_timeout=DEFAULT_NONE,
    ):
        status, payload = await super().do_request(url, method, request_data)
        if self.observe is not None:
            self.observe(url.rsplit("/", 1)[-1], request_data, status)
        return status, payload


async def start_observed(world: World, database: str) -> Bot:
    """``start_bot``, with metrics served (as ``PAIJU_METRICS=local``) and every answer observed."""
    request = Observed(world)
    settings = Settings(database=database, token=TOKEN, table_requests_per_minute=10_000, metrics="local")
    application = build_application(
        settings, request=request, limits=Limits.unlimited(), rng=random.Random(1)
    )
    request.observe = application.bot_data.metrics.answered
    await application.initialize()
    runtime = await prepare(application)
    return Bot(world, application, Driver.in_process(world, application, runtime.wait_idle))


def recorded(world: World, requests: list[Request], chats: tuple[int, ...]) -> Counter[str]:
    """The requests the fake Telegram took in ``chats`` by our kinds, and every press answered."""
    kinds: Counter[str] = Counter()
    for request in requests:
        if request.error is not None:
            continue
        if request.method == "answerCallbackQuery":
            kinds["answer"] += 1
        elif request.method in CHANGES and request.chat_id in chats:
            where = "dm" if world.chats[request.chat_id].type == "private" else "group"
            kinds[f"{where}_{CHANGES[request.method]}"] += 1
    return kinds


def scraped(metrics: Metrics) -> dict[tuple[str, str, str], float]:
    """/metrics' samples of the two figures, as served: {(name, game, kind): value}."""
    body, _ = metrics.render("")
    return {
        (sample.name, sample.labels["game"], sample.labels["kind"]): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
        if sample.name in ("paiju_game_requests_total", "paiju_requests_per_round")
    }


async def play_a_round_of_two(bot: Bot, *, first: bool) -> None:
    """1 and 2 play a muxi round in the group: the first asked banks (1, then 2), both stand."""
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    if first:
        await open_and_start(bot, list(SEATED))
    else:
        for person in SEATED:
            await d.press(person, GROUP, "继续下一局")
    banker, player = SEATED if first else SEATED[::-1]
    await d.bank_and_stand(GROUP, banker, [player])
    assert "结算" in d.table(GROUP)


async def test_a_rounds_requests_by_kind_and_per_round(world, database):
    bot = await start_observed(world, database)
    try:
        metrics: Metrics = bot.application.bot_data.metrics
        d = bot.driver
        await d.send(3, GROUP, "/help")  # no table in the group yet: not counted
        before = len(world.requests)
        await play_a_round_of_two(bot, first=True)
        await d.send(3, 3, "/balance")  # the DM of someone not seated: not counted
        await d.send(1, GROUP, "/table")  # in the group with its table open: counted
        await metrics.refresh(bot.runtime)

        expected = recorded(world, world.requests[before:], (GROUP, *SEATED))
        assert (
            expected["group_new"]
            and expected["group_edit"]
            and expected["group_delete"]
            and expected["answer"]
        )
        assert expected["dm_new"] or expected["dm_edit"]
        assert any(r.method == "sendMessage" and r.chat_id == 3 for r in world.requests[before:])
        assert any(r.method == "sendMessage" and r.chat_id == GROUP for r in world.requests[:before])

        found = scraped(metrics)
        counted = {kind: found.get(("paiju_game_requests_total", "muxi", kind), 0.0) for kind in GAME_KINDS}
        assert counted == {kind: float(expected[kind]) for kind in GAME_KINDS}
        per_round = {kind: found[("paiju_requests_per_round", "muxi", kind)] for kind in GAME_KINDS}
        assert per_round == counted, "one round settled: the requests themselves"
        limited = sum(count for kind, count in counted.items() if kind != "answer")
        assert found[("paiju_requests_per_round", "muxi", "limited")] == limited
        assert not any(game != "muxi" for _, game, _ in found), "showhand played no round"
    finally:
        await stop_bot(bot)


async def test_only_the_rounds_settled_since_start_divide(world, database):
    earlier = await start_bot(world, database)  # a round played before this bot started
    try:
        await play_a_round_of_two(earlier, first=True)
    finally:
        await stop_bot(earlier)

    before = len(world.requests)  # (what it asks on restoring the table counts too)
    bot = await start_observed(world, database)
    try:
        metrics: Metrics = bot.application.bot_data.metrics
        await metrics.refresh(bot.runtime)
        assert metrics.rounds.labels("muxi")._value.get() == 1, "the rounds counter reads them all"
        assert not [key for key in scraped(metrics) if key[0] == "paiju_requests_per_round"], (
            "no round settled here yet: no sample"
        )

        await play_a_round_of_two(bot, first=False)
        await metrics.refresh(bot.runtime)
        assert metrics.rounds.labels("muxi")._value.get() == 2
        expected = recorded(world, world.requests[before:], (GROUP, *SEATED))
        found = scraped(metrics)
        per_round = {kind: found[("paiju_requests_per_round", "muxi", kind)] for kind in GAME_KINDS}
        assert per_round == {kind: float(expected[kind]) for kind in GAME_KINDS}, "divided by 1, not 2"
    finally:
        await stop_bot(bot)
