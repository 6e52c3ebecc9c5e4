"""Replies that arrive while they still mean something (issue 25, issue 30 point 3), through the fake
Telegram: every command answered (none dropped), at once in a quiet group, several waiting together
as one message; a reply about one person in their DM; the price of an escape confirmable for 5 s
from when it is seen; /cancel naming its table; an old round's buttons gone before the new moves."""

from bot.send.rate_policy import Limits
from faketg.driver import process
from faketg.harness import ADMIN, GROUP, PEOPLE, start_bot, stop_bot, too_many
from faketg.world import ApiError
from tests.component.decks import stack
from tests.component.scenarios import newest, open_and_start
from tests.waiting import until


async def handle(bot, update) -> None:
    """The bot handles ``update``; what it queued is not awaited."""
    await process(bot.application, update)


async def command(bot, person: int, text: str) -> int:
    """``person`` sends ``text`` in the group and the bot handles it (its replies may still wait):
    the command's message id."""
    update = bot.world.post(person, GROUP, text)
    await handle(bot, update)
    return update["message"]["message_id"]


def answer_to(bot, asked: int, person: int, command_text: str) -> str | None:
    """The bot's answer in the group to the command ``asked`` of ``person``: a message replying to
    it, or a part of a message of several naming them and their command."""
    head = f"▸ {PEOPLE.get(person, '群主')} {command_text}\n"
    for message in bot.world.bot_messages(GROUP):
        if message.reply_to == asked:
            return message.text
        if head in message.text:
            return message.text.split(head, 1)[1].split("\n\n▸ ", 1)[0]
    return None


def refuse_first(monkeypatch, world, matches) -> list[int]:
    """Telegram answers the first request that ``matches(method, params)`` with a 429 (retry after
    1 s); how many were refused (0 or 1), as a list to read after."""
    real, refused = world.call, []

    def call(method, params):
        if not refused and matches(method, params):
            refused.append(1)
            raise too_many()
        return real(method, params)

    monkeypatch.setattr(world, "call", call)
    return refused


def no_dm(world, *people: int) -> None:
    for person in people:
        world.people[person].started_bot = False


# -- issue 30 point 3: a quiet group is answered at once, none dropped -----------------------------------
async def test_a_quiet_group_answers_five_commands_from_five_people(world, database):
    bot = await start_bot(world, database, limits=Limits())  # Telegram's own limits
    no_dm(world, 1, 2, 3, 4, 5)  # so every answer is in the group
    said = [(1, "/balance"), (2, "/stats"), (3, "/top"), (4, "/balance"), (5, "/help")]
    asked = [(person, text, await command(bot, person, text)) for person, text in said]
    await bot.runtime.wait_idle()
    unanswered = [text for person, text, message in asked if answer_to(bot, message, person, text) is None]
    assert unanswered == [], "every command is answered, none dropped"
    assert "阿明 有 10,000 金币" in answer_to(bot, asked[0][2], 1, "/balance")
    assert "/newgame muxi" in answer_to(bot, asked[4][2], 5, "/help")
    await stop_bot(bot)


# -- issue 25 point 2: replies waiting together go as one, none dropped ----------------------------------
async def test_replies_waiting_together_go_as_one_message_naming_each_command(world, database, monkeypatch):
    bot = await start_bot(world, database)
    no_dm(world, 1, 2, 3, 4)
    refused = refuse_first(monkeypatch, world, lambda method, params: params.get("chat_id") == GROUP)
    first = await command(bot, 1, "/help")  # refused: the group waits a second
    await until(lambda: refused, "a 429")
    later = [
        await command(bot, person, text) for person, text in [(2, "/top"), (3, "/balance"), (4, "/rules")]
    ]
    sent_before = len(bot.world.bot_messages(GROUP))
    await bot.runtime.wait_idle()
    [merged] = bot.world.bot_messages(GROUP)[sent_before:]
    assert merged.reply_to == first, "it answers the first command"
    heads = [line for line in merged.text.split("\n") if line.startswith("▸ ")]
    assert heads == ["▸ 阿明 /help", "▸ 小红 /top", "▸ 阿强 /balance", "▸ 老王 /rules"]
    assert "阿强 有 10,000 金币" in merged.text and "无敌" in merged.text
    for person, text, message in zip((2, 3, 4), ("/top", "/balance", "/rules"), later, strict=True):
        assert answer_to(bot, message, person, text) is not None
    await stop_bot(bot)


# -- a reply about one person goes to their DM -------------------------------------------------------------
async def test_a_reply_about_one_person_goes_to_their_dm_and_the_group_is_told_so(bot, world):
    asked = await bot.driver.send(2, GROUP, "/stats")
    assert "小红" in bot.driver.last(2) and "10,000" in bot.driver.last(2), "their stats, in their DM"
    reply = newest(bot, GROUP)  # (issue 49 point 8: the group saw nothing until its next reply)
    assert reply.reply_to == asked and reply.text == "📬 小红：已私信回复你"
    no_dm(world, 3)
    asked = await bot.driver.send(3, GROUP, "/balance")
    reply = newest(bot, GROUP)
    assert reply.text == "💰 阿强 有 10,000 金币" and reply.reply_to == asked, "no DM: in the group"
    tries = [r for r in world.requests if r.chat_id == 3]
    asked = await bot.driver.send(3, GROUP, "/daily")
    assert "领取每日奖励" in newest(bot, GROUP).text and newest(bot, GROUP).reply_to == asked
    assert [r for r in world.requests if r.chat_id == 3] == tries, "their DM is not tried again"


# -- issue 25 point 1: the price of an escape, confirmable once seen ---------------------------------------
async def leave_with_the_price_held(world, database, monkeypatch):
    """A round under way where 小红 plays; the price of her escape, once asked, reaches the group
    10 s later (in the bot's clock: the group had to wait)."""
    bot = await start_bot(world, database, turn_seconds=120)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await bot.driver.press(1, GROUP, "当庄")
    real_clock, late = bot.runtime.clock, [0.0]
    monkeypatch.setattr(bot.runtime, "clock", lambda: real_clock() + late[0])

    def held(method, params):
        if method == "sendMessage" and "/leave" in str(params.get("text")):
            late[0] += 10
            return True
        return False

    return bot, refuse_first(monkeypatch, world, held)


def questions(world) -> int:
    return sum("再发一次 /leave 确认" in message.text for message in world.bot_messages(GROUP))


async def test_a_second_leave_sent_as_soon_as_the_price_is_seen_escapes(world, database, monkeypatch):
    bot, refused = await leave_with_the_price_held(world, database, monkeypatch)
    await bot.driver.send(2, GROUP, "/leave")
    assert refused and questions(world) == 1 and await bot.balance(2) == 10_000
    await bot.driver.send(2, GROUP, "/leave")  # as soon as it is seen: 10 s after the first
    assert bot.driver.last(GROUP) == "🏃 小红 逃跑了" and await bot.balance(2) == 9_000
    await stop_bot(bot)


async def test_a_leave_sent_before_the_price_is_seen_does_not_confirm(world, database, monkeypatch):
    bot, refused = await leave_with_the_price_held(world, database, monkeypatch)
    await command(bot, 2, "/leave")
    await until(lambda: refused, "a 429")
    await command(bot, 2, "/leave")  # sent before the price reached the group: no answer to it
    await bot.runtime.wait_idle()
    assert (
        questions(world) == 1
        and await bot.balance(2) == 10_000
        and 2 in bot.runtime.tables.get(GROUP).seated()
    )
    await bot.driver.send(2, GROUP, "/leave")
    assert bot.driver.last(GROUP) == "🏃 小红 逃跑了" and await bot.balance(2) == 9_000
    await stop_bot(bot)


async def test_two_presses_confirm_an_escape_while_a_leaves_price_is_on_its_way(bot):
    """A press's popup (or the Mini App) shows the price at once: two presses within the window
    confirm, whatever a /leave's price by reply still waits for; another /leave still waits."""
    escapes, quote = bot.runtime.escapes, (1_000, 1)
    assert not escapes.confirmed(7, 2, 5.0, quote, by_reply=True)  # /leave: the price goes by reply
    escapes.price_by_reply(7, 2)  # ... and has not reached the group yet
    assert not escapes.confirmed(7, 2, 5.0, quote, by_reply=True), "a /leave again waits for it"
    assert not escapes.confirmed(7, 2, 5.0, quote), "a press: the first of two"
    assert escapes.confirmed(7, 2, 5.0, quote), "the second press confirms"


async def test_replies_sent_together_and_refused_each_go_again_alone(world, database, monkeypatch):
    """Telegram refuses a message of several replies (400): which part it minded is not known, so
    each goes again on its own, the first one too (it was lost: often the price of an escape)."""
    bot = await start_bot(world, database)
    no_dm(world, 1, 2, 3)
    real, sends = world.call, []

    def call(method, params):
        if method == "sendMessage" and params.get("chat_id") == GROUP:
            sends.append(str(params.get("text")))
            if len(sends) == 1:
                raise too_many()  # the first waits: the others gather behind it
            if "\n\n▸ " in sends[-1] and len([s for s in sends if "\n\n▸ " in s]) == 1:
                raise ApiError(400, "Bad Request: message is too long")
        return real(method, params)

    monkeypatch.setattr(world, "call", call)
    first = await command(bot, 1, "/help")
    await until(lambda: sends, "a 429")
    later = [await command(bot, person, text) for person, text in [(2, "/top"), (3, "/rules")]]
    await bot.runtime.wait_idle()
    assert answer_to(bot, first, 1, "/help") is not None, "the first reply is not lost"
    assert all(
        answer_to(bot, asked, person, text) is not None
        for asked, (person, text) in zip(later, [(2, "/top"), (3, "/rules")], strict=True)
    )
    await stop_bot(bot)


# -- issue 25 point 3: /cancel names the table it ended ----------------------------------------------------
async def test_a_cancel_reply_names_its_table_and_answers_the_command(bot):
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    asked = await d.send(ADMIN, GROUP, "/cancel")
    await d.send(2, GROUP, "/newgame showhand")
    [reply] = [m for m in bot.world.bot_messages(GROUP) if m.text.startswith("🔚")]
    assert reply.reply_to == asked
    assert "木虱 第 1 桌（阿明开的）已结束" in reply.text, "the game, the table and who opened it"


# -- issue 25 point 4: an old round's buttons go before the new round's moves -----------------------------
async def test_the_last_rounds_buttons_go_before_the_new_rounds_moves(world, database, monkeypatch):
    bot = await start_bot(world, database)
    d = bot.driver
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    await open_and_start(bot, [1, 2])
    await d.press(1, GROUP, "当庄")
    await d.press(2, GROUP, "补牌")
    await d.press(1, GROUP, "补牌")
    old = bot.runtime.tables.get(GROUP).message_id
    assert "继续下一局" in d.labels(GROUP)
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")

    def taken_away(method, params):  # the old round's message losing its buttons
        return method == "editMessageText" and params["message_id"] == old and not params.get("reply_markup")

    refused = refuse_first(monkeypatch, world, taken_away)
    await d.press(2, GROUP, "继续下一局")
    await handle(bot, world.press(1, GROUP, *d.button_data(GROUP, "继续下一局")))  # the new round
    await until(lambda: refused, "the old round's message refused")  # the group got a 429
    start, new = len(world.requests), bot.runtime.tables.get(GROUP).message_id
    for person in (1, 2):  # whoever is asked calls the bank: the new table's buttons change
        await handle(bot, world.press(person, GROUP, *d.button_data(GROUP, "当庄")))
    await bot.runtime.wait_idle()
    edits = [
        r.params["message_id"]
        for r in world.requests[start:]
        if r.method == "editMessageText" and r.chat_id == GROUP
    ]
    assert edits == [old, new], (
        "the old round's buttons are taken away before the new round's change is shown"
    )
    assert world.messages[(GROUP, old)].buttons == []
    assert "第 1 局 · 结算" in world.messages[(GROUP, old)].text
    await stop_bot(bot)
