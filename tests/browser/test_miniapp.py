"""The Mini App in a real browser, through the sandbox (Playwright + Debian's Chromium), in both
themes: one person plays a muxi round in the Mini App (the side panel the table's button opens, as
the person acted as, with initData signed by the sandbox's token) while the others press the
table's buttons in a second page; each sees the other's actions live. A forged initData is refused.
Screenshots go to $PAIJU_ARTIFACTS (else paiju-artifacts in the temp folder)."""

import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.browser.test_sandbox import (  # noqa: F401  (fixtures)
    ARTIFACTS,
    DESKTOP,
    PHONE,
    Person,
    browser,
    sandbox_url,
    theme,
)

LIVE = 5_000  # ms: a pushed update shows long before this


@pytest.fixture(scope="module")
def two_pages(browser, sandbox_url, theme):  # noqa: F811
    context = browser.new_context(viewport=PHONE)
    pages = [context.new_page(), context.new_page()]
    for opened in pages:
        opened.goto(f"{sandbox_url}?theme={theme}")
        expect(opened.locator("html")).to_have_attribute("data-theme", theme)
    yield pages
    context.close()


class InFront(Person):
    """A person acting in one of the two pages: it comes to the front first, as a click would."""

    def act_as(self, name, where="group"):
        self.page.bring_to_front()
        super().act_as(name, where)

    def press(self, label):
        self.page.bring_to_front()
        super().press(label)


def shoot(page, theme, moment, size=None):  # noqa: F811
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("document.getElementById('toast').hidden = true")
    if size:
        page.set_viewport_size(size)
    page.screenshot(path=str(ARTIFACTS / f"miniapp-{theme}-{moment}.png"))
    if size:
        page.set_viewport_size(PHONE)


def test_a_muxi_round_half_in_the_mini_app(two_pages, theme, sandbox_url):  # noqa: F811
    group_page, app_page = two_pages
    group, player = InFront(group_page, theme), InFront(app_page, theme)
    group.act_as("阿明")
    group.say("/newgame muxi")
    group.sees("木虱 · 等待开局")
    group.act_as("小红")
    group.press("加入")
    group.sees("小红 ⏳ 未准备")

    player.act_as("阿强")
    player.press("🀄 打开牌桌")
    app = app_page.frame_locator("#miniapp-frame")
    expect(app.locator("#others .seat")).to_have_count(2, timeout=LIVE)
    expect(app.locator("#banner")).to_contain_text("旁观")
    background = app.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")
    assert background == ("rgb(23, 33, 43)" if theme == "dark" else "rgb(255, 255, 255)"), background
    app.locator('#actions button[data-action="join"]').click()
    expect(app.locator("#mine .seat .tag.me")).to_have_count(1, timeout=LIVE)
    group.sees("阿强 ⏳ 未准备", timeout=LIVE)  # the Mini App's action, in the group's table message

    app.locator('#actions button[data-action="ready"]').click()
    for name in ("阿明", "小红"):
        group.act_as(name)
        group.press("开始")
    expect(app.locator("#others .seat.turn .name")).to_have_text("阿明", timeout=LIVE)  # pushed
    expect(app.locator("#clock-text")).to_have_text(re.compile(r"^\d+ 秒$"))
    first = app.locator("#clock-text").inner_text()
    expect(app.locator("#clock-text")).not_to_have_text(first, timeout=3_000)  # it ticks
    group.act_as("阿明")
    group.press("当庄")

    expect(app.locator("#others .seat .tag").first).to_have_text("庄", timeout=LIVE)
    mine = app.locator("#mine .card")
    expect(mine).to_have_count(2)
    assert app.locator("#mine .card.back").count() == 0, "my own cards face up"
    expect(app.locator("#others .seat").first.locator(".card.back")).to_have_count(2)  # the banker's, hidden
    shoot(app_page, theme, "1-my-turn")
    shoot(app_page, theme, "1-my-turn-desktop", DESKTOP)
    choice = app.locator('#actions button[data-action="stand"], #actions button[data-action="draw"]').first
    choice.click()
    group.sees("阿强  ✅", timeout=LIVE)
    group.act_as("小红")
    group.press("补牌")
    group.act_as("阿明")
    group.settled()
    if "结算" not in group.chat_text():
        group.press("补牌")  # the banker's turn
    group.sees("结算", timeout=LIVE)
    expect(app.locator("#results .line")).to_have_count(3, timeout=LIVE)
    expect(app.locator('#actions button[data-action="ready"]')).to_be_visible()
    shoot(app_page, theme, "2-results")


def test_a_forged_init_data_is_refused(two_pages, sandbox_url):  # noqa: F811
    _, page = two_pages
    forged = urlencode(
        {"tgWebAppData": "auth_date=1&user=%7B%22id%22%3A1001%7D&start_param=t1&hash=" + "0" * 64}
    )
    answers = []
    page.on("response", lambda response: answers.append(response.status) if "/api/" in response.url else None)
    page.goto(f"{sandbox_url}miniapp/#{forged}")
    expect(page.locator("body")).to_have_attribute("data-refused", "1", timeout=LIVE)
    expect(page.locator("#banner")).to_be_visible()
    assert answers and set(answers) <= {401}, answers
    assert page.locator(".card").count() == 0
