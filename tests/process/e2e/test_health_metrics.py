"""The bot's HTTP server, the whole process: ``/healthz`` fails while the database cannot be written
and recovers with it; ``/metrics`` parses as Prometheus text and moves when a round is played; the
daily backup is taken at start-up and passes the check."""

from __future__ import annotations

import math
import resource
import sys

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.ops.metrics import GAME_KINDS
from faketg.harness import GROUP, make_world
from tests.component.scenarios import open_and_start
from tests.process.e2e.process import make_stage, processes_of, storage_check
from tests.waiting import until

PEOPLE = [1, 2, 3]


@pytest.fixture
async def served(tmp_path):
    """A polling bot with its HTTP server (metrics on, local) and daily backups in a folder."""
    staged = await make_stage(make_world(), tmp_path)
    staged.bot.extra_env.update(
        PAIJU_HTTP_PORT=str(staged.bot.http_port),
        PAIJU_METRICS="local",
        PAIJU_BACKUP_DIR=str(tmp_path / "backups"),
    )
    await staged.bot.start()
    yield staged
    await staged.bot.stop()
    await staged.emulator.stop()


async def get(stage, path):
    async with aiohttp.ClientSession() as http, http.get(stage.bot.http_url + path) as answer:
        return answer.status, await answer.text()


async def health_is(stage, wanted):
    async def check():
        status, text = await get(stage, "/healthz")
        return (status, text) if status == wanted else None

    return await until(check)


def samples(text):
    """Every sample as {(name, sorted labels): value}."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found, name, **labels):
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.skipif(sys.platform != "linux", reason="limits another process's file size: Linux only")
async def test_healthz_fails_while_the_database_cannot_be_written(served):
    backups = served.bot.database.parent / "backups"
    backup = await until(lambda: list(backups.glob("paiju-*.sqlite3")))
    check = storage_check(backup[0])
    assert check.returncode == 0, check.stdout + check.stderr

    status, text = await get(served, "/healthz")
    assert status == 200, text
    assert '"database_writable": true' in text and '"open_tables": 0' in text

    # Root writes to any file whatever its mode, so the bot's own writes are refused another way:
    # no file of its processes may grow past one byte (as on a full disk, every write fails).
    assert served.bot.process is not None
    processes = processes_of(served.bot.process.pid)
    limits = {pid: resource.prlimit(pid, resource.RLIMIT_FSIZE) for pid in processes}
    for pid, limit in limits.items():
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (1, limit[1]))
    try:
        _, text = await health_is(served, 503)
        assert '"database_writable": false' in text and "the database cannot be written" in text
    finally:
        for pid, limit in limits.items():
            resource.prlimit(pid, resource.RLIMIT_FSIZE, limit)
    _, text = await health_is(served, 200)
    assert '"status": "ok"' in text

    await served.driver.send(1, GROUP, "/newgame muxi")  # and it plays on

    async def one_open() -> bool:  # (once the table is saved: "handled" is the bot falling quiet)
        return '"open_tables": 1' in (await get(served, "/healthz"))[1]

    await until(one_open, "the table it opened counted as open")


async def test_metrics_parse_and_move_when_a_round_is_played(served):
    status, text = await get(served, "/metrics")
    assert status == 200, text
    before = samples(text)
    await open_and_start(served, PEOPLE, "muxi")
    await served.driver.press(1, GROUP, "当庄")
    playing = samples((await get(served, "/metrics"))[1])
    assert sum(v for (name, _), v in playing.items() if name == "paiju_open_tables") == 1
    asked = await served.driver.finish_muxi_round(GROUP, PEOPLE)
    after = samples((await get(served, "/metrics"))[1])

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("paiju_updates_total", kind="callback_query") >= len(PEOPLE) + 2
    assert moved("paiju_updates_total", kind="message") >= 1
    assert moved("paiju_press_answer_seconds_count") >= len(PEOPLE) + 2
    assert moved("paiju_bot_api_requests_total", method="answerCallbackQuery", priority="direct") >= 1
    # the prompt of each person who was asked to choose (the deal is random: a tiangong stands by
    # itself, unasked), at the prompts' priority: a new DM, or an edit of their DM (as timing has it)
    prompts = [
        moved("paiju_bot_api_requests_total", method=method, priority="act")
        for method in ("sendMessage", "editMessageText")
    ]
    assert sum(prompts) >= asked, (prompts, asked)
    assert moved("paiju_delivery_seconds_count", priority="act") >= asked
    assert moved("paiju_rounds_finished_total", game="muxi") == 1
    assert moved("paiju_database_write_seconds_count") >= len(PEOPLE)
    assert value(after, "paiju_bot_api_rate_limited_total", scope="group") == 0
    assert value(after, "paiju_escrow_coins") == 0
    assert value(after, "paiju_new_messages_per_second") == math.inf, "no cap: Telegram set none"
    assert "paiju_sent_as_edit_total" in {name for name, _ in after}
    assert "paiju_send_queue_depth" in {name for name, _ in after}
    # the round's cost (tests/component/test_round_cost_metrics.py checks it request by request)
    spent = {kind: value(after, "paiju_game_requests_total", game="muxi", kind=kind) for kind in GAME_KINDS}
    assert spent["answer"] >= len(PEOPLE) + 2 and spent["group_new"] >= 1 and spent["group_edit"] >= 1
    per_round = {
        kind: value(after, "paiju_requests_per_round", game="muxi", kind=kind) for kind in GAME_KINDS
    }
    assert per_round == spent, "one round settled since the bot started"
    limited = sum(count for kind, count in spent.items() if kind != "answer")
    assert value(after, "paiju_requests_per_round", game="muxi", kind="limited") == limited
