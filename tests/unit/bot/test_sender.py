"""The sender on a virtual clock (issue 15): chats in parallel each at their own budget, a 429 kept
to its chat, the bot's new-messages budget in priority order across chats; and the restart case
(a restarted bot sends only what changed while it was down)."""

from __future__ import annotations

import asyncio
from bisect import bisect_right

import pytest

from bot.send.rate_policy import NEW_FLOOR, Limits, Parcel, Priority, Share
from faketg.harness import GROUP, start_bot, stop_bot
from tests.component.decks import stack
from tests.component.scenarios import open_and_start
from tests.unit.bot.virtual_sender import Telegram, at, kept, now, simulate


def reply(chat_id: int, key: object) -> Parcel:
    return Parcel(chat_id, ("r", key), Priority.REPLY, now(), Share.REPLY, new_message=True)


def peak(times: list[float], window: float) -> int:
    times = sorted(times)
    return max((bisect_right(times, moment + window) - i for i, moment in enumerate(times)), default=0)


def private_pace(count: int, start: float = 0.0) -> list[float]:
    """A private chat flooded at ``start``: a burst of 3, then one a second."""
    return [start + max(0, n - 2) for n in range(count)]


def group_pace(count: int, start: float = 0.0) -> list[float]:
    """The table of a group flooded at ``start``: a burst of 3, then one every 5 s."""
    return [start + 5 * max(0, n - 2) for n in range(count)]


GROUPS, PRIVATES = [-100 - n for n in range(4)], [10 + n for n in range(4)]


# -- chats in parallel ------------------------------------------------------------------------------------
def test_many_chats_each_progress_at_their_own_budget():
    async def scenario():
        telegram = Telegram(Limits())
        for chat in GROUPS + PRIVATES:
            telegram.want(chat, 60)
        await telegram.sender.drain()
        return telegram, now()

    telegram, end = simulate(scenario)
    for chat in PRIVATES:
        assert telegram.times(chat) == pytest.approx(private_pace(60))
        assert telegram.keys(chat) == list(range(60)), "the longest waiting first"
    for chat in GROUPS:
        assert telegram.times(chat) == pytest.approx(group_pace(60))
    assert end == pytest.approx(5 * 57), "drain returned when the last was sent"


def test_a_chat_with_a_thousand_jobs_does_not_delay_another():
    async def scenario():
        telegram = Telegram(Limits(), latency=0.05)
        telegram.want(PRIVATES[0], 1_000, new=True)
        telegram.want(GROUPS[0], 1_000)
        await at(100.3)
        telegram.want(PRIVATES[1], 1, new=True)
        telegram.want(GROUPS[1], 1)
        await at(100.4)
        sent_by_then = len(telegram.sent)
        await telegram.sender.stop()
        return telegram, sent_by_then

    telegram, sent = simulate(scenario)
    assert telegram.times(PRIVATES[1]) == [pytest.approx(100.3)]
    assert telegram.times(GROUPS[1]) == [pytest.approx(100.3)]
    burst = [0, 0.05, 0.1]  # one request in flight at a time
    assert telegram.times(PRIVATES[0]) == pytest.approx(burst + private_pace(103)[3:]), (
        "and the busy one goes on at its pace"
    )
    assert telegram.times(GROUPS[0]) == pytest.approx(burst + group_pace(23)[3:])
    assert sent == 103 + 23 + 2


def test_each_chat_keeps_its_pace_when_requests_take_time():
    async def scenario():
        telegram = Telegram(Limits(), latency=0.4)
        for chat in GROUPS + PRIVATES:
            telegram.want(chat, 20, new=True)
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    for chat in PRIVATES:  # one request of a chat in flight at a time: the burst takes 0.4 s each
        assert telegram.times(chat)[:4] == pytest.approx([0, 0.4, 0.8, 1.2])
        assert peak(telegram.times(chat), 10) <= 3 + 10
    for chat in GROUPS:
        assert telegram.times(chat) == pytest.approx([0, 0.4, 0.8, *group_pace(20)[3:]])


# -- a 429 --------------------------------------------------------------------------------------------------
def test_a_429_delays_only_its_chat_by_its_retry_after():
    a, b = PRIVATES[:2]
    group = GROUPS[0]

    async def scenario():
        telegram = Telegram(Limits())
        telegram.refusals[(a, 5)] = 20.0  # A's sixth request, at 3 s
        for chat in (a, b, group):
            telegram.want(chat, 40, new=True)
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert [(moment, job.key) for moment, job in telegram.refused] == [(pytest.approx(3.0), 5)]
    assert telegram.times(a)[:6] == pytest.approx([0, 0, 0, 1, 2, 23])
    assert telegram.keys(a)[:6] == [0, 1, 2, 3, 4, 5], "the refused job goes first after the wait"
    assert telegram.times(a)[6:9] == pytest.approx([23, 23, 24]), "a chat that waited has its burst"
    assert len(telegram.keys(a)) == 40
    assert telegram.times(b) == pytest.approx(private_pace(40)), "the other chats never noticed"
    assert telegram.times(group) == pytest.approx(group_pace(40))
    assert telegram.sender.new.per_second is None, "one chat's 429 is about that chat: no cap"
    assert telegram.sender.received_429 == 1


@pytest.mark.parametrize(
    ("refusals", "halved"),
    [
        ({(PRIVATES[0], 5): 5.0, (PRIVATES[1], 5): 5.0}, True),  # both at 3 s
        ({(PRIVATES[0], 5): 5.0, (PRIVATES[1], 7): 5.0}, False),  # at 3 s and 5 s
        ({(PRIVATES[0], 5): 1.0, (PRIVATES[0], 6): 1.0}, False),  # one chat, twice within a second
    ],
)
def test_429s_in_two_chats_within_a_second_cap_the_bots_new_messages(refusals, halved):
    """Two private chats, each kept to its one a second, refused within a second: the bot was
    sending 2 new messages a second, capped at half of that (never below the floor)."""

    async def scenario():
        telegram = Telegram(Limits())
        telegram.refusals.update(refusals)
        for chat in PRIVATES[:2]:
            telegram.want(chat, 10, new=True)
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert len(telegram.refused) == 2 and len(telegram.sent) == 20
    assert telegram.sender.new.per_second == (NEW_FLOOR if halved else None)


def test_under_a_learnt_cap_new_messages_go_at_its_rate_across_chats():
    chats = [1_000 + n for n in range(40)]

    async def scenario():
        telegram = Telegram(Limits())
        telegram.sender.learn_cap(7.5)  # (another worker learnt it)
        await at(1.0)
        for chat in chats:
            telegram.want(chat, 3, new=True)
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    sent = sorted(moment for moment, _ in telegram.sent)
    assert len(sent) == 120
    assert peak(sent, 1.0) <= 7.5 + 7.5, "its burst, then 7.5 a second"
    # (7.5 a second; a calm 10 s lift it to 9.375)
    assert sent[-1] == pytest.approx(1 + 9 + (120 - 7.5 - 7.5 * 9) / 9.375, abs=0.5)


# -- the new-messages budget, in priority order across chats ---------------------------------------------
def test_the_new_messages_budget_goes_to_the_most_urgent_across_chats():
    async def scenario():
        telegram = Telegram(Limits(new_per_second=1.0))
        telegram.sender.want(kept(1, "first", Priority.COSMETIC, new=True))  # takes the one token
        await at(0.1)
        telegram.sender.want(kept(2, "cosmetic", Priority.COSMETIC, new=True))
        await at(0.2)
        telegram.sender.want(kept(3, "info", Priority.INFO, new=True))
        await at(0.3)
        telegram.sender.want(kept(4, "act", Priority.ACT, new=True))
        telegram.sender.want(kept(5, "edit", Priority.COSMETIC))  # an edit needs no such token
        await at(0.4)
        telegram.sender.want(kept(6, "act later", Priority.ACT, new=True))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert [(job.key, moment) for moment, job in telegram.sent] == [
        ("first", 0.0),
        ("edit", pytest.approx(0.3)),
        ("act", pytest.approx(1.0)),
        ("act later", pytest.approx(2.0)),
        ("info", pytest.approx(3.0)),
        ("cosmetic", pytest.approx(4.0)),
    ]


def test_a_group_waiting_for_the_new_messages_budget_still_keeps_to_its_share():
    """The bot's budget is scarce (1 a second) and urgent DMs take it first: the table's first
    request goes out 12 s after it was picked. Its chat's budget must count it when it goes, or the
    burst the group saved meanwhile makes 16 of the table's 15 in a minute."""
    people = [1_000 + n for n in range(12)]

    async def scenario():
        telegram = Telegram(Limits(new_per_second=1.0))
        for person in people:
            telegram.sender.want(kept(person, "cards", Priority.ACT, new=True))
        telegram.want(GROUP, 60, priority=Priority.COSMETIC, new=True)
        await at(60.0)
        for n in range(40):
            telegram.sender.want(reply(GROUP, n))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    group = [(moment, job) for moment, job in telegram.sent if job.chat_id == GROUP]
    assert group[0][0] == pytest.approx(12.0), "after the 12 urgent ones"
    assert peak([moment for moment, job in group if job.share is Share.KEPT], 60) <= 15
    replies = [moment for moment, job in group if job.share is Share.REPLY]
    assert peak(replies, 60) <= 20 - Limits().table_floor, "the replies leave the waiting table its floor"
    assert peak([moment for moment, _ in group], 60) <= 20


# -- the bot's cap on every request (PAIJU_BOT_REQUESTS_PER_SECOND) ----------------------------------------
def test_a_cap_on_every_request_holds_across_chats_edits_included():
    """Under a global 30 a second (Telegram's pessimistic limit, set as the bot's own), edits and new
    messages of 100 chats together never pass it: no 429 to learn it from."""
    chats = [-100 - n for n in range(50)] + [10 + n for n in range(50)]

    async def scenario():
        telegram = Telegram(Limits(requests_per_second=30), latency=0.02)
        for chat in chats:
            telegram.want(chat, 4)  # edits
            telegram.sender.want(kept(chat, "new", new=True))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    sent = sorted(moment for moment, _ in telegram.sent)
    assert len(sent) == 500
    assert peak(sent, 1.0) <= 30
    assert sent[-1] < 500 / 30 * 1.2, "and it keeps close to the cap, not far below it"


def test_under_a_cap_on_every_request_prompts_go_first_across_chats():
    async def scenario():
        telegram = Telegram(Limits(requests_per_second=2))
        telegram.want(GROUPS[0], 4, priority=Priority.COSMETIC)
        for chat in GROUPS[1:]:
            telegram.sender.want(kept(chat, "table", Priority.COSMETIC))
        await at(0.1)
        for person in PRIVATES:
            telegram.sender.want(kept(person, "prompt", Priority.ACT))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    order = [job.priority for _, job in telegram.sent]
    assert order[:2] == [Priority.COSMETIC] * 2, "what went before the prompts were wanted"
    assert order[2:6] == [Priority.ACT] * 4, "then every prompt, ahead of the tables waiting longer"


def test_a_parcel_waiting_for_its_token_moves_up_when_wanted_more_urgently():
    """A person's DM waits for the bot's budget as information; their turn comes meanwhile: the same
    message, now a prompt, goes ahead of the tables that were waiting before it."""

    async def scenario():
        telegram = Telegram(Limits(requests_per_second=1))
        telegram.sender.want(kept(GROUPS[0], "table", Priority.COSMETIC))  # takes the second's token
        await at(0.1)
        telegram.sender.want(kept(PRIVATES[0], "dm", Priority.INFO))
        await at(0.2)
        for chat in GROUPS[1:]:
            telegram.sender.want(kept(chat, "table", Priority.PHASE))
        await at(0.3)
        telegram.sender.want(kept(PRIVATES[0], "dm", Priority.ACT))  # its turn: the DM is now a prompt
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert [job.chat_id for _, job in telegram.sent][:2] == [GROUPS[0], PRIVATES[0]]
    assert telegram.sent[1][1].priority is Priority.ACT
    assert len(telegram.sent) == 5, "sent once, with what is wanted now"


def test_under_a_cap_a_prompt_behind_waiting_edits_stays_a_new_message():
    """The cap, not the new-message budget, holds the prompt back: the edits waiting ahead of it
    take no new-message token (that budget, halved after 429s, has room for it), an edit would wait
    as long, so it goes as a new message (it notifies) when its turn comes."""

    async def scenario():
        telegram = Telegram(Limits(requests_per_second=30))
        telegram.sender.learn_cap(15.0)  # 15 new messages a second, 15 at once
        await at(1.0)
        for chat in range(2_000, 2_100):
            telegram.sender.want(kept(chat, "edit", Priority.ACT, since=1.0))
        telegram.sender.want(
            Parcel(7, "prompt", Priority.ACT, 1.001, Share.KEPT, new_message=True, may_edit=True)
        )
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    [prompt] = [job for _, job in telegram.sent if job.key == "prompt"]
    assert prompt.new_message


def test_a_new_prompt_wanted_while_an_edit_of_its_dm_waits_goes_as_a_new_message():
    async def scenario():
        telegram = Telegram(Limits(requests_per_second=1))
        telegram.sender.want(kept(GROUPS[0], "table", Priority.COSMETIC))  # takes the second's token
        telegram.sender.want(kept(PRIVATES[0], "dm", Priority.INFO))  # an edit: waits for the next
        await at(0.5)
        telegram.sender.want(kept(PRIVATES[0], "dm", Priority.ACT, new=True))  # now a new prompt
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    dm = [job for _, job in telegram.sent if job.chat_id == PRIVATES[0]]
    assert [(job.new_message, job.priority) for job in dm] == [(True, Priority.ACT)], (
        "one request, a new message: never a prompt sent as the edit that waited"
    )


def test_with_the_new_message_budget_spent_such_a_prompt_goes_as_that_edit_at_once():
    async def scenario():
        telegram = Telegram(Limits(requests_per_second=1, new_per_second=30.0))
        telegram.sender.new.bucket.tokens, telegram.sender.new.bucket.at = -900.0, now()  # 30 s away
        telegram.sender.want(kept(GROUPS[0], "table", Priority.COSMETIC))  # takes the second's token
        telegram.sender.want(kept(PRIVATES[0], "dm", Priority.INFO))  # an edit: waits for the next
        await at(0.5)
        telegram.sender.want(
            Parcel(PRIVATES[0], "dm", Priority.ACT, now(), Share.KEPT, new_message=True, may_edit=True)
        )
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    [(moment, dm)] = [(moment, job) for moment, job in telegram.sent if job.chat_id == PRIVATES[0]]
    assert not dm.new_message and dm.priority is Priority.ACT, "the prompt, as an edit (seen, not notified)"
    assert moment < 1.5, "with the edit's token, not 30 s later"


def test_a_prompt_wanted_while_its_chats_cleanup_waits_for_a_token_goes_first():
    """An old round's DM left behind (a cosmetic cleanup) was picked and waits for the bot's budget;
    the person's next prompt is wanted meanwhile: the chat's place in the queue moves up to the
    prompt, and the prompt goes in the cleanup's place (which follows)."""

    async def scenario():
        telegram = Telegram(Limits(requests_per_second=1))
        telegram.sender.want(kept(GROUPS[0], "table", Priority.COSMETIC))  # takes the second's token
        telegram.sender.want(kept(PRIVATES[0], "cleanup", Priority.COSMETIC))
        await at(0.1)
        for chat in GROUPS[1:]:
            telegram.sender.want(kept(chat, "table", Priority.INFO))
        await at(0.2)
        telegram.sender.want(kept(PRIVATES[0], "prompt", Priority.ACT))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert [(job.chat_id, job.key) for _, job in telegram.sent][:2] == [
        (GROUPS[0], "table"),
        (PRIVATES[0], "prompt"),
    ]
    assert telegram.keys(PRIVATES[0]) == ["prompt", "cleanup"], "the cleanup still goes, after"


def test_under_a_cap_what_only_informs_waits_a_minute_behind_the_prompts():
    """A steady stream of prompts (one a second, as much as the cap lets through): a reply goes once
    it has waited 10 s more than they; a DM that only informs waits a minute behind them (its
    changes merge meanwhile)."""

    async def scenario():
        telegram = Telegram(Limits(requests_per_second=1))
        telegram.sender.want(kept(GROUPS[0], "filler", Priority.ACT))  # takes the first second's token
        telegram.sender.want(Parcel(GROUPS[1], "reply", Priority.REPLY, now(), Share.REPLY))
        telegram.sender.want(kept(PRIVATES[0], "dm", Priority.INFO))
        for n in range(40):
            await at(0.5 + n)
            telegram.sender.want(kept(1_000 + n, "prompt", Priority.ACT))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    keys = [job.key for _, job in telegram.sent]
    assert keys.index("reply") == 1 + 10, "after the prompts wanted in its first 10 s"
    assert keys[-1] == "dm", "after every prompt of the next 40 s"


def test_without_a_cap_edits_wait_for_no_token_of_the_bot():
    async def scenario():
        telegram = Telegram(Limits(new_per_second=1.0))
        for chat in PRIVATES:
            telegram.sender.want(kept(chat, "edit", Priority.COSMETIC))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert [moment for moment, _ in telegram.sent] == [0.0] * len(PRIVATES)


# -- a worker's lease (the gate) -----------------------------------------------------------------------------
def test_nothing_goes_out_once_the_lease_is_not_sure_even_a_parcel_that_waited_for_its_token():
    """A worker's lease, not renewed, holds until 2 s: what waited for the bot's new-message budget
    past then is not sent (another worker may own its chat by now), however long it waited; renewed
    at 10 s, all of it goes."""
    lease = [2.0]

    async def scenario():
        telegram = Telegram(Limits())
        renewed = asyncio.Event()

        async def gate() -> None:  # (as ``Worker.until_it_may_act``)
            while now() >= lease[0]:
                renewed.clear()
                await renewed.wait()

        telegram.sender.gate = gate
        for n in range(100):  # a new message to each of 100 people: over 3 s of the bot's budget
            telegram.sender.want(kept(1_000 + n, 0, new=True, since=n * 1e-6))
        await at(10.0)
        lease[0] = float("inf")
        renewed.set()
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    times = sorted(moment for moment, _ in telegram.sent)
    early = [t for t in times if t < 10.0]
    assert early and max(early) < 2.0, f"sent after the lease was not sure: {[t for t in early if t >= 2]}"
    assert len(times) == 100, "what waited is sent once renewed"


# -- drain, forget, coalescing, stale replies, failures -----------------------------------------------------
def test_drain_returns_once_everything_is_sent():
    async def scenario():
        telegram = Telegram(Limits(), latency=0.01)
        await telegram.sender.drain()  # nothing queued: at once
        assert now() == 0
        for chat in GROUPS[:2] + PRIVATES[:2]:
            telegram.want(chat, 30, new=True)
            telegram.sender.want(reply(chat, "help"))
        await telegram.sender.drain()
        return telegram, now()

    telegram, end = simulate(scenario)
    assert len(telegram.sent) == 4 * 31
    assert not telegram.sender.tasks and not any(lane.parcels for lane in telegram.sender.lanes.values())
    assert end == pytest.approx(group_pace(30)[-1] + 0.01)


def test_forget_takes_a_queued_job_back():
    chat = PRIVATES[0]

    async def scenario():
        telegram = Telegram(Limits())
        telegram.want(chat, 6)
        telegram.sender.withdraw(chat, 4)
        telegram.sender.withdraw(chat, "never queued")
        telegram.sender.withdraw(777, 0)  # a chat with nothing at all
        await telegram.sender.drain()
        sent = telegram.keys(chat)
        await at(10.0)
        telegram.want(chat, 4)  # 0, 1 and 2 go at once (the budget refilled); 3 waits a second
        await asyncio.sleep(0)
        telegram.sender.withdraw(chat, 3)
        await telegram.sender.drain()
        return telegram, sent, now()

    telegram, first, end = simulate(scenario)
    assert first == [0, 1, 2, 3, 5]
    assert telegram.keys(chat)[5:] == [0, 1, 2]
    assert not telegram.sender.pending(chat) and end == 10.0


def test_forgetting_all_a_chat_waits_for_ends_its_wait():
    """A group blocked for 30 s by a 429: once nothing is left to send there, nothing waits (a
    shutdown's flush would wait for it, and say messages were left)."""

    async def scenario():
        telegram = Telegram(Limits())
        telegram.refusals[(GROUP, 0)] = 30.0
        telegram.want(GROUP, 1)
        await at(1.0)
        assert telegram.sender.pending(GROUP)
        telegram.sender.withdraw(GROUP, 0)
        await telegram.sender.drain()
        return telegram, now()

    telegram, end = simulate(scenario)
    assert telegram.sent == [] and end == 1.0 and not telegram.sender.pending(GROUP)


def test_a_parcel_taken_back_while_its_request_is_under_way_is_not_queued_again_by_a_429():
    """Its table let go to another worker while its request was out (the chaos test: an edit of the
    group went out 24 s later, from a worker that no longer held the chat): refused with a 429, it
    is not put back, and nothing of it goes out after the wait."""

    async def scenario():
        telegram = Telegram(Limits(), latency=0.5)
        telegram.refusals[(GROUP, 0)] = 20.0
        telegram.want(GROUP, 1)
        await at(0.25)  # (its request is under way)
        telegram.sender.withdraw(GROUP, 0)
        await telegram.sender.drain()
        return telegram, now()

    telegram, end = simulate(scenario)
    assert [job.key for _, job in telegram.refused] == [0]
    assert telegram.sent == [] and end == 0.5 and not telegram.sender.pending(GROUP)


def test_wants_of_one_key_while_it_waits_make_one_request():
    chat = PRIVATES[0]

    async def scenario():
        telegram = Telegram(Limits())
        telegram.want(chat, 3)  # the burst
        for n in range(50):
            telegram.sender.want(kept(chat, "dm", Priority.INFO if n % 2 else Priority.COSMETIC))
            await asyncio.sleep(0.01)
        telegram.sender.want(kept(chat, "other", Priority.COSMETIC))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert telegram.keys(chat) == [0, 1, 2, "dm", "other"]
    dm = telegram.sent[3]
    assert dm[0] == pytest.approx(1.0) and dm[1].priority is Priority.INFO and dm[1].since == 0.0


def test_a_flood_of_replies_is_all_sent_none_dropped():
    async def scenario():
        telegram = Telegram(Limits())
        for n in range(25):
            telegram.sender.want(reply(GROUP, n))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert telegram.keys(GROUP) == [("r", n) for n in range(25)]
    times = telegram.times(GROUP)
    assert times[:20] == pytest.approx([0, 0, 0, *range(1, 18)]), "at once while the group has room"
    assert peak(times, 60) == 20


def test_a_failing_deliver_loses_that_job_only():
    chat = PRIVATES[0]

    async def scenario():
        telegram = Telegram(Limits())
        fine = telegram.deliver

        async def deliver(job):
            if job.key == 1:
                raise RuntimeError("a bug in what sends it")
            return await fine(job)

        telegram.sender.deliver = deliver
        telegram.want(chat, 5)
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert telegram.keys(chat) == [0, 2, 3, 4]


def test_stop_cancels_what_is_queued():
    async def scenario():
        telegram = Telegram(Limits(new_per_second=1.0))
        for chat in PRIVATES:
            telegram.want(chat, 5, new=True)
        await at(1.5)
        await telegram.sender.stop()
        return telegram, len(telegram.sent)

    telegram, sent = simulate(scenario)
    assert sent == 2 and not telegram.sender.tasks


# -- the restart case (that nothing at all is sent: tests/component/test_delivery.py) ------------------------
MESSAGES = {"sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage"}


async def play_to_the_draw(world, database):
    first = await start_bot(world, database)
    stack(first, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "2C 2D"}, "7S 8H")
    await open_and_start(first, [1, 2, 3])
    await first.driver.press(1, GROUP, "当庄")
    await first.driver.press(2, GROUP, "补牌")
    await stop_bot(first)


async def test_a_restarted_bot_sends_only_what_changed_while_it_was_down(world, database):
    await play_to_the_draw(world, database)
    checking = await start_bot(world, database)
    live = checking.runtime.tables.get(GROUP)
    table_id, table_message = live.table_id, live.message_id
    await checking.runtime.store.update_messages(table_id, shown={"table": "not:what it shows"})
    await stop_bot(checking)
    before = len(world.requests)

    second = await start_bot(world, database)
    await second.runtime.wait_idle()
    sent = [(r.method, r.chat_id) for r in world.requests[before:] if r.method in MESSAGES]
    assert sent == [("editMessageText", GROUP)], "the table only; no DM"
    edit = next(r for r in world.requests[before:] if r.method == "editMessageText")
    assert edit.params["message_id"] == table_message
    await stop_bot(second)


def test_a_parcel_that_takes_two_requests_takes_two_places_under_the_cap():
    """A prompt whose answered predecessor still shows its buttons ends it first (two requests):
    under the cap the second waits for its own place, so no second passes it."""

    async def scenario():
        telegram = Telegram(Limits(requests_per_second=2))
        requests: list[float] = []

        async def deliver(job: Parcel) -> float | None:
            requests.append(now())
            async with telegram.sender.one_more(job):
                requests.append(now())
                await asyncio.sleep(0.4)  # its answer comes late: its place is held until then
            return None

        telegram.sender.deliver = deliver
        telegram.sender.want(kept(PRIVATES[0], "prompt", Priority.ACT, new=True))
        telegram.sender.want(kept(PRIVATES[1], "prompt", Priority.ACT, new=True))
        await telegram.sender.drain()
        return requests

    requests = simulate(scenario)
    assert len(requests) == 4
    assert peak(requests, 1.0) <= 2, "two requests in any second, the second of each parcel counted too"
    assert requests[2] >= requests[1] + 0.4 + 1.0, "the second's place is held until its answer came"


# -- a prompt's grace (its person watches the table in the Mini App: bot/send/watched.py) ------------
def graced(chat_id: int, until: float) -> Parcel:
    return Parcel(chat_id, "dm", Priority.ACT, now(), Share.KEPT, True, True, "prompt", not_before=until)


def test_a_prompt_in_its_grace_goes_when_it_is_over_and_nothing_else_waits_for_it():
    async def scenario():
        telegram = Telegram(Limits())
        telegram.sender.want(graced(PRIVATES[0], 4.0))
        telegram.sender.want(kept(PRIVATES[0], "other", Priority.INFO))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    assert [(moment, job.key) for moment, job in telegram.sent] == [(0.0, "other"), (4.0, "dm")]


def test_hastened_it_goes_at_once_and_withdrawn_it_never_goes():
    async def scenario():
        telegram = Telegram(Limits())
        telegram.sender.want(graced(PRIVATES[0], 4.0))
        telegram.sender.want(graced(PRIVATES[1], 4.0))
        await at(1.0)
        telegram.sender.hasten(PRIVATES[0], "dm")  # their page was hidden
        assert telegram.sender.withdraw(PRIVATES[1], "dm") is not None  # their page showed the turn
        await telegram.sender.drain()
        return telegram, now()

    telegram, end = simulate(scenario)
    assert [(moment, job.chat_id) for moment, job in telegram.sent] == [(1.0, PRIVATES[0])]
    assert end == 1.0, "nothing left waiting for a grace"


def test_a_graced_prompt_wanted_while_an_edit_of_its_dm_waits_for_its_token_keeps_its_grace():
    async def scenario():
        telegram = Telegram(Limits(requests_per_second=1))
        telegram.sender.want(kept(GROUPS[0], "table", Priority.COSMETIC))  # takes the second's token
        telegram.sender.want(kept(PRIVATES[0], "dm", Priority.INFO))  # an edit: waits for the next
        await at(0.5)
        telegram.sender.want(graced(PRIVATES[0], 4.5))
        await telegram.sender.drain()
        return telegram

    telegram = simulate(scenario)
    dm = [(moment, job.payload) for moment, job in telegram.sent if job.chat_id == PRIVATES[0]]
    assert [payload for _, payload in dm] == [None, "prompt"], "the edit as it was, then the prompt"
    assert dm[0][0] < 2.0 and dm[1][0] >= 4.5
