"""Webhook mode, the whole process: the emulator posts the updates to the bot as Telegram does (with
the secret token), a post without the token is refused and changes nothing, and a bot moves from
polling to webhook and back by a restart."""

from __future__ import annotations

import json
import sqlite3

import aiohttp

from faketg.harness import GROUP
from faketg.webhook import SECRET_HEADER
from tests.component.scenarios import open_and_start
from tests.process.e2e.process import TOKEN, WEBHOOK_PATH, storage_check

HANDLED = ["message", "callback_query", "my_chat_member"]


def registration(stage):
    return next(r.params for r in reversed(stage.world.requests) if r.method == "setWebhook")


def open_tables(database):
    with sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM tables WHERE closed = 0").fetchone()[0]


async def test_a_muxi_round_by_webhook_after_polling_and_polling_again(stage):
    bot, emulator = stage.bot, stage.emulator
    await bot.stop()  # the stage's bot polled: now the same database, by webhook
    polled_log = len(bot.log.read_text())
    bot.webhook = True
    bot.extra_env["PAIJU_LOG_FORMAT"] = "json"
    await bot.start()
    registered = registration(stage)
    secret = registered["secret_token"]
    assert registered["url"] == bot.http_url + WEBHOOK_PATH
    assert registered["allowed_updates"] == HANDLED
    assert registered.get("drop_pending_updates") in (None, False)
    assert len(secret) >= 32

    polls = emulator.polls
    people = [1, 2, 3]
    await open_and_start(stage, people, "muxi")
    await stage.driver.press(1, GROUP, "当庄")
    await stage.driver.finish_muxi_round(GROUP, people)
    assert "第 1 局 · 结算" in stage.driver.table_message(GROUP).text
    assert emulator.polls == polls, "every update came by the webhook"
    posts = emulator.webhook.posts
    assert len(posts) >= 2 * len(people)
    assert all(post.status == 200 and post.secret == secret for post in posts)
    await bot.stop()

    log = bot.log.read_text()
    assert TOKEN.split(":")[1] not in log and secret not in log
    lines = log[polled_log:].splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines), "one JSON object a line"
    assert "Traceback" not in log

    bot.webhook = False
    await bot.start()  # polling again: the webhook is deleted before the first getUpdates
    assert emulator.webhook.webhook is None
    await stage.driver.send(1, GROUP, "/newgame muxi")
    assert open_tables(bot.database) == 1
    await bot.stop()
    check = storage_check(bot.database)
    assert check.returncode == 0, check.stdout + check.stderr


async def test_a_post_without_the_secret_token_is_refused_and_changes_nothing(by_webhook):
    stage = by_webhook
    update = stage.world.post(1, GROUP, "/newgame muxi")
    stage.world.updates.remove(update)  # posted by hand below, not by the emulator

    def about_chats():  # (the menu, set in the background, and pings name none)
        return [request for request in stage.world.requests if request.chat_id is not None]

    requests = len(about_chats())
    url = stage.bot.http_url + WEBHOOK_PATH
    async with aiohttp.ClientSession() as http:
        for headers in ({}, {SECRET_HEADER: "not-the-secret-token"}):
            async with http.post(url, json=update, headers=headers) as answer:
                assert answer.status == 403
    assert open_tables(stage.bot.database) == 0
    assert not stage.world.bot_messages(GROUP)
    assert len(about_chats()) == requests, "the bot did nothing about them"

    await stage.driver.send(1, GROUP, "/newgame muxi")  # the same, from Telegram: taken
    assert open_tables(stage.bot.database) == 1
    assert "Traceback" not in stage.bot.log.read_text()
