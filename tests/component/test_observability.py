"""Running it for real, in process: the new settings, what the metrics count, what health says."""

from __future__ import annotations

import asyncio
import logging
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from prometheus_client import generate_latest

from bot.ops import health as health_module
from bot.ops.health import Health
from bot.ops.metrics import Metrics
from bot.send.rate_policy import Parcel, Priority
from bot.send.sender import SENDING
from bot.settings import Settings, SettingsError
from faketg.harness import GROUP
from tests.component.decks import stack


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def sent(**params: object) -> SimpleNamespace:
    """What the request layer passes on: the request's parameters."""
    return SimpleNamespace(parameters=params)


# -- settings ---------------------------------------------------------------------------------------


def test_polling_with_no_server_unless_asked(tmp_path):
    settings = Settings.from_env({"TELEGRAM_BOT_TOKEN": "1:x"}, tmp_path / "none")
    assert settings.webhook_url is None and not settings.serves_http
    assert (settings.metrics, settings.log_format, settings.backup_dir, settings.backup_keep_days) == (
        "off",
        "text",
        None,
        7,
    )
    served = Settings.from_env({"PAIJU_HTTP_PORT": "9100", "PAIJU_METRICS": "public"}, tmp_path / "none")
    assert served.serves_http and served.port == 9100 and served.http_host == "127.0.0.1"


def test_a_webhook_serves_on_the_default_port_at_the_address_path(tmp_path):
    settings = Settings.from_env(
        {"PAIJU_WEBHOOK_URL": "https://bot.example.com/paiju/updates", "PAIJU_WEBHOOK_SECRET": "s3cret_-X"},
        tmp_path / "none",
    )
    assert settings.serves_http and settings.port == 8080 and settings.webhook_path == "/paiju/updates"
    assert "s3cret_-X" not in repr(settings)
    bare = Settings.from_env({"PAIJU_WEBHOOK_URL": "https://bot.example.com"}, tmp_path / "none")
    assert bare.webhook_path == "/" and bare.webhook_secret is None


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("PAIJU_WEBHOOK_URL", "ftp://bot.example.com/x", "https://"),
        ("PAIJU_WEBHOOK_SECRET", "not allowed!", "A-Z, a-z, 0-9, _ and -"),
        ("PAIJU_HTTP_PORT", "0", "between 1 and 65535"),
        ("PAIJU_METRICS", "yes", "off, local, public"),
        ("PAIJU_LOG_FORMAT", "xml", "text, json"),
        ("PAIJU_BACKUP_KEEP_DAYS", "0", "between 1 and 3650"),
    ],
)
def test_a_bad_new_setting_is_named(tmp_path, name, value, says):
    with pytest.raises(SettingsError, match=name) as caught:
        Settings.from_env({name: value}, tmp_path / "none")
    assert says in str(caught.value)


def test_every_setting_is_in_env_example_with_its_default_and_in_the_readme():
    root = Path(__file__).resolve().parents[2]
    read = set(re.findall(r'get\("((?:PAIJU|TELEGRAM)_[A-Z_]+)"', (root / "bot/settings.py").read_text()))
    example = (root / ".env.example").read_text()
    listed = set(re.findall(r"^([A-Z_]+)=", example, re.MULTILINE))
    assert read == listed
    readme = (root / "README.md").read_text()
    assert [name for name in read if f"| `{name}` |" not in readme] == []
    assert Settings.from_env({}, root / ".env.example") == Settings(token="")


# -- metrics ----------------------------------------------------------------------------------------


def test_each_bot_counts_in_its_own_registry():
    first, second = Metrics(), Metrics()  # two bots in one process: no series registered twice
    first.answered("sendMessage", sent(chat_id=-100), 200)
    assert first.requests.labels("sendMessage", "direct")._value.get() == 1
    assert second.requests.labels("sendMessage", "direct")._value.get() == 0
    assert b"paiju_bot_api_requests_total" in generate_latest(first.registry)


def test_requests_by_method_and_priority_429s_by_scope_and_the_time_to_answer_a_press():
    clock = Clock()
    metrics = Metrics(clock)
    metrics.update_received(SimpleNamespace(callback_query=SimpleNamespace(id="q1"), message=None))
    clock.now += 0.3
    metrics.answered("answerCallbackQuery", sent(callback_query_id="q1"), 200)
    assert metrics.press_answer._sum.get() == pytest.approx(0.3)
    assert metrics.updates.labels("callback_query")._value.get() == 1
    assert metrics.last_answer == clock.now

    job = Parcel(-100, ("t", 1), Priority.ACT, since=clock.now)
    token = SENDING.set(job)
    try:
        metrics.answered("sendMessage", sent(chat_id=-100), 429)
        metrics.answered("editMessageText", sent(chat_id=5), 429)
    finally:
        SENDING.reset(token)
    metrics.answered("getMe", None, 429)
    assert metrics.requests.labels("sendMessage", "act")._value.get() == 1
    counted = [metrics.rate_limited.labels(scope)._value.get() for scope in ("group", "private", "none")]
    assert counted == [1, 1, 1]
    assert metrics.last_answer == clock.now, "a 429 is no success"


async def test_a_round_in_process_moves_the_counters(bot):
    metrics: Metrics = bot.application.bot_data.metrics
    stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H")
    d = bot.driver
    await d.send(1, GROUP, "/newgame muxi")
    await d.press(2, GROUP, "加入")
    await d.press(1, GROUP, "开始")
    await d.press(2, GROUP, "开始")
    await d.press(1, GROUP, "当庄")
    await metrics.refresh(bot.runtime)
    assert metrics.tables.labels("muxi", "draw")._value.get() == 1
    assert metrics.escrow._value.get() == 0  # muxi pays at the show-down: nothing held
    cap = bot.runtime.presenter.sender.limits.new_per_second  # (the tests' fake Telegram: none that binds)
    assert metrics.new_budget._value.get() == (math.inf if cap is None else cap)
    await d.press(2, GROUP, "补牌")
    await d.press(1, GROUP, "补牌")
    await metrics.refresh(bot.runtime)
    await metrics.refresh(bot.runtime)  # a round is counted once
    assert metrics.rounds.labels("muxi")._value.get() == 1
    assert metrics.updates.labels("callback_query")._value.get() == 6
    assert metrics.updates.labels("message")._value.get() == 1
    assert metrics.delivery.labels("act")._sum.get() >= 0 and _count(metrics.delivery, "act") >= 2
    assert _count(metrics.writes) >= 6
    assert metrics.tables.labels("muxi", "lobby")._value.get() == 1 and len(_series(metrics.tables)) == 1


def _count(histogram, *labels) -> float:
    series = histogram.labels(*labels) if labels else histogram
    return next(s.value for s in series.collect()[0].samples if s.name.endswith("_count"))


def _series(gauge) -> list:
    return [sample for sample in gauge.collect()[0].samples]


# -- health -----------------------------------------------------------------------------------------


class Store:
    """What health asks of the store: a write, which may fail or wait."""

    def __init__(self) -> None:
        self.error: Exception | None = None
        self.gate: asyncio.Event | None = None
        self.writes = 0

    async def probe_write(self) -> None:
        self.writes += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.error is not None:
            raise self.error


def runtime_of(store: Store) -> SimpleNamespace:
    return SimpleNamespace(store=store, tables=SimpleNamespace(by_chat={-1: object(), -2: object()}))


async def test_healthy_until_telegram_is_silent_for_a_minute():
    clock = Clock()
    metrics = Metrics(clock)
    health = Health(metrics, clock)
    runtime = runtime_of(Store())
    healthy, report = await health.check(runtime)
    assert not healthy and report["telegram_answered_seconds_ago"] is None  # nothing answered yet
    metrics.answered("getMe", None, 200)
    clock.now += 30
    healthy, report = await health.check(runtime)
    assert healthy, report
    assert report == {
        "status": "ok",
        "uptime_seconds": 30.0,
        "open_tables": 2,
        "database_writable": True,
        "telegram_answered_seconds_ago": 30.0,
    }
    clock.now += 31
    healthy, report = await health.check(runtime)
    assert not healthy and report["problems"] == ["Telegram has not answered for more than 60 s"]


async def test_unhealthy_while_a_write_fails_or_waits(monkeypatch):
    monkeypatch.setattr(health_module, "WRITE_PATIENCE", 0.05)
    clock = Clock()
    metrics = Metrics(clock)
    metrics.answered("getMe", None, 200)
    health, store = Health(metrics, clock), Store()
    store.error = OSError("disk I/O error")
    healthy, report = await health.check(runtime_of(store))
    assert not healthy and report["database_writable"] is False
    assert report["problems"] == ["the database cannot be written: OSError: disk I/O error"]

    store.error, store.gate = None, asyncio.Event()  # the database locked by someone else
    for _ in range(2):
        healthy, report = await health.check(runtime_of(store))
        assert not healthy and "a write has waited more than 0.05 s" in report["problems"][0]
    assert store.writes == 2, "a check waits on the write still waiting rather than queue another"
    store.gate.set()
    healthy, _ = await health.check(runtime_of(store))
    assert healthy


async def test_a_quiet_bot_asks_telegram_itself_and_logs_a_webhook_error_once(caplog):
    clock = Clock()
    metrics = Metrics(clock)
    health = Health(metrics, clock)
    failed_at = datetime(2025, 3, 1, tzinfo=UTC)
    asked: list[str] = []

    async def get_me():
        asked.append("getMe")

    async def get_webhook_info():
        asked.append("getWebhookInfo")
        return SimpleNamespace(
            last_error_date=failed_at, last_error_message="Connection refused", pending_update_count=3
        )

    bot = SimpleNamespace(get_me=get_me, get_webhook_info=get_webhook_info)
    metrics.answered("getUpdates", None, 200)
    await health.keep_in_touch(bot, webhook=False)
    assert asked == [], "it heard from Telegram just now"
    clock.now += health_module.PING_AFTER
    await health.keep_in_touch(bot, webhook=False)
    with caplog.at_level(logging.WARNING, logger="bot.ops.health"):
        await health.keep_in_touch(bot, webhook=True)
        await health.keep_in_touch(bot, webhook=True)
    assert asked == ["getMe", "getWebhookInfo", "getWebhookInfo"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "bot.ops.health"]
    assert warnings == ["Telegram could not deliver updates to the webhook (3 waiting): Connection refused"]
