"""The sandbox in a real browser: Playwright drives Debian's Chromium (headless) at a phone's size, in
Telegram's light and dark themes (the muxi round in the light one, the showhand game in the dark
one, every screenshot in both), through a whole muxi round and a whole showhand game, acting as
several people. It checks what the page shows of Telegram (message times, "edited", whom a message
notifies and the unread badges, a person who never opened a DM with the bot) and keeps screenshots of
the key moments as test artifacts: $PAIJU_ARTIFACTS, else paiju-artifacts in the temp folder, never
the tracked tree (the README's picture is refreshed on purpose, by copying one)."""

import re

import pytest
from playwright.sync_api import expect

from bot.web.sandbox.server import GROUP_ID, TOKEN
from faketg.world import BOT_USERNAME
from tests.process.browser.sandbox_page import (
    CHECK_OR_CALL,
    DESKTOP,
    PHONE,
    Person,
    require_chromium,
    switch_theme,
    use_theme,
)

COUNT = re.compile(r"^[1-9]\d*$")

require_chromium()


@pytest.fixture(scope="module")
def page(browser, sandbox_url):
    context = browser.new_context(viewport=PHONE)
    opened = context.new_page()
    opened.goto(f"{sandbox_url}?theme=light")
    expect(opened.locator("html")).to_have_attribute("data-theme", "light")
    yield opened
    context.close()


def test_the_page_takes_its_theme_from_the_address_and_the_switch_changes_it(browser, sandbox_url):
    context = browser.new_context(viewport=PHONE)
    try:
        opened = context.new_page()
        opened.goto(f"{sandbox_url}?theme=dark")
        expect(opened.locator("html")).to_have_attribute("data-theme", "dark")
        opened.click("#theme")
        expect(opened.locator("html")).to_have_attribute("data-theme", "light")
        assert switch_theme(opened) == "dark"
    finally:
        context.close()


def take_turns(me, people, pick, finished, where):
    """Each person in turn presses what ``pick`` chooses among the buttons they see (in their DM, or
    in the group), until the group shows ``finished``."""
    for _ in range(12):
        for name in people:
            me.act_as(name, where)
            choice = pick(me.last_buttons())
            if choice:
                me.press(choice)
        me.act_as(people[0])
        if finished in me.chat_text():
            return
    raise AssertionError(f"{finished!r} never came: {me.chat_text()[-500:]}")


def shows_times_and_edits(page):
    """Every message shows its time as Telegram does (HH:MM); an edited one says so."""
    times = page.locator(".msg .bubble > .meta time")
    expect(times).to_have_count(page.locator(".msg").count())
    assert all(re.fullmatch(r"\d\d:\d\d", time) for time in times.all_inner_texts())
    expect(page.locator(".msg.bot .bubble > .meta .edited").first).to_have_text("编辑过")


def test_a_whole_muxi_round_in_the_browser(page):
    me = Person(page)
    me.act_as("阿明")
    me.say("/newgame muxi")
    me.sees("木虱 · 等待开局")
    for name in ("小红", "阿强"):
        me.act_as(name)
        me.press("加入")
        me.sees(f"{name} ⏳ 未准备")
    shows_times_and_edits(page)  # the joins edited the table message
    me.act_as("小红")
    me.say("/join")  # she sits already: the bot answers her message, and an answer notifies
    expect(page.locator(".msg.bot .bubble > .meta .bell.me").last).to_contain_text("小红")
    me.shoot("1-lobby")
    for name in ("阿明", "小红", "阿强"):
        me.act_as(name)
        me.press("开始")
    me.sees("叫庄：阿明 是否当庄")
    me.act_as("阿明")
    me.press("当庄")
    me.sees("庄家 阿明")  # (the sandbox's seed deals a round with draws to make)
    # The cards come to each player as a new DM: it notifies them, so their DM has a badge until seen.
    me.act_as("小红")
    expect(page.locator("#tab-dm .badge")).to_have_text(COUNT)
    expect(page.locator('button.person[data-person="阿强"] .badge')).to_have_text(COUNT)
    me.shoot("2-dm-badge")
    page.click("#tab-dm")
    expect(page.locator("#tab-dm .badge")).to_be_hidden()
    expect(page.locator(".msg.bot .bubble > .meta .bell").first).to_be_visible()
    me.sees("轮到你了")  # her turn to draw is a new DM, with a deadline people can read
    expect(page.locator("#messages")).to_contain_text(re.compile(r"\d+ 秒 · \d\d:\d\d:\d\d 截止"))
    me.shoot("3-dm")
    me.act_as("小红")
    me.press("看我的牌")
    expect(page.locator("#alert")).to_be_visible()
    expect(page.locator("#alert-text")).to_contain_text("你的牌")
    me.shoot("4-popup")
    page.click("#alert-ok")
    take_turns(
        me,
        ["小红", "阿强", "阿明"],
        lambda b: "不补" if "不补" in b else ("补牌" if "补牌" in b else None),
        "结算",
        "dm",
    )
    me.sees("第 1 局 · 结算")
    me.sees("洗牌已公开")
    me.act_as("小红", "dm")
    me.sees("🏁 本局")  # her DM ends with what she won or lost and her coins now
    me.sees("现有")
    me.act_as("小红")
    shows_times_and_edits(page)
    me.shoot("5-muxi-results")
    me.shoot("5-muxi-results-desktop", DESKTOP)


def test_a_person_who_never_opened_a_dm_with_the_bot(page, sandbox_url):
    me = Person(page)
    if page.locator("#add-toggle").is_visible():  # a phone: the form opens from "＋"
        page.click("#add-toggle")
    page.fill("#new-name", "老王")
    page.check("#new-unstarted")
    page.click("#add-person button[type=submit]")
    expect(page.locator("button.person.active .name")).to_have_text("老王")
    page.click("#tab-dm")
    expect(page.locator("#messages .service")).to_contain_text("还没有打开过与机器人的私聊")
    expect(page.locator("#composer")).to_be_hidden()
    me.shoot("6-never-opened-dm")
    # What the bot does for such a person (its own words aside): a mention, with a link to start it
    people = page.request.get(f"{sandbox_url}api/state").json()["people"]
    laowang = next(person["id"] for person in people if person["name"] == "老王")
    text = (
        f'<a href="tg://user?id={laowang}">老王</a> <a href="https://t.me/{BOT_USERNAME}?start=t1">私聊</a>'
    )
    sent = page.request.post(
        f"{sandbox_url}bot{TOKEN}/sendMessage", form={"chat_id": GROUP_ID, "text": text, "parse_mode": "HTML"}
    )
    assert sent.ok, sent.text()
    expect(page.locator("#tab-group .badge")).to_have_text("1")
    page.click("#tab-group")
    expect(page.locator("#tab-group .badge")).to_be_hidden()
    expect(page.locator(".msg.bot .bubble > .meta .bell.me").last).to_contain_text("老王")
    page.locator("#messages a", has_text="私聊").last.click()
    expect(page.locator("#tab-dm")).to_have_class(re.compile("active"))
    page.click("#start")
    expect(page.locator(".msg.mine")).to_contain_text("/start t1")
    expect(page.locator(".msg.bot").first).to_be_visible()  # the bot's welcome
    expect(page.locator("#messages .service")).to_have_count(0)
    expect(page.locator("#composer")).to_be_visible()


def test_at_a_phones_size_every_name_is_in_sight_and_the_bots_owner_is_marked(page):
    """Five people and more: the names wrap to a second row rather than scroll behind "＋"; the
    person who is the bot's owner (may /cancel and refund) carries 🔑, which says so."""
    people = page.locator("button.person")
    for newcomer in ("Michelle", "大飞哥哥"):
        if people.count() >= 5:
            break
        if page.locator("#add-toggle").is_visible():
            page.click("#add-toggle")
        page.fill("#new-name", newcomer)
        page.click("#add-person button[type=submit]")
        expect(page.locator("button.person.active .name")).to_have_text(newcomer)
    assert people.count() >= 5
    toggle = page.locator("#add-toggle").bounding_box()
    for index in range(people.count()):
        box = people.nth(index).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        overlaps = toggle and not (
            box["x"] + box["width"] <= toggle["x"]
            or toggle["x"] + toggle["width"] <= box["x"]
            or box["y"] + box["height"] <= toggle["y"]
            or toggle["y"] + toggle["height"] <= box["y"]
        )
        assert not overlaps, (people.nth(index).inner_text(), box, toggle)
    owner = page.locator("button.person", has_text="阿明")
    expect(owner.locator(".owner")).to_have_text("🔑")
    expect(owner).to_have_attribute("title", re.compile("/cancel"))
    expect(page.locator("button.person", has_text="小红").locator(".owner")).to_have_count(0)
    Person(page).shoot("6b-five-people-and-the-owner")


def test_a_whole_showhand_game_in_the_browser(page):
    use_theme(page, "dark")
    me = Person(page)
    me.act_as("阿明")
    me.say("/cancel")  # a muxi table may still be open between rounds: one table per group
    expect(page.locator("#messages")).to_contain_text(re.compile("管理员已结束本桌|本群现在没有牌桌"))
    me.say("/newgame showhand")
    me.sees("梭哈 · 等待开局")
    me.act_as("小红")
    me.press("加入")
    me.sees("小红 ⏳ 未准备")
    for name in ("阿明", "小红"):
        me.act_as(name)
        me.press("开始")
    me.sees("梭哈 · 第 1 局")
    me.act_as("小红", "dm")
    me.sees("底牌")
    me.shoot("7-showhand-dm")
    # The one to bet is asked with the whole picture: every seat's face-up card, what the pot
    # stands at, and what they face (nobody has bet: check or bet).
    me.act_as("阿明")
    pointed = [line for line in me.chat_text().splitlines() if "👈" in line][-1]  # the table's turn
    me.act_as("阿明" if "阿明" in pointed else "小红", "dm")
    me.sees("👉 轮到你：过牌或下注")
    for line in ("1. 阿明  🂠", "2. 小红  🂠", "💰 底池"):
        me.sees(line)
    me.shoot("7-showhand-prompt")
    take_turns(  # whoever's turn it is checks or calls; the other is told it is not their turn
        me,
        ["阿明", "小红"],
        lambda b: next((label for label in b if CHECK_OR_CALL.match(label)), None),
        "梭哈 · 第 1 局 · 结算",
        "group",
    )
    me.sees("底牌")  # the show-down marks each face-down card, names the hands, says who took the pot
    me.sees("归")
    expect(page.locator("#messages")).to_contain_text(re.compile("大过|都是"))
    shows_times_and_edits(page)
    me.shoot("8-showhand-results")


def test_a_player_who_lets_the_clock_run_goes_on_autopilot_and_comes_back(page):
    """托管 (issue 28): with 10-second turns, whoever is first to bet does nothing; the table marks
    them 🤖, their DM says 托管中 with 我回来了, and pressing it brings them back."""
    use_theme(page, "light")
    me = Person(page)
    me.act_as("阿明")
    me.say("/cancel")  # the showhand table may still be open between games
    expect(page.locator("#messages")).to_contain_text(re.compile("管理员已结束本桌|本群现在没有牌桌"))
    me.say("/settings")
    # 10秒 of the turn's row (the first: the pause between rounds has a 10秒 of its own below it)
    page.locator(".msg.bot .kb button").filter(has_text=re.compile("^10秒$")).first.click()
    me.say("/newgame showhand")
    me.sees("梭哈 · 等待开局")
    me.act_as("小红")
    me.press("加入")
    for name in ("阿明", "小红"):
        me.act_as(name)
        me.press("开始")
    me.sees("梭哈 · 第 1 局")
    me.sees("🤖", timeout=30_000)  # the first to bet let the clock run: folded, and on autopilot
    idle = next(name for name in ("阿明", "小红") if f"{name}🤖" in me.chat_text())
    me.act_as(idle, "dm")
    me.sees("🤖 托管中")
    me.shoot("9-autopilot-dm")
    me.press("🙋 我回来了")
    expect(page.locator("#toast, #alert").filter(has_text="欢迎回来").first).to_be_visible()
    me.act_as("阿明")
    me.say("/settings")
    me.press("30秒")
