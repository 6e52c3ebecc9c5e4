"""The Mini App in a real browser, through the sandbox (Playwright + Debian's Chromium), in both
themes (the muxi round in the light one, the showhand game and the languages in the dark one, the
switch between them re-theming the open Mini App): one person plays a muxi round and then a
showhand game in the Mini App (the side panel the
table's button opens, as the person acted as, with initData signed by the sandbox's token) while
the others press the table's buttons in a second page; each sees the other's actions live. A
spectator's page, and everything the network brings it (its event stream's messages as Chromium
received them, its fetches), holds no hidden card. People who chose English or Traditional Chinese
see the Mini App in it. A forged initData is refused. Screenshots go to $PAIJU_ARTIFACTS (else
paiju-artifacts in the temp folder)."""

import json
import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from bot.display.views.common import coins
from tests.process.browser.sandbox_page import (
    ARTIFACTS,
    CHECK_OR_CALL,
    DESKTOP,
    PHONE,
    Person,
    require_chromium,
    theme_of,
    use_theme,
)

require_chromium()

LIVE = 5_000  # ms: a pushed update shows long before this
TABLE = 30_000  # ms: the group's table message, edited within the group's share of Telegram's limits
BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(23, 33, 43)"}  # the Mini App's, by theme


@pytest.fixture(scope="module")
def two_pages(browser, sandbox_url):
    context = browser.new_context(viewport=PHONE)
    pages = [context.new_page(), context.new_page()]
    for opened in pages:
        opened.goto(f"{sandbox_url}?theme=light")
        expect(opened.locator("html")).to_have_attribute("data-theme", "light")
    yield pages
    context.close()


class InFront(Person):
    """A person acting in one of the two pages: it comes to the front first, as a click would."""

    def act_as(self, name, where="group"):
        self.page.bring_to_front()
        if self.page.locator("#miniapp").is_visible():  # on a phone it covers the chat: close it first
            self.page.click("#miniapp-close")
        super().act_as(name, where)

    def press(self, label):
        self.page.bring_to_front()
        super().press(label)


def shoot(page, moment, size=None):
    """A screenshot of the page in the theme it shows, as an artifact (switching it would reload
    an open Mini App)."""
    theme = theme_of(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for frame in page.frames:  # the sandbox's toast and the Mini App's
        frame.evaluate("(t => { if (t) t.hidden = true; })(document.getElementById('toast'))")
    if size:
        page.set_viewport_size(size)
    page.screenshot(path=str(ARTIFACTS / f"miniapp-{theme}-{moment}.png"))
    if size:
        page.set_viewport_size(PHONE)


# What is behind each of the countdown's texts (its label, its digits), sampled across each: the
# topmost element under it that paints a background; and where the track is. Measured with the time
# nearly up (the track's short, orange part under half of it) and with it all left.
READ_CLOCK = """low => {
  const clock = document.getElementById("clock"), bar = document.getElementById("clock-bar");
  const was = [clock.className, bar.style.width];
  clock.classList.toggle("low", low);
  bar.style.width = low ? "20%" : "100%";
  const box = (node) => {
    const r = node.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  const parts = ["clock-label", "clock-text"].map((id) => {
    const node = document.getElementById(id), [left, top, right, bottom] = box(node);
    const behind = [];
    for (let i = 1; i < 10; i++) {
      const under = document.elementsFromPoint(left + ((right - left) * i) / 10, (top + bottom) / 2);
      const painted = under.find((e) => { const style = getComputedStyle(e);
        return style.backgroundColor !== "rgba(0, 0, 0, 0)" || style.backgroundImage !== "none"; });
      const style = getComputedStyle(painted);
      behind.push({ id: painted.id, colour: style.backgroundColor, image: style.backgroundImage });
    }
    const colour = getComputedStyle(node).color;
    return { id, text: node.textContent, colour, box: [left, top, right, bottom], behind };
  });
  const track = [box(document.getElementById("clock-track")), box(bar)];
  [clock.className, bar.style.width] = was;
  return { parts, track };
}"""


def channels(colour):
    return [float(part) for part in re.findall(r"[\d.]+", colour)]


def contrast(one, other):
    """WCAG 2's contrast ratio of two opaque sRGB colours ("rgb(r, g, b)")."""

    def luminance(colour):
        linear = [
            c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
            for c in channels(colour)[:3]
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def overlap(one, other):
    return one[0] < other[2] and other[0] < one[2] and one[1] < other[3] and other[1] < one[3]


def clock_is_readable(frame):
    """The countdown's label and digits: at least 4.5:1 against whatever is behind them, with the
    time nearly up and with it all left; never over the track."""
    for low in (False, True):
        seen = frame.evaluate(READ_CLOCK, low)
        for part in seen["parts"]:
            assert part["text"], part
            for behind in part["behind"]:
                assert behind["image"] == "none" and len(channels(behind["colour"])) == 3, (part, behind)
                ratio = contrast(part["colour"], behind["colour"])
                assert ratio >= 4.5, f"{part['id']} {part['colour']} on {behind}: {ratio:.2f}:1"
            for track in seen["track"]:
                assert not overlap(part["box"], track), (part, seen["track"])


# The boxes of the viewer's cards, of the action bar and of each seat's cards, in the Mini App.
BOXES = """() => {
  const box = (node) => {
    const r = node.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  const cards = (row) => [...row.querySelectorAll(".card")].map(box);
  const rows = [...document.querySelectorAll(".seat .cards")].map(cards);
  const mine = [...document.querySelectorAll("#mine .card")].map(box);
  return { mine, rows, bar: box(document.getElementById("actions")), width: innerWidth, height: innerHeight };
}"""

# A full showhand table drawn in the Mini App as the server's view would have it, near the end of a
# game: four others and the viewer with five cards each, the feed, the last results, every betting
# button and the slider, the clock under half its time.
CROWD = """() => {
  const mine = view.seats.find((seat) => seat.me);
  const five = ["?", "AS", "KH", "QD", "JC"];
  const others = ["阿明", "小红", "老王", "阿华"].map((name, i) => ({ ...mine, person: 900 + i, name,
    me: false, turn: i === 0, banker: false, lead: i === 0, cards: five, hole: true, total: 2300,
    folded: false, status: "" }));
  const button = (action, arg, label, style) => ({ action, arg, label, style });
  view = { ...view, phase: "betting", in_round: true, pot: 11500, turn_seconds: 30,
    deadline: Date.now() / 1000 + offset + 12,
    seats: [...others, { ...mine, turn: true, cards: ["10H", "AH", "KS", "QC", "JD"], hole: true,
      total: 2300 }],
    feed: ["阿明 下注 100", "小红 跟注", "老王 加注 2,200（本轮到 2,300）"],
    actions: [button("call", null, "跟注 100", "primary"), button("raise", 2400, "加注 100", "primary"),
      button("raise", 2500, "加注 200", "primary"), button("raise", 4600, "加注 2,300", "primary"),
      button("fold", null, "弃牌", "danger"),
      { ...button("leave", null, "🏃 逃跑", "escape"), escape: true }],
    amount: { action: "raise", min: 2400, max: 4600, step: 100, own: 2300, label: "加注 {pay}" } };
  render();
}"""


def my_cards_clear_of_the_bar(frame):
    """At a phone's size, the viewer's cards are on the screen, above the action bar, never under it."""
    seen = frame.evaluate(BOXES)
    # (the Mini App's frame is the phone's 390 px less the sandbox page's own scroll bar)
    assert PHONE["width"] - 20 <= seen["width"] <= PHONE["width"] and seen["mine"], seen
    for card in seen["mine"]:
        assert not overlap(card, seen["bar"]), (card, seen["bar"])
        assert card[1] >= 0 and card[3] <= seen["bar"][1], (card, seen["bar"])


def a_crowded_table(page, frame):
    """Five cards a seat stay on one row at a phone's width; the bar stays clear of the viewer's."""
    page.bring_to_front()  # (a page behind the other does not ease the track's width)
    frame.evaluate(CROWD)
    seen = frame.evaluate(BOXES)
    assert len(seen["rows"]) == 5, seen["rows"]
    for row in seen["rows"]:
        assert len(row) == 5 and max(card[1] for card in row) - min(card[1] for card in row) < 1, row
        assert all(card[2] - card[0] >= 24 for card in row), row  # scaled, still readable
    my_cards_clear_of_the_bar(frame)
    clock_is_readable(frame)
    expect(page.frame_locator("#miniapp-frame").locator("#clock-label")).to_have_text("下注")
    page.wait_for_timeout(600)  # the track's width, ticked and eased to the time left
    shoot(page, "7-crowded")


def test_a_muxi_round_half_in_the_mini_app(two_pages, sandbox_url):
    group_page, app_page = two_pages
    group, player = InFront(group_page), InFront(app_page)
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
    expect(app.locator("#title")).to_have_text("🀄 木虱 · 第 1 局")  # the round to come
    expect(app.locator("#clock-text")).to_have_text(re.compile(r"^\d+:\d\d$"))  # the lobby's minutes: 4:56
    background = app.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")
    assert background == BACKGROUND["light"], background
    app.locator('#actions button[data-action="join"]').click()
    expect(app.locator("#mine .seat .tag.me")).to_have_count(1, timeout=LIVE)
    group.sees("阿强 ⏳ 未准备", timeout=LIVE)  # the Mini App's action, in the group's table message

    app.locator('#actions button[data-action="ready"]').click()
    for name in ("阿明", "小红"):
        group.act_as(name)
        group.press("开始")
    expect(app.locator("#others .seat.turn .name")).to_have_text("阿明", timeout=LIVE)  # pushed
    expect(app.locator("#clock-text")).to_have_text(re.compile(r"^\d+ 秒$"))
    expect(app.locator("#clock-label")).to_have_text("叫庄：谁来当庄")  # what is being decided
    clock_is_readable(app_frame(app_page))
    first = app.locator("#clock-text").inner_text()
    expect(app.locator("#clock-text")).not_to_have_text(first, timeout=3_000)  # it ticks
    group.act_as("阿明")
    group.press("当庄")

    expect(app.locator("#others .seat .tag").first).to_have_text("庄", timeout=LIVE)
    mine = app.locator("#mine .card")
    expect(mine).to_have_count(2)
    assert app.locator("#mine .card.back").count() == 0, "my own cards face up"
    expect(app.locator("#clock-label")).to_have_text("补牌：补或不补")
    expect(app.locator("#others .seat").first.locator(".card.back")).to_have_count(2)  # the banker's, hidden
    my_cards_clear_of_the_bar(app_frame(app_page))
    shoot(app_page, "1-my-turn")
    shoot(app_page, "1-my-turn-desktop", DESKTOP)
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
    shoot(app_page, "2-results")
    a_crowded_table(app_page, app_frame(app_page))


def app_frame(page):
    """The Mini App open in the sandbox's side panel of ``page``."""
    return next(frame for frame in page.frames if "/miniapp/" in frame.url)


def people(page, sandbox_url):
    return {
        person["name"]: person["id"]
        for person in page.request.get(f"{sandbox_url}api/state").json()["people"]
    }


def seen_by(page, sandbox_url, person, table):
    """The table as ``person`` may see it, asked as their Mini App asks (initData signed for them)."""
    init = page.request.get(f"{sandbox_url}api/miniapp?as={person}&table={table}").json()["init_data"]
    answer = page.request.get(
        f"{sandbox_url}miniapp/api/state?table={table}", headers={"X-Telegram-Init-Data": init}
    )
    assert answer.ok, answer.text()
    return answer.json()


class Wire:
    """Everything the Mini App's server sent one page: each message of its event stream, as
    Chromium's network layer received it (the DevTools protocol), and the body of every other API
    answer; and the address of every API request (where no initData may be: access logs keep them)."""

    def __init__(self, page):
        self.stream: list[str] = []
        self.answers = []
        self.urls: list[str] = []
        page.on(
            "request",
            lambda request: self.urls.append(request.url) if "/miniapp/api/" in request.url else None,
        )
        session = page.context.new_cdp_session(page)
        session.on("Network.eventSourceMessageReceived", lambda event: self.stream.append(event["data"]))
        session.send("Network.enable")
        page.on("response", lambda response: self._answer(response))

    def _answer(self, response):
        if "/miniapp/api/" in response.url and "/api/events" not in response.url:
            self.answers.append(response)

    def payloads(self):
        return self.stream + [answer.text() for answer in self.answers]


def test_a_showhand_game_half_in_the_mini_app_and_a_spectators_wire(two_pages, sandbox_url, browser):
    group_page, app_page = two_pages
    for page in two_pages:
        use_theme(page, "dark")
    group, player = InFront(group_page), InFront(app_page)
    ids = people(group_page, sandbox_url)
    group.act_as("阿明")
    group.say("/cancel")  # the muxi table is still open between rounds: one table per group
    expect(group_page.locator("#messages")).to_contain_text(re.compile("管理员已结束本桌|本群现在没有牌桌"))
    group.say("/newgame showhand")
    group.sees("梭哈 · 等待开局")
    player.act_as("阿强")
    player.press("🀄 打开牌桌")
    app = app_page.frame_locator("#miniapp-frame")
    expect(app.locator("#title")).to_contain_text("梭哈", timeout=LIVE)
    expect(app.locator("body")).to_have_css("background-color", BACKGROUND["dark"])
    app.locator('#actions button[data-action="join"]').click()
    group.sees("阿强 ⏳ 未准备", timeout=TABLE)
    app.locator('#actions button[data-action="ready"]').click()
    frame = app_frame(app_page)
    table = frame.evaluate("view.table")

    # A spectator (小红, in the group, not seated) opens the Mini App in a page of her own.
    spectator_context = browser.new_context(viewport=PHONE)
    try:
        spectator_page = spectator_context.new_page()
        wire = Wire(spectator_page)
        spectator_page.goto(f"{sandbox_url}?theme=dark")
        expect(spectator_page.locator("html")).to_have_attribute("data-theme", "dark")
        spectator = InFront(spectator_page)
        spectator.act_as("小红")
        spectator.press("🀄 打开牌桌")
        watched = spectator_page.frame_locator("#miniapp-frame")
        expect(watched.locator("#banner")).to_contain_text("旁观", timeout=LIVE)

        group.act_as("阿明")
        group.press("开始")
        expect(app.locator("#mine .seat .card")).to_have_count(2, timeout=LIVE)  # pushed: the game began
        holes = {
            name: seen_by(group_page, sandbox_url, ids[name], table)["seats"] for name in ("阿明", "阿强")
        }
        holes = {
            name: next(seat["cards"][0] for seat in seats if seat["me"]) for name, seats in holes.items()
        }
        assert all(hole != "?" for hole in holes.values()), holes
        expect(watched.locator("#others .seat")).to_have_count(2, timeout=LIVE)
        expect(watched.locator(".card.back")).to_have_count(2)  # each face-down card, as its back
        titles = watched.locator("svg.card title").all_inner_texts()
        assert not set(holes.values()) & set(titles), titles
        shoot(spectator_page, "3-spectator")

        played_slider = False
        for _ in range(20):
            now = frame.evaluate("view")
            if now["phase"] != "betting":
                break
            if next(seat for seat in now["seats"] if seat["turn"])["me"]:
                expect(app.locator("body")).to_have_attribute("data-my-turn", "1")  # (watching.js: told here)
                expect(app.locator("#turn")).to_have_text("轮到你了")
                if now["amount"] and not played_slider:  # an amount the buttons do not offer
                    played_slider = True
                    amount = now["amount"]
                    button = app.locator(f'#actions button[data-action="{amount["action"]}-amount"]')
                    presets = [action["label"] for action in now["actions"]]
                    assert button.inner_text() not in presets, "the slider's button repeats no preset"
                    chosen = min(amount["min"] + 2 * amount["step"], amount["max"])
                    app.locator("#amount").evaluate(
                        "(s, v) => { s.value = v; s.dispatchEvent(new Event('input')); }", str(chosen)
                    )
                    # A bet or a raise names what it puts in (下注 …, 加注 …).
                    named = chosen - amount["own"]
                    expect(button).to_contain_text(coins(named))
                    expect(app.locator("#clock-label")).to_have_text("下注")
                    clock_is_readable(frame)
                    my_cards_clear_of_the_bar(frame)
                    shoot(app_page, "4-showhand-slider")
                    button.click()
                else:
                    app.locator('#actions [data-action="check"], #actions [data-action="call"]').first.click()
                frame.wait_for_function("v => view.version > v", arg=now["version"], timeout=LIVE)
                me = next(seat for seat in frame.evaluate("view.seats") if seat["me"])
                if "total" in me:  # the same game still: the group's table shows what he put in
                    group.sees(re.compile(f"阿强 .*已下 {coins(me['total'])}"), timeout=TABLE)
            else:
                group.act_as("阿明")
                group.press(next(label for label in group.last_buttons() if CHECK_OR_CALL.match(label)))
                frame.wait_for_function("v => view.version > v", arg=now["version"], timeout=LIVE)  # pushed
                his = next(seat for seat in frame.evaluate("view.seats") if seat["name"] == "阿明")
                if "total" in his:  # the same game still: the Mini App shows what he put in
                    expect(app.locator(f'#others .seat[data-person="{ids["阿明"]}"] .money')).to_have_text(
                        f"已下 {coins(his['total'])}"
                    )
                    # and what he did, last in the feed of the game's moves (a new card dealt
                    # after it is marked after it)
                    moves = app.locator("#feed li").filter(has_not_text="🃏")
                    expect(moves.last).to_contain_text(re.compile("阿明 (过牌|跟注)"))
        assert played_slider, "the slider was offered at least once"
        expect(app.locator("#results .line")).to_have_count(2, timeout=LIVE)
        expect(app.locator("#results .hand").first).not_to_be_empty()
        group.sees("梭哈 · 第 1 局 · 结算", timeout=TABLE)
        expect(watched.locator("#results .line")).to_have_count(2, timeout=LIVE)
        shoot(app_page, "5-showhand-results")
        a_crowded_table(app_page, frame)

        # On the wire: no hidden card in anything the spectator was sent while the game went on.
        payloads = wire.payloads()
        during = [text for text in payloads if json.loads(text).get("phase") == "betting"]
        assert len(during) >= 4, payloads
        for text in during:
            for name, hole in holes.items():
                assert json.dumps(hole) not in text, f"the spectator was sent {name}'s face-down {hole}"
            assert '"deck"' not in text and "salt" not in text
            assert all(seat["cards"][0] == "?" for seat in json.loads(text)["seats"])
        # The stream was opened with a ticket: no address the page asked for holds its initData.
        assert any("/api/events?" in url and "ticket=" in url for url in wire.urls), wire.urls
        assert not any(word in url for url in wire.urls for word in ("init=", "hash", "auth_date", "user")), (
            wire.urls
        )
    finally:
        spectator_context.close()


LANGUAGES = {  # what each sees: the language button, its answer, the Mini App's banner and results
    "English": ("✅ Language set to English", "en", "You are watching", "Last round · #1"),
    "繁體中文": ("✅ 已切換為繁體中文", "zh-TW", "你在旁觀", "上局結果 · 第 1 局"),
}
NOT_IN = {"English": re.compile("[\u4e00-\u9fff]"), "繁體中文": re.compile("[对两顺铁芦]")}  # hands' names


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_mini_app_speaks_the_language_each_person_chose(two_pages, sandbox_url, language):
    """The group's table is in Simplified Chinese; someone who chose English or Traditional Chinese
    (/language in their DM) sees the Mini App, the last show-down's hands included, in theirs."""
    _, page = two_pages
    person = InFront(page)
    newcomer = {"English": "Lee", "繁體中文": "阿華"}[language]
    added = page.request.post(f"{sandbox_url}api/people", data={"name": newcomer})
    assert added.ok, added.text()
    expect(page.locator(f'button.person[data-person="{newcomer}"]')).to_have_count(1, timeout=LIVE)
    person.act_as(newcomer, "dm")
    person.say("/language")
    person.press(language)
    answer, lang, watching, last_round = LANGUAGES[language]
    person.sees(answer)
    person.act_as(newcomer)
    person.press("🀄 打开牌桌")  # the table message is the group's: Simplified Chinese
    app = page.frame_locator("#miniapp-frame")
    expect(app.locator("#banner")).to_have_text(watching, timeout=LIVE)
    expect(app.locator("html")).to_have_attribute("lang", lang)
    expect(app.locator("#results h3")).to_have_text(last_round)
    hands = app.locator("#results .hand").all_inner_texts()
    assert hands and all(hands), hands
    assert not any(NOT_IN[language].search(hand) for hand in hands), hands
    shoot(page, f"6-{lang}")
    if language == "English":  # the sandbox's theme switch re-themes the open Mini App, as Telegram does
        other = BACKGROUND["light" if theme_of(page) == "dark" else "dark"]
        page.set_viewport_size(DESKTOP)  # (on a phone the open Mini App covers the switch)
        page.click("#theme")
        expect(page.frame_locator("#miniapp-frame").locator("body")).to_have_css("background-color", other)
        page.click("#theme")
        page.set_viewport_size(PHONE)
        expect(page.frame_locator("#miniapp-frame").locator("#banner")).to_have_text(watching, timeout=LIVE)


def test_a_table_that_ends_shows_its_summary_card(two_pages):
    """The bot's owner (🔑 in the sandbox) cancels the table the showhand game was played at: the
    group gets its 总结算, whose button opens the card in the Mini App, the viewer's line marked (issue
    49, point 5): a phone's screen, in both themes."""
    group_page, app_page = two_pages
    group, player = InFront(group_page), InFront(app_page)
    group.act_as("阿明")
    group.say("/cancel")
    group.sees("总结算", timeout=TABLE)
    player.act_as("阿强")
    player.press("📱 总结算卡片")
    app = app_page.frame_locator("#miniapp-frame")
    card = app.locator("#summary")
    expect(card).to_be_visible(timeout=LIVE)
    expect(card.locator("h3")).to_contain_text("总结算")
    expect(card.locator(".line.me")).to_have_count(1)
    expect(card).to_contain_text("大赢家")
    expect(app.locator("#felt")).to_be_hidden()  # (no empty table under the card)
    for theme in ("dark", "light"):
        use_theme(app_page, theme)
        expect(app.locator("#summary")).to_be_visible(timeout=LIVE)
        shoot(app_page, "8-summary")


def test_a_forged_init_data_is_refused(browser, sandbox_url):
    """In a page of its own: every answer it gets is a refusal (no other page's answers counted)."""
    forged = urlencode(
        {"tgWebAppData": "auth_date=1&user=%7B%22id%22%3A1001%7D&start_param=t1&hash=" + "0" * 64}
    )
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        answers = []
        page.on("response", lambda answer: answers.append(answer.status) if "/api/" in answer.url else None)
        page.goto(f"{sandbox_url}miniapp/#{forged}")
        expect(page.locator("body")).to_have_attribute("data-refused", "1", timeout=LIVE)
        expect(page.locator("#banner")).to_be_visible()
        assert answers and set(answers) <= {401}, answers
        assert page.locator(".card").count() == 0
    finally:
        context.close()
