"""SQLite's writer in a process of its own: killed, signalled, sent what it cannot take, closed."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import subprocess
import sys
import types
from pathlib import Path

import pytest

from faketg.harness import GROUP, start_bot, stop_bot
from storage import StorageError, open_store, writer_process
from storage.writer_process import WriterStopped
from tests.bot.decks import stack
from tests.bot.scenarios import open_and_start
from tests.storage.storage_helpers import python, subprocess_env
from tests.storage.writes import (
    Gate,
    a_row,
    dies_at_start,
    echo,
    gives_a_row,
    held,
    raises_odd,
    renamed,
    returns,
)
from tests.waiting import until

pytestmark = pytest.mark.sqlite_only


def alive(pid: int) -> bool:
    """Running (not ended, nor ended and waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_a_writer_killed_in_its_batch_fails_that_batch_alone_and_the_next_one_starts_anew(
    store, tmp_path
):
    await store.ensure_person(1, "Ming")
    await store.ensure_person(2, "Hong")
    killed = await store.backend.writer.pid()
    gate = Gate.made_in(tmp_path)
    held_write = asyncio.create_task(store._write(held, "UPDATE people SET name = 'held' WHERE id = 1", gate))
    await until(gate.reached, "the write is held, its change made")
    queued = asyncio.create_task(store._write(renamed, 2, "two"))  # waiting for the next batch
    lane = store.backend.commits.lanes[0]
    await until(lambda: len(lane.queue) == 1, "the next write queued")
    os.kill(killed, signal.SIGKILL)
    with pytest.raises(WriterStopped, match="stopped"):
        await held_write
    assert await queued == "two", "the next batch went to a new writer"
    assert await store.backend.writer.pid() != killed
    assert (await store.get_person(1)).name == "Ming", "the killed transaction left nothing"
    assert (await store.check()).ok


async def test_a_writer_that_died_between_batches_is_replaced_before_the_next_one(store):
    killed = await store.backend.writer.pid()
    os.kill(killed, signal.SIGKILL)
    await until(lambda: not store.backend.writer.running, "the bot saw it go")
    assert (await store.ensure_person(1, "Ming"))[1], "nothing was sent to it: the write is not lost"
    assert await store.backend.writer.pid() != killed


async def test_a_stop_signal_to_the_process_group_leaves_the_writer_to_the_bot(store):
    """Ctrl-C and a service manager's stop reach every process of the group: the writer goes on
    until the bot has committed its last writes and closes it."""
    writer = await store.backend.writer.pid()
    for stop in (signal.SIGINT, signal.SIGTERM):
        os.kill(writer, stop)
    assert (await store.ensure_person(1, "Ming"))[1]
    assert await store.backend.writer.pid() == writer


async def test_a_write_that_cannot_be_sent_fails_alone(store):
    def local():  # (a function of no module: it cannot be sent to another process)
        yield

    await store.ensure_person(1, "Ming")
    outcomes = await asyncio.gather(
        store._write(local), store._write(renamed, 1, "one"), return_exceptions=True
    )
    assert isinstance(outcomes[0], StorageError) and "cannot be sent" in str(outcomes[0])
    assert outcomes[1] == "one"
    assert (await store.get_person(1)).name == "one"


async def test_a_write_whose_result_cannot_be_sent_back_fails_alone_and_leaves_nothing(store):
    await store.ensure_person(1, "Ming")
    await store.ensure_person(2, "Hong")
    outcomes = await asyncio.gather(
        store._write(gives_a_row, 1, "one"), store._write(renamed, 2, "two"), return_exceptions=True
    )
    assert isinstance(outcomes[0], StorageError) and "cannot be sent back" in str(outcomes[0])
    assert outcomes[1] == "two"
    assert [(await store.get_person(p)).name for p in (1, 2)] == ["Ming", "two"]


async def test_a_write_the_writer_cannot_import_fails_alone(store):
    here_only = types.ModuleType("here_only")  # a module the writer process has not got
    exec(
        "from storage.sql import run\ndef rename():\n    yield from run(\"UPDATE people SET name = 'x'\")",
        here_only.__dict__,
    )
    sys.modules["here_only"] = here_only
    try:
        await store.ensure_person(1, "Ming")
        outcomes = await asyncio.gather(
            store._write(here_only.rename), store._write(renamed, 1, "one"), return_exceptions=True
        )
    finally:
        del sys.modules["here_only"]
    assert isinstance(outcomes[0], StorageError) and "cannot take" in str(outcomes[0])
    assert outcomes[1] == "one"


async def test_an_error_that_does_not_unpickle_reaches_its_caller_as_a_storage_error(store):
    await store.ensure_person(1, "Ming")
    outcomes = await asyncio.gather(
        store._write(raises_odd), store._write(renamed, 1, "one"), return_exceptions=True
    )
    assert isinstance(outcomes[0], StorageError) and str(outcomes[0]) == "Odd: odd: refused"
    assert outcomes[1] == "one"


BYTES = [b"", b"abc", pickle.dumps((True, "not what was given"))]


async def test_bytes_come_back_as_themselves(store):
    writer = store.backend.writer
    assert [await writer.on_connection(echo, value) for value in BYTES] == BYTES
    assert [await store._write(returns, value) for value in BYTES] == BYTES


async def test_a_call_whose_result_cannot_be_sent_back_fails_alone_and_the_writer_goes_on(store):
    writer = store.backend.writer
    pid = await writer.pid()
    with pytest.raises(StorageError, match="cannot be sent back: Row"):
        await writer.on_connection(a_row)
    assert await writer.pid() == pid


async def test_a_call_too_large_to_send_fails_alone_and_the_next_ones_get_their_own_answers(
    store, monkeypatch
):
    framed = writer_process._framed

    def refusing(frame):  # (a frame of 4 GiB or more, as _framed refuses it)
        if b"too large" in frame:
            raise StorageError("a call or an answer too large to send")
        return framed(frame)

    monkeypatch.setattr(writer_process, "_framed", refusing)
    writer = store.backend.writer
    with pytest.raises(StorageError, match="too large"):
        await writer.on_connection(echo, b"too large")
    assert await asyncio.gather(*(writer.on_connection(echo, n) for n in range(4))) == [0, 1, 2, 3]


async def test_a_call_cancelled_while_a_new_writer_starts_leaves_it_to_the_next_call(store):
    writer = store.backend.writer
    killed = await writer.pid()
    forkserver = int(Path(f"/proc/{killed}/stat").read_text().rpartition(")")[2].split()[1])
    os.kill(killed, signal.SIGKILL)
    await until(lambda: not writer.running, "the bot saw it go")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(writer.pid(), 0.001)  # (cancelled as the new one starts)
    started = await writer.pid()
    assert started != killed

    def writers() -> set[int]:
        return {
            int(stat.parent.name)
            for stat in Path("/proc").glob("[0-9]*/stat")
            if alive(int(stat.parent.name))
            and stat.read_text().rpartition(")")[2].split()[1] == str(forkserver)
        }

    await until(lambda: writers() == {started}, "one writer, the one the calls use")


async def test_a_call_from_another_event_loop_is_refused_not_left_waiting(store):
    writer = store.backend.writer
    with pytest.raises(RuntimeError, match="another event loop"):
        await asyncio.to_thread(asyncio.run, writer.pid())
    assert await writer.pid() > 0


async def test_a_write_to_an_idle_writer_is_sent_in_the_step_that_makes_it(store):
    """Sent before the event loop runs anything else (so the writer commits it meanwhile); a write
    made while it runs waits for the next batch."""
    await store.ensure_person(1, "Ming")
    commits, link = store.backend.commits, store.backend.writer._link
    first = commits.enqueue(renamed, (1, "one"), {})
    assert len(link.waiting) == 1, "sent at once, before any await"
    second = commits.enqueue(renamed, (1, "two"), {})
    assert len(link.waiting) == 1 and commits.lanes[0].queue, "the next batch waits for this one"
    assert await first.outcome == "one" and await second.outcome == "two"
    assert (await store.get_person(1)).name == "two"


async def test_a_write_from_another_event_loop_is_refused_not_left_waiting(store, tmp_path):
    """Whether the writer is idle or busy (a write from there would be committed by this loop's
    lane, and its caller there never woken)."""
    with pytest.raises(RuntimeError, match="another event loop"):
        await asyncio.to_thread(asyncio.run, store.ensure_person(5, "Five"))
    gate = Gate.made_in(tmp_path)
    busy = asyncio.create_task(store._write(held, "UPDATE people SET name = 'held' WHERE id = 0", gate))
    await until(gate.reached, "the writer is busy")
    with pytest.raises(RuntimeError, match="another event loop"):
        await asyncio.to_thread(asyncio.run, store.ensure_person(5, "Five"))
    gate.open()
    assert await busy == "done"
    assert await store.get_person(5) is None
    assert (await store.ensure_person(5, "Five"))[1], "written from the store's own loop"


async def test_a_writer_that_ends_before_it_says_it_started_is_refused_and_joined(tmp_path, monkeypatch):
    started = []
    process = writer_process._CONTEXT.Process

    def recorded(*args, **kwargs):
        started.append(process(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(writer_process, "_serve", dies_at_start)
    monkeypatch.setattr(writer_process._CONTEXT, "Process", recorded)
    with pytest.raises(WriterStopped, match="stopped as it started"):
        await writer_process.WriterProcess.start(str(tmp_path / "paiju.sqlite3"))
    with pytest.raises(ValueError, match="closed"):  # joined, then closed: nothing of it kept
        started[0].is_alive()


def test_a_writer_that_imported_another_copy_of_the_storage_code_does_not_start(tmp_path):
    """The forkserver imports this module from the folder it was started in, not from the bot's
    path: a writer running other code than the bot's refuses to start (the store does not open)."""
    with pytest.raises(StorageError, match="storage code"):
        writer_process._start(
            str(tmp_path / "paiju.sqlite3"), str(tmp_path / "storage" / "writer_process.py")
        )


async def test_the_writer_ends_when_the_bot_is_killed(tmp_path):
    script = tmp_path / "opens.py"
    script.write_text(OPENS)
    child = subprocess.Popen(
        [python(), str(script), str(tmp_path / "paiju.sqlite3")],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        writer = int(await asyncio.to_thread(child.stdout.readline))
        assert alive(writer)
        child.kill()
        await until(lambda: not alive(writer), "the writer ended with the bot")
    finally:
        child.kill()
        child.wait(timeout=10)
        child.stdout.close()


OPENS = """
import asyncio, sys
from storage import open_store

async def main(path):
    store = await open_store(path)
    await store.ensure_person(1, "Ming")
    print(await store.backend.writer.pid(), flush=True)
    await asyncio.sleep(60)

if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
"""


async def test_closing_ends_the_writer_and_a_write_after_is_refused(db_path):
    store = await open_store(db_path)
    await store.ensure_person(1, "Ming")
    writer = await store.backend.writer.pid()
    await store.close()
    assert store.backend.writer.closed
    await until(lambda: not alive(writer), "the writer ended")
    with pytest.raises(ValueError, match="closed"):
        await store._write(renamed, 1, "one")


async def test_the_bot_plays_on_after_its_writer_is_killed(world, database):
    bot = await start_bot(world, database)
    try:
        stack(bot, [2, 1], {1: "3H 4H", 2: "5S 6H"})
        await open_and_start(bot, [1, 2])
        await bot.driver.press(1, GROUP, "当庄")
        killed = await bot.runtime.store.backend.writer.pid()
        os.kill(killed, signal.SIGKILL)
        await until(lambda: not bot.runtime.store.backend.writer.running, "the bot saw it go")
        await bot.driver.press(2, GROUP, "不补")
        await bot.driver.press(1, GROUP, "不补")
        assert "结算" in bot.driver.table(GROUP)
        balances = [await bot.balance(person) for person in (1, 2)]
        assert sum(balances) == 20_000 and balances != [10_000, 10_000], "the round was paid"
        assert (await bot.runtime.store.check()).ok
    finally:
        await stop_bot(bot)
