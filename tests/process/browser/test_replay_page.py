"""The replay page (回放) in Chromium at a phone's size (390 px), in Telegram's light and dark
themes and the three languages: a muxi round played in the fake Telegram, then opened as its
"▶ 回放" link opens the Mini App (initData with ``start_param=r<table>_<round>``). The steps go
back and forth with ◀ ▶, play on their own about one a second, and nothing is wider than the
phone. Screenshots go to $PAIJU_ARTIFACTS (else paiju-artifacts in the temp folder)."""

from __future__ import annotations

import json
import time
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import async_playwright, expect

from bot.display.views.common import MINI_APP
from bot.web.miniapp.auth import signed_for
from bot.web.server import build_web_app
from faketg.harness import TOKEN, make_world, start_bot, stop_bot
from tests.component.miniapp_client import URL
from tests.component.test_replay import play_a_muxi_round, play_a_showhand_game
from tests.process.browser.sandbox_page import ARTIFACTS, CHROMIUM, FLAGS, PHONE, require_chromium

require_chromium()

_LIGHT = {"bg_color": "#ffffff", "text_color": "#000000", "hint_color": "#707579"}
_DARK = {"bg_color": "#17212b", "text_color": "#f5f5f5", "hint_color": "#708499"}
THEME_PARAMS = {  # as Telegram sends them (the sandbox's, bot/web/sandbox/static/sandbox.js)
    "light": _LIGHT
    | {"button_color": "#3390ec", "button_text_color": "#ffffff", "secondary_bg_color": "#f4f4f5"},
    "dark": _DARK
    | {"button_color": "#5288c1", "button_text_color": "#ffffff", "secondary_bg_color": "#232e3c"},
}
WORDS = {  # (language code, the play button, the deal step)
    "zh-hans": ("▶ 播放", "🃏 发牌"),
    "zh-hant": ("▶ 播放", "🃏 發牌"),
    "en": ("▶ Play", "🃏 The deal"),
}


@pytest.fixture
async def serving(tmp_path):
    """A bot serving the Mini App over real HTTP: (bot, the Mini App's address)."""
    bot = await start_bot(make_world(), str(tmp_path / "replay-page.sqlite3"), webapp_url=URL)
    client = TestClient(TestServer(build_web_app(bot.application, bot.runtime.settings)))
    await client.start_server()
    yield bot, str(client.make_url("/miniapp/"))
    await client.close()
    await stop_bot(bot)
    MINI_APP.set(None, None)


@pytest.fixture
async def played_round(serving):
    """One muxi round played: (bot, the Mini App's address, table)."""
    bot, base = serving
    return bot, base, await play_a_muxi_round(bot)


def launch_address(base: str, table: int, language: str, theme: str) -> str:
    init = signed_for(2, "小红", TOKEN, time.time(), start_param=f"r{table}_1", language_code=language)
    fragment = f"tgWebAppData={quote(init)}&tgWebAppThemeParams={quote(json.dumps(THEME_PARAMS[theme]))}"
    return f"{base}#{fragment}"


@pytest.mark.parametrize("language", list(WORDS))
async def test_the_replay_reads_on_a_phone_in_both_themes(played_round, language):
    bot, base, table = played_round
    await bot.runtime.preferences.set_person_language(2, "小红", language)  # (as /language does)
    play, deal = WORDS[language]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            for theme in ("light", "dark"):
                page = await browser.new_page(viewport=PHONE)
                await page.goto(launch_address(base, table, language, theme))
                await expect(page.locator("#replay-play")).to_have_text(play)
                await expect(page.locator("#replay-previous")).to_be_disabled()
                await page.click("#replay-next")
                await page.click("#replay-next")
                await expect(page.locator("#turn")).to_have_text(deal)
                mine = page.locator("#mine .card")
                await expect(mine).to_have_count(2)  # my own two cards, face up
                assert await page.locator("#others .card.back").count() == 2  # the banker's, face down
                await page.click("#replay-previous")
                await expect(page.locator("#turn")).not_to_have_text(deal)
                await page.click("#replay-next")
                await page.screenshot(path=str(ARTIFACTS / f"replay-{language}-{theme}-deal.png"))
                await page.click("#replay-play")  # about a step a second, to the results
                await expect(page.locator("#results")).to_be_visible(timeout=8_000)
                await expect(page.locator("#replay-play")).to_have_text(play)  # stopped at the end
                await expect(page.locator("#replay-next")).to_be_disabled()
                assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
                assert await page.locator("#proof code").text_content() != ""
                background = await page.evaluate("getComputedStyle(document.body).backgroundColor")
                assert background == ("rgb(255, 255, 255)" if theme == "light" else "rgb(23, 33, 43)")
                await page.screenshot(
                    path=str(ARTIFACTS / f"replay-{language}-{theme}-results.png"), full_page=True
                )
                await page.close()
        finally:
            await browser.close()


async def test_a_forged_replay_link_says_who_cannot_be_told(played_round):
    _, base, table = played_round
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = await browser.new_page(viewport=PHONE)
            forged = signed_for(2, "小红", "654321:OTHER", time.time(), start_param=f"r{table}_1")
            await page.goto(f"{base}#tgWebAppData={quote(forged)}")
            await expect(page.locator("#banner")).to_be_visible()
            assert await page.locator("#replay-play").count() == 0
        finally:
            await browser.close()


async def test_a_showhand_show_down_keeps_five_cards_a_seat_on_one_row(serving):
    bot, base = serving
    table, _ = await play_a_showhand_game(bot)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = await browser.new_page(viewport=PHONE)
            await page.goto(launch_address(base, table, "zh-hans", "dark"))
            await expect(page.locator("#replay-play")).to_be_visible()
            kinds = []
            while (kind := await page.locator("#turn").get_attribute("data-kind")) != "showdown":
                kinds.append(kind)
                assert len(kinds) < 60, f"no show-down step: {kinds}"  # (never a loop without end)
                await page.click("#replay-next")
            rows = await page.evaluate(
                """[...document.querySelectorAll('.seat .cards')].map(row =>
                     [...row.querySelectorAll('.card')].map(card => card.getBoundingClientRect().top))"""
            )
            assert [len(row) for row in rows] == [5, 5]
            assert all(max(row) - min(row) < 1 for row in rows)  # one row each
            assert await page.locator("#others .card.back").count() == 0  # the show-down shows them
            assert "底池" in await page.locator("#stakes").text_content()
            assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            await page.screenshot(path=str(ARTIFACTS / "replay-showhand-dark-showdown.png"))
        finally:
            await browser.close()
