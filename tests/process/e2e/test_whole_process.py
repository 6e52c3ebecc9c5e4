"""The real bot process over real HTTP: whole games, a SIGKILL mid-round, and the books checked."""

import re

from faketg.harness import GROUP, PEOPLE
from tests.component.scenarios import open_and_start
from tests.process.e2e.process import TOKEN, storage_check
from tests.waiting import until


async def test_a_muxi_round_and_a_restart_after_sigkill(stage):
    d = stage.driver
    people = [1, 2, 3]
    await open_and_start(stage, people, "muxi")
    assert "叫庄：阿明 是否当庄" in stage.driver.table_message(GROUP).text
    await d.press(1, GROUP, "当庄")
    assert all(stage.world.bot_messages(p) for p in people), "everyone got their cards by DM"
    choosers = [p for p in (2, 3) if stage.driver.labels(p)]
    if choosers:
        await d.press(choosers[0], choosers[0], stage.driver.labels(choosers[0])[0])

    await stage.bot.kill()  # in the middle of the round
    await stage.bot.start()
    # That choice may have been the last one the round waited for (the deal is random: the others
    # held naturals), and then the round is over; otherwise the restarted bot must remember it.
    if choosers and "结算" not in stage.driver.table_message(GROUP).text:
        await d.press(choosers[0], GROUP, "补牌")
        assert "你已经选过了" in d.popup(choosers[0]), "the restarted bot knows the choice was made"
    await stage.driver.finish_muxi_round(GROUP, people)
    assert "第 1 局 · 结算" in stage.driver.table_message(GROUP).text
    await stage.bot.stop()
    check = storage_check(stage.bot.database)
    assert check.returncode == 0, check.stdout + check.stderr
    assert not stage.world.flagged_groups()
    assert TOKEN.split(":")[1] not in stage.bot.log.read_text()
    assert "Traceback" not in stage.bot.log.read_text()


async def play_showhand_to_the_end(stage, people, kill_after=None):
    """Whoever the table names ("轮到 X") checks or calls; optionally a SIGKILL midway."""
    by_name = {PEOPLE[p]: p for p in people}
    for step in range(60):
        table = stage.driver.table_message(GROUP)
        if "结算" in table.text:
            return
        if step == kill_after:
            await stage.bot.kill()
            await stage.bot.start()
        person = by_name[re.search(r"轮到 (\S+) ·", table.text).group(1)]
        choice = next(b["text"] for b in table.buttons if str(b["text"]).startswith(("过牌", "跟注")))
        await stage.driver.press(person, GROUP, choice)
    raise AssertionError("the game did not end")


async def test_a_showhand_game_with_a_sigkill_in_a_betting_round(stage):
    await open_and_start(stage, [1, 2, 4], "showhand")
    await play_showhand_to_the_end(stage, [1, 2, 4], kill_after=4)
    result = stage.driver.table(GROUP)
    assert "第 1 局 · 结算" in result and "🏆" in result
    await stage.bot.stop()
    check = storage_check(stage.bot.database)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "Traceback" not in stage.bot.log.read_text()


async def test_every_bot_api_method_it_calls_is_answered(stage):
    d = stage.driver
    await d.send(9, GROUP, "/cancel")  # getChatMember
    await d.send(1, GROUP, "/newgame muxi")
    await until(lambda: any("木虱" in m.text for m in stage.world.bot_messages(GROUP)), "the table")
    await d.send(1, GROUP, "/table")  # deleteMessage
    await until(lambda: "deleteMessage" in {request.method for request in stage.world.requests})
    called = {request.method for request in stage.world.requests}
    assert {
        "getMe",
        "deleteWebhook",
        "setMyCommands",
        "getUpdates",
        "sendMessage",
        "getChatMember",
        "deleteMessage",
    } <= called
    assert not any(request.error == 404 for request in stage.world.requests), (
        "no method unknown to the emulator"
    )
