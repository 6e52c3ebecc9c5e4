"""The pause between rounds in a browser (issue 49, point 4): the sandbox runs with the bot's own
default (5 s); with both on 再来一局 ✓ 自动准备, the results stay, the table says when auto-ready
comes and the Mini App counts the seconds down, with no turn's clock; then the next round is dealt,
the last results still on screen until its first move. Screenshots of the group and the Mini App."""

import re

from playwright.sync_api import expect

from tests.process.browser.sandbox_page import CHECK_OR_CALL, require_chromium, use_theme
from tests.process.browser.test_miniapp import LIVE, TABLE, InFront, app_frame, shoot, two_pages

require_chromium()
__all__ = ["two_pages"]  # (the fixture, used here)

PAUSE = 5  # s: the bot's default


def play_out(group, app, frame) -> None:
    """Both check (or call) until the game is over: 阿强 in the Mini App, 阿明 in the group."""
    for _ in range(20):
        now = frame.evaluate("view")
        if now["phase"] != "betting":
            return
        if next(seat for seat in now["seats"] if seat["turn"])["me"]:
            app.locator('#actions [data-action="check"], #actions [data-action="call"]').first.click()
        else:
            group.act_as("阿明")
            group.press(next(label for label in group.last_buttons() if CHECK_OR_CALL.match(label)))
        frame.wait_for_function("v => view.version > v", arg=now["version"], timeout=LIVE)


def test_auto_ready_waits_a_breath_after_the_results(two_pages):
    group_page, app_page = two_pages
    for page in two_pages:
        use_theme(page, "dark")
    group, player = InFront(group_page), InFront(app_page)
    group.act_as("阿明")
    group.say("/cancel")
    group.say("/newgame showhand")
    group.sees("梭哈 · 等待开局")
    player.act_as("阿强")
    player.press("🀄 打开牌桌")
    app = app_page.frame_locator("#miniapp-frame")
    expect(app.locator("#title")).to_contain_text("梭哈", timeout=LIVE)
    app.locator('#actions button[data-action="join"]').click()
    group.sees("阿强 ⏳ 未准备", timeout=TABLE)
    app.locator('#actions button[data-action="ready"]').click()
    group.act_as("阿明")
    group.press("开始")
    expect(app.locator("#mine .seat .card")).to_have_count(2, timeout=LIVE)
    frame = app_frame(app_page)
    play_out(group, app, frame)
    expect(app.locator("#results .line")).to_have_count(2, timeout=LIVE)
    app.locator('#actions button[data-action="autoready"]').click()
    group.act_as("阿明")
    group.press("再来一局 ✓ 自动准备")  # both ready by their own presses: round 2 at once
    frame.wait_for_function("() => view.in_round && view.round === 2", timeout=LIVE)
    play_out(group, app, frame)

    # Round 2's results: the bot readies them only after the pause.
    expect(app.locator("#pause")).to_contain_text(re.compile(r"☕ 休息片刻，\d 秒后自动准备"), timeout=LIVE)
    expect(app.locator("#results")).to_contain_text("上局结果 · 第 2 局")
    expect(app.locator("#clock-label")).to_have_text("开局限时")  # the lobby's, no turn's
    group.sees(re.compile(r"☕ 休息片刻，\d\d:\d\d:\d\d 起自动准备"), timeout=TABLE)
    shoot(app_page, "pause")
    shoot(group_page, "pause-group")
    assert not frame.evaluate("view.in_round")
    frame.wait_for_function("() => view.in_round && view.round === 3", timeout=(PAUSE + 5) * 1000)
    expect(app.locator("#pause")).to_be_hidden()
    expect(app.locator("#results")).to_contain_text("上局结果 · 第 2 局")  # until the first move
    shoot(app_page, "pause-dealt")
