"""How a round ends, as each person sees it through the fake Telegram in process: every DM shows
its final cards and asks nothing more (a restarted bot still names the group), an escape says what
it cost, a banker's escape shows no cards, and a round nobody banks can still be verified."""

import hashlib
import re

from faketg.harness import ADMIN, GROUP, escape, start_bot, stop_bot
from tests.component.decks import SHOWHAND_ACES_WIN, stack, stack_showhand
from tests.component.scenarios import act, open_and_start

GROUP_TITLE = "潮汕老乡"


def dm(bot, person):
    """The person's newest DM from the bot: its text and its button labels."""
    message = bot.world.bot_messages(person)[-1]
    return message.text, [str(button["text"]) for button in message.buttons]


def assert_over(bot, person, *cards):
    """``person``'s DM shows these final cards, says the round is over, and asks nothing."""
    text, buttons = dm(bot, person)
    assert all(card in text for card in cards), text
    assert "🏁 本局" in text and "⏳" not in text and buttons == [], text
    assert GROUP_TITLE in text


# -- every DM shows the final cards once the round is over -------------------------------------
async def test_a_muxi_round_ended_by_the_last_players_draw_brings_every_dm_up_to_date(bot):
    d = bot.driver
    # The banker holds double tiangong 9 and stands by itself: the players' choices end the round.
    stack(bot, [2, 3, 1], {1: "9S KS", 2: "5S 6H", 3: "2C 2D"}, "7S")
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await d.press(3, 3, "不补")
    assert "补牌还是不补" in dm(bot, 2)[0] and dm(bot, 2)[1] == ["补牌", "不补"]
    await d.press(2, 2, "补牌")  # in their DM: this press ends the round
    assert "第 1 局 · 结算" in d.table(GROUP)
    assert_over(bot, 2, "5♠︎ 6♥️ 7♠︎", "四倍 顺子")
    assert_over(bot, 3, "2♣︎ 2♦️")
    assert_over(bot, 1, "9♠︎ K♠︎", "双倍天公9")
    assert bot.world.open_queries == {}


async def test_a_muxi_round_ended_by_the_bankers_draw_shows_the_drawn_card(bot):
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "补牌")
    await d.press(1, 1, "补牌")
    assert_over(bot, 1, "3♥️ 4♥️ 8♥️", "5点 三倍")
    assert_over(bot, 2, "5♠︎ 6♥️ 7♠︎")


async def test_a_showhand_game_ended_by_an_all_in_brings_every_dm_up_to_date(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    for _ in range(4):  # cards 2 and 3: both check
        await act(bot, "过牌")
    await act(bot, "梭哈")
    last = await act(bot, "跟注")  # card 5 is dealt with no betting, then the show-down
    assert "结算" in d.table(GROUP)
    assert "⏳" not in dm(bot, last)[0]
    assert_over(bot, 1, "底牌：8♠︎", "明牌：9♥️ 10♦️ Q♣︎ K♠︎")
    assert_over(bot, 2, "底牌：A♦️", "明牌：A♥️ 8♦️ 9♣︎ J♥️")


async def test_a_showhand_fold_keeps_each_face_down_card_in_its_owners_dm(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await act(bot, "下注 100")  # 2 leads
    await act(bot, "弃牌")  # 1 folds: 2 takes the pot without showing
    assert "A♦️" not in d.table(GROUP), "the winner's face-down card is not shown to the group"
    assert_over(bot, 1, "底牌：8♠︎", "明牌：9♥️")
    assert_over(bot, 2, "底牌：A♦️", "明牌：A♥️")


async def test_a_table_cancelled_during_a_game_leaves_no_prompt_in_the_dms(world, database):
    bot = await start_bot(world, database, owners=frozenset({ADMIN}))
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    assert "轮到你了" in dm(bot, 2)[0]
    await bot.driver.send(ADMIN, GROUP, "/cancel")  # an owner's cancel: at once, the antes refunded
    assert bot.runtime.tables.get(GROUP) is None
    assert_over(bot, 1, "底牌：8♠︎", "明牌：9♥️")
    assert_over(bot, 2, "底牌：A♦️", "明牌：A♥️")
    await stop_bot(bot)


# -- a restart keeps the group's name in the DMs -----------------------------------------------
async def test_a_restarted_bot_names_the_group_in_the_dms(world, database):
    first = await start_bot(world, database)
    stack(first, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"}, "7S")
    await open_and_start(first, [1, 2, 3])
    await first.driver.press(1, GROUP, "当庄")
    assert f"木虱 · {GROUP_TITLE} · 第 1 局" in dm(first, 2)[0]
    await stop_bot(first)

    second = await start_bot(world, database)
    await second.driver.press(2, 2, "补牌")  # in the DM: nothing in the group has been seen since
    text = dm(second, 2)[0]
    assert "5♠︎ 6♥️ 7♠︎" in text and f"木虱 · {GROUP_TITLE} · 第 1 局" in text, text
    await stop_bot(second)


# -- a showhand escape says what it cost --------------------------------------------------------
async def test_a_showhand_escape_says_what_the_escaper_lost(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await act(bot, "下注 200")  # 2 leads: ante 100 + 200
    await escape(d, 2)
    table = d.table(GROUP)
    assert "小红 逃跑，输掉已下的 300" in table and "罚 0" not in table, table
    assert (await bot.balance(1), await bot.balance(2)) == (10_300, 9_700)
    assert "🏁 本局 −300 · 现有 9,700 金币" in dm(bot, 2)[0], "their DM says their coins, as anyone's"


# -- a banker's escape: no show-down, no cards --------------------------------------------------
HANDS = {1: "2S 3S", 2: "2H 3H", 3: "2D 3D", 4: "2C 3C"}


async def test_after_the_bankers_escape_the_results_show_nobodys_cards(bot):
    d = bot.driver
    stack(bot, [2, 3, 4, 1], HANDS)
    await open_and_start(bot, [1, 2, 3, 4])
    await d.press(1, GROUP, "当庄")
    await d.press(4, GROUP, "补牌")
    await escape(d, 1)
    result = d.table(GROUP)
    assert "第 1 局 · 结算" in result and "阿明 逃跑，罚 5,000" in result
    assert not re.search("[♠♥♣♦]", result), result
    assert "小红  +1,000" in result and "庄 阿明  🏃 逃跑  −5,000" in result
    assert_over(bot, 2, "2♥️ 3♥️", "5点 二倍")  # each still sees their own cards, privately
    await d.send(1, GROUP, "/verify")
    assert "2H 2D 2C 2S 3H 3D 3C 3S" in d.last(GROUP), "the revealed deck stays whole"


async def test_an_escaped_players_cards_are_not_shown_at_the_show_down(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"})
    await open_and_start(bot, [1, 2, 3])
    await d.press(1, GROUP, "当庄")
    await escape(d, 2)
    await d.press(3, GROUP, "不补")
    await d.press(1, GROUP, "不补")
    result = d.table(GROUP)
    assert "阿强  2♦️ 3♦️  5点 二倍" in result and "庄 阿明  2♠︎ 3♠︎" in result
    assert "2♥️" not in result and "小红  🏃 逃跑  −1,000" in result, result
    assert "🏁 本局 −1,000 · 现有 9,000 金币" in dm(bot, 2)[0], "the escaper's DM says their coins"


# -- a round nobody banks can be verified --------------------------------------------------------
async def test_the_commitment_of_a_round_nobody_banks_can_be_verified(bot):
    d = bot.driver
    await open_and_start(bot, [1, 2])
    table_id = bot.runtime.tables.get(GROUP).table_id
    shown = re.search(r"洗牌承诺 (\w{4})…(\w{3})", d.table(GROUP))
    assert shown, d.table(GROUP)
    await d.press(1, GROUP, "不当庄")
    await d.press(2, GROUP, "不当庄")
    closed = d.table(GROUP)
    await d.send(1, GROUP, f"/verify {table_id} 1")
    proof = d.last(GROUP)
    assert "找不到" not in proof, proof
    assert "无人当庄" in closed and f"/verify {table_id} 1" in closed, "the closed table says how"
    commitment = re.search(r"承诺（SHA-256）：(?:<code>)?(\w+)", proof).group(1)
    assert (commitment[:4], commitment[-3:]) == shown.groups(), "the commitment the table showed"
    deck, salt = re.search(r"printf '%s' '(.+)\|(\w+)'", proof).groups()
    assert hashlib.sha256(f"{deck}|{salt}".encode()).hexdigest() == commitment
