"""An all-in everyone answered, in the Mini App in a browser (issue 49, point 4): the sandbox runs
with the bot's own defaults (a card a second), so the cards left turn over one by one under
"🔥 全员梭哈，开牌中…", and then the results show; screenshots of both, in both themes."""

import pytest
from playwright.sync_api import expect

from tests.process.browser.sandbox_page import ARTIFACTS, CHECK_OR_CALL, PHONE, require_chromium, use_theme
from tests.process.browser.test_miniapp import LIVE, TABLE, InFront, app_frame, shoot

require_chromium()


@pytest.fixture(scope="module")
def phone_pages(browser, sandbox_url):
    context = browser.new_context(viewport=PHONE)
    pages = [context.new_page(), context.new_page()]
    for opened in pages:
        opened.goto(f"{sandbox_url}?theme=light")
    yield pages
    context.close()


# Each view pushed during the reveal, as drawn: how many cards the viewer's seat shows, and how many
# of them turn over (app.js's ``show`` is wrapped: the steps come faster than a screenshot).
RECORD = """() => {
  window.revealSeen = [];
  const drawn = show;
  show = (data) => {
    drawn(data);
    if (data.phase !== "reveal") return;
    const mine = data.seats.find((seat) => seat.me);
    const turned = document.querySelectorAll("#mine .card.dealt").length;
    window.revealSeen.push([mine ? mine.cards.length : -1, turned]);
  };
}"""
PLAYERS = {"app": "阿强", "group": "阿明"}  # who plays where; the next theme's: the winner and 小红


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_an_all_in_s_cards_turn_over_one_by_one_in_the_mini_app(phone_pages, theme):
    group_page, app_page = phone_pages
    for page in phone_pages:
        use_theme(page, theme)
    group, player = InFront(group_page), InFront(app_page)
    group.act_as("阿明")  # the sandbox's admin
    group.say("/cancel")  # (the table the theme before left)
    group.act_as(PLAYERS["group"])
    group.say("/newgame showhand")
    group.sees("梭哈 · 等待开局")
    player.act_as(PLAYERS["app"])
    player.press("🀄 打开牌桌")
    app = app_page.frame_locator("#miniapp-frame")
    expect(app.locator("#title")).to_contain_text("梭哈", timeout=LIVE)
    app.locator('#actions button[data-action="join"]').click()
    group.sees(f"{PLAYERS['app']} ⏳ 未准备", timeout=TABLE)
    app.locator('#actions button[data-action="ready"]').click()
    group.act_as(PLAYERS["group"])
    group.press("开始")
    expect(app.locator("#mine .seat .card")).to_have_count(2, timeout=LIVE)
    frame = app_frame(app_page)
    frame.evaluate(RECORD)
    for _ in range(20):  # checks until card 4, when 阿强 goes all-in and 阿明 calls it
        now = frame.evaluate("view")
        if now["phase"] != "betting":
            break
        if next(seat for seat in now["seats"] if seat["turn"])["me"]:
            codes = [action["action"] for action in now["actions"]]
            code = "allin" if "allin" in codes else "check" if "check" in codes else "call"
            app.locator(f'#actions button[data-action="{code}"]').first.click()
        else:
            group.act_as(PLAYERS["group"])
            group.press(next(label for label in group.last_buttons() if CHECK_OR_CALL.match(label)))
        frame.wait_for_function("v => view.version > v", arg=now["version"], timeout=LIVE)
    expect(app.locator("#banner")).to_contain_text("开牌中", timeout=LIVE)
    expect(app.locator("#mine .seat .card")).to_have_count(4)  # four cards each until card 5 comes
    ARTIFACTS.mkdir(parents=True, exist_ok=True)  # (at once: the next card comes a second later)
    app_page.screenshot(path=str(ARTIFACTS / f"miniapp-{theme}-reveal-cards.png"))
    expect(app.locator("#results .line")).to_have_count(2, timeout=LIVE)
    seen = frame.evaluate("window.revealSeen")  # each step as drawn: (my cards, those turned over)
    assert seen[0] == [4, 0] and [5, 1] in seen and seen.index([5, 1]) > 0, seen
    expect(app.locator("#banner")).not_to_contain_text("开牌中")
    group.sees("梭哈 · 第 1 局 · 结算", timeout=TABLE)
    shoot(app_page, "reveal-results")
    won = frame.evaluate("view.results.lines.find(line => line.won).name")
    PLAYERS.update(app=won.removesuffix("🤖"), group="小红")  # (the loser has no coins left)
