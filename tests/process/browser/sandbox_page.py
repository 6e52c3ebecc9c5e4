"""The sandbox's page as the browser tests drive it: Debian's Chromium and its flags, a phone's and a
desktop's sizes, where screenshots go ($PAIJU_ARTIFACTS, else paiju-artifacts in the temp folder,
never the tracked tree), and ``Person``, acting in the page as one person.
"""

import os
import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("PAIJU_ARTIFACTS") or Path(tempfile.gettempdir()) / "paiju-artifacts")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1000, "height": 900}
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHECK_OR_CALL = re.compile(r"^(过牌|不下注|跟注)")  # a button that keeps a showhand game going
THEMES = ("light", "dark")


def require_chromium() -> None:
    """Skip the calling test module where Debian's Chromium is not installed; CI must have it."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            raise RuntimeError("CI must install Debian's chromium for the browser test (.ci/run does)")
        pytest.skip(
            "Debian's chromium is not installed here (apt-get install chromium)", allow_module_level=True
        )


def theme_of(page: Page) -> str:
    return str(page.locator("html").get_attribute("data-theme"))


def switch_theme(page: Page) -> str:
    """The sandbox's theme switch, pressed (through a popup over it, too): the other theme now,
    as Telegram's re-themes an open Mini App (reloaded in it). The theme it shows now."""
    other = next(theme for theme in THEMES if theme != theme_of(page))
    page.evaluate("document.getElementById('theme').click()")
    expect(page.locator("html")).to_have_attribute("data-theme", other)
    return other


def use_theme(page: Page, theme: str) -> None:
    """The page in ``theme`` (switched to it, if it shows the other)."""
    if theme_of(page) != theme:
        switch_theme(page)


class Person:
    """Acting in the page as one person."""

    def __init__(self, page: Page):
        self.page = page

    @property
    def theme(self) -> str:
        return theme_of(self.page)

    def act_as(self, name, where="group"):
        self.dismiss()
        self.page.click(f'button.person[data-person="{name}"]')
        expect(self.page.locator("button.person.active .name")).to_have_text(name)
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

    def settled(self):
        """Waits until the page has shown the sandbox's state twice from now: what is there now is on
        the screen."""
        now = int(self.page.locator("body").get_attribute("data-refreshed") or 0)
        self.page.wait_for_function(f"Number(document.body.dataset.refreshed) >= {now + 2}")

    def last_buttons(self):
        """The buttons of the newest message that has any."""
        self.settled()
        last = self.page.locator(".msg.bot:has(.kb)").last
        return last.locator(".kb button").all_inner_texts() if last.count() else []

    def chat_text(self):
        return self.page.locator("#messages").inner_text()

    def shoot(self, moment, size=None):
        """A screenshot of the page now in each theme (switched there and back), as artifacts (at
        ``size``, if not the phone's), without the passing toast of a button's answer."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.evaluate("document.getElementById('toast').hidden = true")
        if size:
            self.page.set_viewport_size(size)
        for _ in THEMES:
            self.page.screenshot(path=str(ARTIFACTS / f"sandbox-{self.theme}-{moment}.png"))
            switch_theme(self.page)
        if size:
            self.page.set_viewport_size(PHONE)
