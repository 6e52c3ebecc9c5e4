"""Attacks and accidents of issue 14: borrowed identities, edited commands, digits that are not
ASCII, names that reorder the table, and what /verify gives away."""

import logging
import re

import pytest

from faketg.harness import ADMIN, GROUP
from faketg.world import CHANNEL_BOT, GROUP_ANONYMOUS_BOT
from tests.component.decks import ESCAPE_DEAL, SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.scenarios import open_and_start, snapshot

CHANNEL = -100_555
PLAY_AS_YOURSELF = "请用你自己的账号操作"
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def shared_ids():
    return int(str(CHANNEL_BOT["id"])), int(str(GROUP_ANONYMOUS_BOT["id"]))


def errors_logged(caplog):
    return [record for record in caplog.records if record.levelno >= logging.ERROR]


# -- 1. messages sent as a channel or as an anonymous admin ------------------------------------------
async def test_commands_sent_as_a_channel_or_an_anonymous_admin_are_refused_and_change_nothing(
    playing, world
):
    bot, d = playing, playing.driver
    world.add_channel(CHANNEL, "某频道")
    before = await snapshot(bot)
    told = set()
    for as_chat, command in ((CHANNEL, "/daily"), (GROUP, "/leave"), (GROUP, "/daily"), (CHANNEL, "/join")):
        sent = len(world.bot_messages(GROUP))
        await d.send_as(GROUP, as_chat, command)
        # told once per sender in a few seconds (the same reply to the same sender is not repeated)
        assert len(world.bot_messages(GROUP)) == sent + (as_chat not in told), command
        assert PLAY_AS_YOURSELF in d.last(GROUP), command
        told.add(as_chat)
    assert await snapshot(bot) == before, "nobody got up, nothing was paid"
    for shared in shared_ids():
        assert await bot.runtime.store.get_person(shared) is None, "no person, no starting grant"
    sent = len(world.bot_messages(GROUP))
    for text in ("hello", "/daily@some_other_bot", "/nosuchcommand"):
        await d.send_as(GROUP, CHANNEL, text)
    assert len(world.bot_messages(GROUP)) == sent, "chatter and other bots' commands get nothing"


async def test_a_member_kicked_by_an_anonymous_admin_still_leaves_the_table(playing, world):
    """Service messages pass the gate: they act on the member they name, not on their sender."""
    bot, d = playing, playing.driver
    update = world.leave_group(2, GROUP)
    update["message"]["from"] = GROUP_ANONYMOUS_BOT
    update["message"]["sender_chat"] = world.chats[GROUP].to_json(world.people)
    await d.deliver(update)
    assert 2 not in bot.runtime.tables.get(GROUP).seated()


async def test_a_press_from_a_shared_sender_is_answered_and_changes_nothing(playing, world):
    bot, d = playing, playing.driver
    anonymous = int(str(GROUP_ANONYMOUS_BOT["id"]))
    world.add_person(anonymous, "Group", username="GroupAnonymousBot")
    before = await snapshot(bot)
    await d.press(anonymous, GROUP, "补牌")
    assert PLAY_AS_YOURSELF in d.popup(anonymous) and world.open_queries == {}
    assert await snapshot(bot) == before
    assert await bot.runtime.store.get_person(anonymous) is None


# -- 2. edited messages ------------------------------------------------------------------------------
async def test_an_old_message_edited_into_a_command_does_nothing(bot, world):
    d = bot.driver
    old = await d.send(2, GROUP, "/balance")
    in_dm = await d.send(2, 2, "/balance")
    stack(bot, [2, 3, 1], ESCAPE_DEAL)
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    before, seen = await snapshot(bot), len(world.requests)
    await d.edit(2, GROUP, old, "/leave")
    await d.edit(2, 2, in_dm, "/daily")
    await d.edit(2, GROUP, old, "/newgame muxi")
    assert await snapshot(bot) == before, "no escape penalty"
    assert world.requests[seen:] == [], "no reply either"
    await d.send(2, 2, "/daily")
    assert "领取每日奖励" in d.last(2), "the edit did not claim the daily bonus"


# -- 3. digits that are not ASCII digits -------------------------------------------------------------
@pytest.mark.parametrize(
    ("chat", "text", "expected"),
    [
        (GROUP, "/verify ² 1", "用法"),
        (GROUP, "/verify 1 ¹", "用法"),
        (GROUP, "/verify ١ ١", "用法"),  # Arabic-Indic digits: int() would take them
        (GROUP, "/verify 99999999999999999999999 1", "用法"),  # past SQLite's 64-bit integers
        (GROUP, "/verify 9223372036854775807 1", "找不到这一局"),  # the largest one is fine
        (GROUP, "/verify 1 " + "9" * 5000, "用法"),  # int() refuses more than 4,300 digits
        (2, "/start t²", "欢迎来到牌局"),
        (2, "/start t99999999999999999999999", "欢迎来到牌局"),
    ],
)
async def test_numbers_that_are_not_plain_digits_get_a_clear_reply(bot, caplog, chat, text, expected):
    caplog.set_level(logging.ERROR)
    await bot.driver.send(2, chat, text)
    assert expected in bot.driver.last(chat)
    assert errors_logged(caplog) == []


@pytest.mark.parametrize("data", ["m:²:1:draw", "m:{table}:²:draw", "m:١:1:draw", "m:{table}:١:draw"])
async def test_forged_presses_with_strange_digits_are_answered_and_log_no_error(playing, caplog, data):
    bot = playing
    caplog.set_level(logging.ERROR)
    live = bot.runtime.tables.get(GROUP)
    before = await snapshot(bot)
    await bot.driver.press_data(2, GROUP, live.message_id, data.format(table=live.table_id))
    assert "已失效" in bot.driver.popup(2) and bot.world.open_queries == {}
    assert await snapshot(bot) == before
    assert errors_logged(caplog) == []


@pytest.mark.parametrize("amount", ["abc", "١٠٠", "²"])
async def test_forged_bet_amounts_are_answered_and_log_no_error(bot, caplog, amount):
    caplog.set_level(logging.ERROR)
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    live = bot.runtime.tables.get(GROUP)
    before = live.engine.to_dict()
    data = f"s:{live.table_id}:{live.engine.game_no}:bet:{amount}"
    await bot.driver.press_data(live.engine.turn, GROUP, live.message_id, data)
    assert "已失效" in bot.driver.popup(live.engine.turn) and bot.world.open_queries == {}
    assert live.engine.to_dict() == before
    assert errors_logged(caplog) == []


async def test_settings_pressed_with_strange_digits_change_nothing(bot, caplog):
    caplog.set_level(logging.ERROR)
    await bot.driver.send(ADMIN, GROUP, "/settings")
    message = bot.driver.message_with(GROUP, data="cfg:turn:30")
    before = await bot.runtime.preferences.chat_settings(GROUP)
    for data in ("cfg:turn:²", "cfg:lobby:٣٠", "cfg:turn:" + "9" * 5000):
        await bot.driver.press_data(ADMIN, GROUP, message.message_id, data)
        assert "已失效" in bot.driver.popup(ADMIN)
    assert await bot.runtime.preferences.chat_settings(GROUP) == before
    assert errors_logged(caplog) == []


# -- 4. bidirectional controls in names --------------------------------------------------------------
async def test_bidi_controls_never_reach_a_table_a_leaderboard_or_a_dm(bot, world):
    d = bot.driver
    world.add_person(50, "\u202eabc\u200b")
    world.chats[GROUP].members.add(50)
    world.chats[GROUP].title = "\u2067潮汕\u202e老乡\u2069"
    await bot.runtime.store.ensure_person(51, "\u202bold\u061cname\u202c")  # stored before names were cleaned
    stack(bot, [2, 50], {50: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [50, 2])
    await d.press(50, GROUP, "当庄")
    table = d.table(GROUP)
    assert "abc" in table and not BIDI.search(table)
    assert (await bot.runtime.store.get_person(50)).name == "abc", "cleaned on the way in"
    dm = d.texts(50)[-1]
    assert "潮汕老乡" in dm and not BIDI.search(dm)
    await d.send(2, GROUP, "/top global")
    top = d.last(GROUP)
    assert "abc" in top and "oldname" in top and not BIDI.search(top)
    world.add_person(52, "👨\u200d👩\u200d👧 Li")
    await d.send(52, 52, "/balance")
    assert "👨\u200d👩\u200d👧 Li" in d.last(52), "the joiner of emoji sequences stays"


# -- 5. /verify gives away only rounds that are over -------------------------------------------------
async def test_verify_never_shows_the_deck_of_a_round_still_running(playing, world):
    bot, d = playing, playing.driver
    live = bot.runtime.tables.get(GROUP)
    await d.send(2, GROUP, f"/verify {live.table_id} 1")
    assert "找不到这一局" in d.last(GROUP)
    await d.send(2, GROUP, "/verify")
    assert "找不到这一局" in d.last(GROUP)
    await d.press(2, GROUP, "不补")
    await d.press(3, GROUP, "不补")
    await d.press(1, GROUP, "不补")
    assert "结算" in world.messages[(GROUP, live.message_id)].text
    await d.send(2, GROUP, f"/verify {live.table_id} 1")
    assert "sha256sum" in d.last(GROUP) and "没亮出的牌" in d.last(GROUP)
    await d.send(2, GROUP, "/help")
    assert "包括没亮出的牌" in d.last(GROUP)
