"""The sandbox in a real browser: Playwright drives Debian's Chromium (headless) through a whole
muxi round and a whole showhand game, acting as several people, and keeps a screenshot of the
muxi results as a test artifact ($PAIJU_ARTIFACTS, else paiju-artifacts in the temp folder)."""

import os
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# A test artifact, never the tracked tree; the README's picture is refreshed on purpose, by copying it.
SCREENSHOT = (
    Path(os.environ.get("PAIJU_ARTIFACTS") or Path(tempfile.gettempdir()) / "paiju-artifacts")
    / "sandbox-muxi.png"
)
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        raise RuntimeError("CI must install Debian's chromium for the browser test (.ci/run does)")
    pytest.skip("Debian's chromium is not installed here (apt-get install chromium)", allow_module_level=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def sandbox_url():
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "--port", str(port), "--fresh"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "open http://" in line, line
    yield re.search(r"http://\S+/", line).group(0)
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def page(sandbox_url):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        opened = browser.new_page(viewport={"width": 1000, "height": 900})
        opened.goto(sandbox_url)
        yield opened
        browser.close()


class Person:
    """Acting in the page as one person."""

    def __init__(self, page: Page):
        self.page = page

    def act_as(self, name, where="group"):
        self.dismiss()
        self.page.click(f'button.person[data-person="{name}"]')
        expect(self.page.locator("button.person.active")).to_have_text(name)
        self.page.click(f"#tab-{where}")
        title = f"我是 {name}" if where == "group" else f"{name} 的私聊"
        expect(self.page.locator("#title")).to_contain_text(title)

    def say(self, text):
        self.page.fill("#text", text)
        self.page.press("#text", "Enter")

    def press(self, label):
        """The newest button labelled exactly ``label``, else the newest whose label holds it."""
        self.dismiss()
        buttons = self.page.locator(".msg.bot .kb button")
        exact = buttons.filter(has_text=re.compile(f"^{re.escape(label)}$"))
        (exact if exact.count() else buttons.filter(has_text=label)).last.click()

    def dismiss(self):
        if self.page.locator("#alert").is_visible():
            self.page.click("#alert-ok")

    def sees(self, text, timeout=10_000):
        expect(self.page.locator("#messages")).to_contain_text(text, timeout=timeout)

    def last_buttons(self):
        self.page.wait_for_timeout(600)  # two refreshes of the page
        last = self.page.locator(".msg.bot").last
        return last.locator(".kb button").all_inner_texts() if last.count() else []

    def group_text(self):
        return self.page.locator("#messages").inner_text()


def take_turns(me, people, pick, finished):
    """Each person in turn looks at their DM and presses what ``pick`` chooses, until ``finished``."""
    for _ in range(12):
        for name in people:
            me.act_as(name, "dm")
            choice = pick(me.last_buttons())
            if choice:
                me.press(choice)
        me.act_as(people[0])
        if finished in me.group_text():
            return
    raise AssertionError(f"{finished!r} never came: {me.group_text()[-500:]}")


def test_a_whole_muxi_round_in_the_browser(page):
    me = Person(page)
    me.act_as("阿明")
    me.say("/newgame muxi")
    me.sees("木虱 · 等待开局")
    for name in ("小红", "阿强"):
        me.act_as(name)
        me.press("加入")
        me.sees(f"{name} ⏳ 未准备")
    for name in ("阿明", "小红", "阿强"):
        me.act_as(name)
        me.press("开始")
    me.sees("叫庄：阿明 是否当庄")
    me.act_as("阿明")
    me.press("当庄")
    me.sees("庄家 阿明")
    me.act_as("小红")
    me.press("看我的牌")
    expect(page.locator("#alert")).to_be_visible()
    expect(page.locator("#alert-text")).to_contain_text("你的牌")
    page.click("#alert-ok")
    take_turns(
        me,
        ["小红", "阿强", "阿明"],
        lambda b: "不补" if "不补" in b else ("补牌" if "补牌" in b else None),
        "结算",
    )
    me.act_as("阿明")
    me.sees("第 1 局 · 结算")
    me.sees("洗牌已公开")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))


def test_a_whole_showhand_game_in_the_browser(page):
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
    me.sees("底牌：")
    for _ in range(12):  # whoever the table names ("轮到 X") checks or calls
        me.act_as("阿明")
        text = me.group_text()
        if "开牌比大小" in text:
            break
        me.act_as(re.findall(r"轮到 (\S+)，", text)[-1])
        me.press("不下注" if "不下注" in me.last_buttons() else "跟注")
    me.sees("开牌比大小")
    me.sees("🏆")
