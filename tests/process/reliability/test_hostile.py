"""Hostile and wrong input: each answered clearly, none changing anything it should not."""

import pytest

from faketg.harness import ADMIN, GROUP, escape
from tests.component.scenarios import snapshot


@pytest.mark.parametrize(
    ("data", "answer"),
    [
        ("m:999:1:draw", "这一桌已经结束"),  # another table
        ("m:{table}:0:draw", "上一局的按钮"),  # an old round
        ("m:{table}:1:teleport", "已失效"),  # an action that does not exist
        ("s:{table}:1:raise:100", "已失效"),  # the other game's action on this table
        ("hello", "已失效"),  # not our format
        ("m:{table}:1:draw:" + "9" * 60, "已失效"),  # too long
        ("m:-1:1:draw", "已失效"),
        ("lang:klingon", "已失效"),
        ("cfg:turn:5", "只有群管理员"),
        ("pick:poker", None),
    ],
)
async def test_forged_callback_data_is_answered_and_changes_nothing(playing, data, answer):
    bot = playing
    live = bot.runtime.tables.get(GROUP)
    before = await snapshot(bot)
    await bot.driver.press_data(2, GROUP, live.message_id, data.format(table=live.table_id))
    assert bot.world.open_queries == {}
    if answer:
        assert answer in bot.driver.popup(2)
    assert await snapshot(bot) == before


async def test_presses_by_people_not_seated(playing):
    bot = playing
    before = await snapshot(bot)
    for label in ("补牌", "不补", "逃跑", "看我的牌"):
        await bot.driver.press(6, GROUP, label)
        assert bot.driver.popup(6), label
    assert await snapshot(bot) == before and bot.world.open_queries == {}


async def test_wrong_commands_and_arguments(playing):
    bot, d = playing, playing.driver
    before = await snapshot(bot)
    cases = [
        (2, 2, "/newgame muxi", "请在群里使用"),
        (2, 2, "/join", "请在群里使用"),
        (2, GROUP, "/cancel", "只有群管理员"),
        (2, GROUP, "/newgame " + "x" * 4000, "没有这个游戏"),
        (2, GROUP, "/rules <b>" + "<i>" * 1000, "没有「&lt;b&gt;&lt;i&gt;"),
        (2, GROUP, "/verify 1 2 3", "用法"),
        (2, GROUP, "/verify -1 x", "用法"),
        (2, GROUP, "/language fr", "只有群管理员"),
        (2, GROUP, "/settings now", "只有群管理员"),
        (2, GROUP, "/top <script>", "还没有人上榜"),
    ]
    for person, chat, text, expected in cases:
        await d.send(person, chat, text)
        assert expected in d.last(chat), (text[:30], d.last(chat)[:200])
    assert await snapshot(bot) == before


@pytest.mark.parametrize("name", ["<b>Bold</b>", "*_[`](x)", "A" * 200, "&amp; <&> \"'"])
async def test_names_that_could_break_the_markup(bot, world, name):
    world.add_person(50, name, username=None)
    world.chats[GROUP].members.add(50)
    d = bot.driver
    await d.send(50, GROUP, "/newgame muxi")
    await d.press(2, GROUP, "加入")
    await d.press(50, GROUP, "开始")
    await d.press(2, GROUP, "开始")
    table = bot.world.messages[(GROUP, bot.runtime.tables.get(GROUP).message_id)].text
    assert "叫庄" in table and "<b>Bold" not in table, "names are escaped"
    errors = [r for r in world.requests if r.error]
    assert errors == [], "every message parsed as Telegram HTML"
    await d.send(50, 50, "/balance")
    assert "10,000" in d.last(50)


async def test_a_table_in_a_chat_the_bot_was_removed_from(playing, world):
    bot, d = playing, playing.driver
    await escape(d, 2)  # an escape: 1,000 held in escrow
    assert bot.runtime.tables.get(GROUP).engine.core.escrow_total == 1_000
    await d.deliver(world.remove_bot(GROUP, ADMIN))
    assert bot.runtime.tables.get(GROUP) is None, "the table ended"
    assert await bot.balance(2) == 10_000, "the escrow went back"
    message_id = world.bot_messages(GROUP)[-1].message_id
    await d.press_data(3, GROUP, message_id, "m:1:1:draw")
    assert "这一桌已经结束" in d.popup(3)
    assert (await bot.runtime.store.check()).ok


async def test_an_edit_refused_because_the_bot_was_removed_ends_the_table(playing, world):
    bot, d = playing, playing.driver
    world.chats[GROUP].bot_is_member = False  # removed, and the bot missed the notice
    await d.press(2, GROUP, "不补")
    assert bot.runtime.tables.get(GROUP) is None
    assert {p: await bot.balance(p) for p in (1, 2, 3)} == {1: 10_000, 2: 10_000, 3: 10_000}
    assert bot.world.open_queries == {}


async def test_a_group_upgraded_to_a_supergroup_keeps_its_table_and_coins(playing, world):
    bot, d = playing, playing.driver
    await escape(d, 2)  # 1,000 in escrow follows the table too
    new_id = -100_999
    for update in world.upgrade_group(GROUP, new_id):
        await d.deliver(update)
    live = bot.runtime.tables.get(new_id)
    assert live is not None and bot.runtime.tables.get(GROUP) is None
    assert "庄家 阿明" in d.last(new_id)
    await d.press(3, new_id, "不补")
    await d.press(1, new_id, "不补")
    assert "结算" in d.last(new_id)
    saved = await bot.runtime.store.open_table(new_id)
    assert saved is not None and saved.escrow == 0
    assert sum([await bot.balance(p) for p in (1, 2, 3)]) == 30_000 - 200, "the house kept 2/10 of the escape"
    assert (await bot.runtime.store.check()).ok
    await d.send(1, new_id, "/history")
    assert "木虱 第 1 桌" in d.last(new_id), "the table, listed in its new chat"
    await d.send(1, new_id, "/history 1")
    assert "/verify 1 1" in d.last(new_id)


async def test_a_call_to_the_old_group_id_moves_the_table(playing, world):
    """The bot learns of the upgrade from Telegram's 400 (migrate_to_chat_id) before the notice."""
    bot, d = playing, playing.driver
    world.upgrade_group(GROUP, -100_777)  # the notices are not delivered
    await d.press(2, GROUP, "不补")
    assert bot.runtime.tables.get(-100_777) is not None
    assert "庄家 阿明" in d.last(-100_777)
