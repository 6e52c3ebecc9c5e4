"""A chat's pause between rounds (issue 49, point 4) is one of its settings, on SQLite and
PostgreSQL: not chosen (None: the operator's default) until its admins choose one, 0 allowed (no
pause), kept when the group becomes a supergroup."""

import pytest


async def test_a_chat_s_pause_is_saved_and_may_be_none_or_back_to_the_default(store):
    assert (await store.chat_settings(-1)).pause_seconds is None, "not chosen: the operator's default"
    chosen = await store.update_chat_settings(-1, pause_seconds=10, turn_seconds=45)
    assert (chosen.pause_seconds, chosen.turn_seconds) == (10, 45)
    assert (await store.chat_settings(-1)).pause_seconds == 10
    none = await store.update_chat_settings(-1, pause_seconds=0)
    assert none.pause_seconds == 0 and none.turn_seconds == 45, "0 is a choice: no pause"
    assert (await store.update_chat_settings(-1, language="en")).pause_seconds == 0, "left as it was"
    assert (await store.update_chat_settings(-1, pause_seconds=None)).pause_seconds is None
    for bad in (-1, 2.5, True, "5"):
        with pytest.raises(ValueError):
            await store.update_chat_settings(-1, pause_seconds=bad)


async def test_the_pause_follows_a_group_that_becomes_a_supergroup(store):
    await store.update_chat_settings(-2, pause_seconds=3)
    await store.migrate_chat(-2, -1002)
    assert (await store.chat_settings(-1002)).pause_seconds == 3
