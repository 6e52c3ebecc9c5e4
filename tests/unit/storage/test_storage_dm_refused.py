"""What Telegram said of someone's DM is saved with them (issue 51), on SQLite and PostgreSQL."""


async def test_a_refused_dm_is_saved_with_the_person_and_undone_when_opened(store):
    person, _ = await store.ensure_person(1, "Ann")
    assert not person.dm_refused
    await store.set_dm_refused(1, True)
    assert (await store.get_person(1)).dm_refused
    again, granted = await store.ensure_person(1, "Ann B")  # (renamed: read back with it)
    assert again.dm_refused and not granted
    await store.set_dm_refused(1, False)
    assert not (await store.get_person(1)).dm_refused
    await store.set_dm_refused(2, True)  # someone never seen is not created for it
    assert await store.get_person(2) is None
