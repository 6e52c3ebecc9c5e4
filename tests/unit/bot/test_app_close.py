"""``bot.app.close``, the last step of every stop: the store is closed whatever failed before it,
and the database's lock is let go only once the store is closed (another bot may then write)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bot import app as botapp
from bot.botdata import BotData
from storage import hold_database, open_store


async def test_a_failing_settle_still_closes_the_store_before_the_lock_goes(tmp_path):
    database = tmp_path / "paiju.sqlite3"
    lock = hold_database(database)
    store = await open_store(database)
    closed_when_released = []
    release = lock.release
    lock.release = lambda: (closed_when_released.append(store.backend.writer.closed), release())

    async def settle():
        raise OSError(28, "No space left on device")

    runtime = SimpleNamespace(wait_background=settle, store=store)
    data = BotData()
    data.runtime, data.store, data.database_lock = runtime, store, lock
    application = SimpleNamespace(bot_data=data)
    with pytest.raises(OSError, match="No space left"):
        await botapp.close(application)
    assert closed_when_released == [True], "the lock went only after the store was closed"
    assert not lock.held
