"""The whole picture at your turn (issue 28, items 1, 2 and some of 5): a showhand prompt shows every
seat's face-up cards, what happened since your last turn and a header naming what you face and what
calling costs; the table says what was done last and keeps a folded seat's cards; every move names
what it puts in now, a raise also the total it reaches in this betting round when it differs (issue
49, point 1), an all-in one number everywhere; a new card dealt between two moves is marked; the
muxi banker's prompt names who drew and who stood, and seats keep their numbers; a finished game's
DM keeps what they did last; the rules draw red suits red."""

from __future__ import annotations

from bot.display.views.rules import rules_text
from bot.web.miniapp.view import table_view
from faketg.harness import GROUP
from tests.component.decks import stack, stack_showhand
from tests.component.scenarios import act, labels, live_table, newest, open_and_start

THREE = {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH", 3: "KD QH JC 10S 9D"}  # 2 leads (A♥ up)


def prompt_of(bot) -> tuple[int, str, list[str]]:
    """Whose turn it is, and their newest DM's text and buttons."""
    turn = live_table(bot).engine.turn
    message = newest(bot, turn)
    return turn, message.text, labels(message)


async def test_a_showhand_prompt_shows_the_seats_what_happened_and_what_calling_costs(bot):
    stack_showhand(bot, [1, 2, 3], 1, THREE)
    await open_and_start(bot, [1, 2, 3], "showhand")
    turn, text, buttons = prompt_of(bot)
    assert turn == 2 and "👉 轮到你：过牌或下注" in text and "刚才" not in text
    await act(bot, "下注 200")
    await act(bot, "加注 400")  # 3 raises: 400 on their ante, a total of 500
    turn, text, buttons = prompt_of(bot)
    assert turn == 1
    for seat in ("1. 阿明  🂠 9♥️  已下 100 👈", "2. 小红  🂠 A♥️  已下 300", "3. 阿强  🂠 Q♥️  已下 500"):
        assert seat in text, text
    # 阿强 puts 400 in, 400 in this round against 小红's 200 (the 100 ante was before it).
    assert "🗣 刚才：小红 下注 200 · 阿强 加注 400" in text
    assert "👉 阿强 加注 400：跟注 400、加注或弃牌" in text
    assert "🗣 刚才：阿强 加注 400" in bot.driver.table(GROUP), "the table alike"
    assert "底牌：8♠︎" in text and "A♦️" not in text and "K♦️" not in text, "no one else's face-down card"
    # (pot 900: ½ pot raises 500 above the 500, 1 pot 900; issue 49, point 2.) Each raise names
    # what it puts in on their 100: to 600, 700, 1,000, 1,400 and the cap 2,500.
    assert buttons == [
        "跟注 400",
        "加注 500",
        "加注 600",
        "½池 加注 900",
        "1池 加注 1,300",
        "加注 2,400",
        "弃牌",
    ]
    await act(bot, "弃牌")
    turn, text, _ = prompt_of(bot)
    assert turn == 2 and "🗣 刚才：阿强 加注 400 · 阿明 弃牌" in text, "only what came since"
    assert "1. 阿明  🂠 9♥️ · 弃牌  已下 100" in text, "a folded seat keeps its face-up card"
    table = bot.driver.table(GROUP)
    assert "1. 阿明  🂠 9♥️ · 弃牌  已下 100" in table and "🗣 刚才：阿明 弃牌" in table
    await act(bot, "加注 400")  # (the button names what it puts in: 400 on their 300)
    assert "你加注 400（本轮到 600）" in newest(bot, 2).text, "their DM keeps what they did"
    assert "🗣 刚才：小红 加注 400（本轮到 600）" in bot.driver.table(GROUP)


async def test_facing_an_all_in_the_header_names_it_and_the_call(bot):
    stack_showhand(bot, [1, 2], 1, {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH"})
    await open_and_start(bot, [1, 2], "showhand")
    for _ in range(4):  # cards 2 and 3: both check
        await act(bot, "过牌")
    assert table_view(live_table(bot), 1, "zh-hans", 0.0)["all_in"] is None
    await act(bot, "梭哈")  # 2, the lead: all they have
    turn, text, buttons = prompt_of(bot)
    assert turn == 1 and "👉 小红 梭哈 9,900：跟注 9,900 或弃牌" in text, text
    assert buttons == ["跟注 9,900", "弃牌"]
    # The Mini App announces it (once: by which move of the round it was) and lists the last moves.
    view = table_view(live_table(bot), 1, "zh-hans", 0.0)
    # One number for it everywhere: what it put in (9,900 on the 100 ante), in the DM as on the banner.
    assert view["all_in"] is not None and view["all_in"]["text"] == "小红 梭哈 9,900"
    # (each new card dealt between two moves is marked where it came: issue 49, point 8)
    assert view["feed"] == ["阿明 过牌", "🃏 第3张", "小红 过牌", "阿明 过牌", "🃏 第4张", "小红 梭哈 9,900"]
    _, text, _ = prompt_of(bot)
    assert "🗣 刚才：🃏 第4张 · 小红 梭哈 9,900" in text, "the DM's record alike: the card after their move"
    assert "你梭哈 9,900" in newest(bot, 2).text


async def test_the_prompt_reads_in_english_and_traditional_chinese(bot):
    d = bot.driver
    stack_showhand(bot, [1, 2, 3], 1, THREE)
    for person, language in ((1, "English"), (3, "繁體中文")):
        await d.send(person, person, "/language")
        await d.press(person, person, language)
    await open_and_start(bot, [1, 2, 3], "showhand")
    await act(bot, "下注 200")
    _, text, buttons = prompt_of(bot)
    assert "🗣 剛才：小红 下注 200" in text and "👉 小红 下注 200：跟注 200、加注或棄牌" in text, text
    assert buttons[:2] == ["跟注 200", "加注 300"]
    await act(bot, "加注 400")
    _, text, buttons = prompt_of(bot)
    assert "Just now: " in text and "raises 400: call 400, raise or fold" in text, text
    assert buttons[:2] == ["Call 400", "Raise 500"]


async def test_the_muxi_banker_s_prompt_names_who_drew_and_who_stood(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "2D 3D"}, "4C")
    await open_and_start(bot, [1, 2, 3])
    assert "1. 阿明  👉\n2. 小红\n3. 阿强" in d.table(GROUP)
    await d.press(1, GROUP, "当庄")
    assert "2. 小红  ⏳ 考虑中" in d.table(GROUP), "each keeps the number the banker question gave them"
    await d.press(2, GROUP, "补牌")
    await d.press(3, GROUP, "不补")
    prompt = newest(bot, 1).text
    assert "补牌还是不补" in prompt, prompt
    assert "2. 小红  ✅ 已补牌" in prompt and "3. 阿强  ✋ 不补" in prompt, prompt
    assert "4♣" not in prompt, "the banker sees what the group sees of the others' cards"


async def test_a_finished_game_s_dm_keeps_a_timeout_or_an_all_in_beside_the_result(bot):
    stack_showhand(bot, [1, 2], 1, {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH"})
    await open_and_start(bot, [1, 2], "showhand")
    for _ in range(4):
        await act(bot, "过牌")
    await act(bot, "梭哈")  # 2
    await bot.fire_timer()  # 1 does not answer: folds
    assert "⌛ 超时弃牌\n🏁 本局 −100" in newest(bot, 1).text
    assert "你梭哈 9,900\n🏁 本局 +100" in newest(bot, 2).text


def test_the_showhand_rules_draw_red_suits_red_and_say_showhand_as_the_buttons_do():
    for language in ("zh-hans", "zh-hant", "en"):
        text = rules_text("showhand", language)
        assert "♠︎ > ♥️ > ♣︎ > ♦️" in text and "全押" not in text
    assert "可以梭哈" in rules_text("showhand", "zh-hans")
