"""The whole bot on PostgreSQL (``PAIJU_DATABASE_URL``), in process against the fake Telegram (a
worker alone: every partition is its own): a muxi round and a showhand game played and paid, every
coin accounted for; a bot restarted mid-round on the same database finishes it; a tool that needs
the database alone is refused while a worker runs, naming it. Several workers: ``test_workers.py``."""

import pytest

from faketg.harness import GROUP, start_bot, stop_bot
from storage import DatabaseInUse
from storage.postgres import hold_postgres
from tests.component.decks import SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.scenarios import act, open_and_start


@pytest.fixture
async def bot(world, postgres_url):
    running = await start_bot(world, postgres_url)
    yield running
    await stop_bot(running)


def dm(bot, person) -> str:
    return bot.world.bot_messages(person)[-1].text


async def coins(bot, people) -> dict[int, int]:
    return {person: await bot.runtime.store.balance(person) for person in people}


async def test_a_muxi_round_is_played_and_paid(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "9S KS", 2: "5S 6H", 3: "2C 2D"}, "7S")
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await d.press(3, 3, "不补")
    await d.press(2, 2, "补牌")
    assert "第 1 局 · 结算" in d.table(GROUP)
    assert "🏁 本局" in dm(bot, 2) and "双倍天公9" in dm(bot, 1)
    held = await coins(bot, [1, 2, 3])
    assert held[1] > 10_000 > held[2] and held[3] < 10_000, held
    report = await bot.runtime.store.check()
    assert report.ok, report.problems
    assert report.figures["granted"] == 30_000 and report.figures["people"] == 3


async def test_a_showhand_game_is_played_to_its_all_in_and_paid(bot):
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    for _ in range(4):
        await act(bot, "过牌")
    await act(bot, "梭哈")
    await act(bot, "跟注")
    assert "结算" in bot.driver.table(GROUP)
    assert (
        sum((await coins(bot, [1, 2])).values()) + (await bot.runtime.store.check()).figures["house"]
        == 20_000
    )
    assert (await bot.runtime.store.check()).ok


async def test_a_bot_restarted_mid_round_on_the_same_database_finishes_the_round(world, postgres_url):
    first = await start_bot(world, postgres_url)
    stack(first, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"}, "7S 8H")
    await open_and_start(first, [1, 2, 3])
    await first.driver.press(1, GROUP, "当庄")
    await first.driver.press(3, 3, "不补")
    await stop_bot(first)

    second = await start_bot(world, postgres_url)
    try:
        await second.driver.press(2, 2, "补牌")
        await second.driver.press(1, 1, "补牌")
        assert "第 1 局 · 结算" in second.driver.table(GROUP)
        report = await second.runtime.store.check()
        assert report.ok and report.figures["open_tables"] == 1, report
    finally:
        await stop_bot(second)


async def test_a_tool_that_needs_the_database_alone_is_refused_while_a_worker_runs(bot, postgres_url):
    with pytest.raises(DatabaseInUse) as refused:
        await hold_postgres(postgres_url)  # as migrate-to takes it: not shared
    assert refused.value.holder.startswith("paiju pid "), refused.value.holder
    assert "?host=" in refused.value.path  # the URL, shown without a password
