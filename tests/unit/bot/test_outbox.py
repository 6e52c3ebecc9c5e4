"""The outbox's policy with explicit times (issues 15, 25, 30): Telegram's limits per chat, replies at
once while a group has room, priorities, coalescing, a 429 kept to its chat, the new-messages
budget. Pure: no event loop."""

from __future__ import annotations

import math
import random
from bisect import bisect_right

import pytest

from bot.send.rate_policy import (
    BOT_WINDOW_MARGIN,
    NEW_FLOOR,
    OPEN_POLL,
    REPLY_PATIENCE,
    Bucket,
    ChatLane,
    EveryRequest,
    Limits,
    NewMessages,
    Parcel,
    Priority,
    Share,
)

GROUP, PRIVATE = -100_1, 42
KEPT_PRIORITIES = (Priority.ACT, Priority.PHASE, Priority.INFO, Priority.COSMETIC)


def lane(chat_id: int = GROUP, limits: Limits | None = None, now: float = 0.0) -> ChatLane:
    return ChatLane(chat_id, (limits or Limits()).budget(chat_id, now))


def kept(key: object, since: float = 0.0, priority: Priority = Priority.PHASE, chat: int = GROUP) -> Parcel:
    return Parcel(chat, key, priority, since, Share.KEPT)


def reply(key: object, since: float = 0.0, chat: int = GROUP) -> Parcel:
    return Parcel(chat, ("r", key), Priority.REPLY, since, Share.REPLY, new_message=True)


def run(
    queue: ChatLane, arrivals: list[tuple[float, Parcel]], until: float, latency: float = 0.0
) -> list[tuple[float, Parcel]]:
    """Send whatever ``queue`` gives, the moment it gives it, until ``until`` (each request taking
    ``latency``); ``arrivals`` are put at their time. Returns (when sent, job)."""
    arrivals = sorted(arrivals, key=lambda arrival: arrival[0])
    sent: list[tuple[float, Parcel]] = []
    now, i = 0.0, 0
    while now <= until:
        while i < len(arrivals) and arrivals[i][0] <= now:
            queue.put(arrivals[i][1])
            i += 1
        job, wait = queue.next(now)
        if job is not None:
            sent.append((now, job))
            now += latency
            queue.done(job, now)
            continue
        upcoming = arrivals[i][0] if i < len(arrivals) else math.inf
        if wait > 0:
            assert now + wait > now, f"a wait of {wait} s at {now} s would never end"
            now = min(now + wait, upcoming)
        elif upcoming < math.inf:
            now = upcoming
        else:
            break
    return sent


def peak(times: list[float], window: float) -> int:
    """The most of ``times`` in any closed window of ``window`` seconds."""
    times = sorted(times)
    return max((bisect_right(times, at + window) - i for i, at in enumerate(times)), default=0)


def heavy_demand(rng: random.Random, minutes: int) -> list[tuple[float, Parcel]]:
    """Far more than a group may get: the table (coalesced), DMs-like kept keys, a flood of commands."""
    arrivals: list[tuple[float, Parcel]] = []
    for second in range(minutes * 60):
        for _ in range(rng.randint(0, 4)):
            at = second + rng.random()
            if rng.random() < 0.5:
                arrivals.append((at, reply((second, rng.random()), at)))
            else:
                key = ("t", rng.randint(0, 3)) if rng.random() < 0.7 else ("k", second, rng.random())
                arrivals.append((at, kept(key, at, rng.choice(KEPT_PRIORITIES))))
    return arrivals


# -- a group: 20 a minute, the table at most 15, replies at once while there is room -------------------
@pytest.mark.parametrize("seed", range(5))
def test_a_group_never_gets_more_than_20_in_any_minute_whatever_the_mix(seed):
    demand = heavy_demand(random.Random(seed), minutes=10)
    sent = run(lane(), demand, until=1_200)
    every = [at for at, _ in sent]
    tables = [at for at, job in sent if job.share is Share.KEPT]
    replies = [at for at, job in sent if job.share is Share.REPLY]
    assert peak(every, 60) <= 20
    assert peak(every, 0.999) <= 3, "about one a second after a burst of 3"
    assert peak(tables, 60) <= 15, "the table's most"
    # ... the demand was heavy enough that both were held back, and neither starved the other
    assert len(tables) >= 6 * 10, "a flood of replies leaves the table its floor"
    assert len(replies) >= 5 * 10  # (each one a message here: the presenter sends those waiting as one)


def test_a_quiet_group_answers_five_commands_at_once():
    """Issue 30 point 3: five replies in 8 s are well inside a quiet group's budget."""
    asked = [0.0, 2.0, 4.0, 6.0, 8.0]
    sent = run(lane(), [(at, reply(n, at)) for n, at in enumerate(asked)], until=600)
    assert [at for at, _ in sent] == pytest.approx(asked)


def test_a_quiet_group_sends_20_replies_in_a_minute_about_one_a_second():
    sent = run(lane(), [(0.0, reply(n, 0.0)) for n in range(25)], until=600)
    times = [at for at, _ in sent]
    assert times[:20] == pytest.approx([0, 0, 0, *range(1, 18)]), "a burst of 3, then one a second"
    assert times[20] == pytest.approx(60.5), "the 21st when the first has left the minute"
    assert len(times) == 25 and peak(times, 60) == 20


def test_next_to_a_busy_table_five_replies_still_go_at_once():
    """The table at its most (15 a minute) leaves 5 of every minute to replies, used or not."""
    table = [(float(at), kept("table", float(at))) for at in range(0, 120, 1)]
    asked = [60.0, 62.0, 64.0, 66.0, 68.0]
    sent = run(lane(), table + [(at, reply(n, at)) for n, at in enumerate(asked)], until=120)
    replies = [at for at, job in sent if job.share is Share.REPLY]
    assert len(replies) == 5 and max(r - a for r, a in zip(replies, asked, strict=True)) < 1.0
    assert peak([at for at, _ in sent], 60) <= 20


@pytest.mark.parametrize("latency", [0.0, 0.3])
def test_a_group_flooded_from_the_start_sends_everything_within_its_budget(latency):
    jobs = [(0.0, kept(("k", n), 0.0)) for n in range(60)]
    jobs += [(0.0, reply(n, 0.0)) for n in range(60)]
    queue = lane()
    sent = run(queue, jobs, until=3_600, latency=latency)
    assert queue.parcels == {} and len(sent) == 120, "everything went, no reply dropped"
    every = [at for at, _ in sent]
    assert peak(every, 60) <= 20 and peak(every, 0.999) <= 3
    tables = [at for at, job in sent if job.share is Share.KEPT]
    assert tables[:3] == pytest.approx([0, latency, 2 * latency]), "the table's burst first"
    assert peak(tables, 60) <= 15
    first_minute = [job for at, job in sent if at < 60]
    assert sum(job.share is Share.KEPT for job in first_minute) >= 6, "the table keeps its floor"


def test_the_table_alone_is_paced_as_before_and_leaves_replies_their_share():
    only_table = run(lane(), [(0.0, kept(("k", n))) for n in range(50)], until=59.99)
    assert [at for at, _ in only_table] == pytest.approx([0, 0, 0, *range(5, 56, 5)])
    assert len(only_table) == 3 + 11, "the table never spends the replies' share"


def test_a_kept_job_with_budget_goes_before_a_fresh_reply_but_a_cosmetic_edit_after():
    queue = lane()
    queue.put(reply("help", since=0.0))
    queue.put(kept("table", since=1.0, priority=Priority.PHASE))
    queue.put(kept("decor", since=0.5, priority=Priority.COSMETIC))
    order = []
    for at in (2.0, 3.0, 4.0):
        job, _ = queue.next(at)
        order.append(job.key)
        queue.done(job, at)
    assert order == ["table", ("r", "help"), "decor"]


def test_a_reply_that_has_waited_goes_ahead_of_the_table_but_not_of_a_prompt():
    queue = lane(PRIVATE, Limits.unlimited())
    queue.put(kept("phase", since=0.0, priority=Priority.PHASE, chat=PRIVATE))
    queue.put(kept("act", since=9.0, priority=Priority.ACT, chat=PRIVATE))
    queue.put(reply("waited", since=10.0 - REPLY_PATIENCE, chat=PRIVATE))
    order = []
    while queue.parcels:
        job, _ = queue.next(10.0)
        order.append(job.key)
        queue.done(job, 10.0)
    assert order == ["act", ("r", "waited"), "phase"]


# -- a private chat: a burst of 3, then one a second ----------------------------------------------------
def test_a_private_chat_gets_a_burst_of_3_then_one_a_second():
    jobs = [(0.0, kept(("d", n), chat=PRIVATE)) for n in range(100)]
    jobs += [(0.0, reply(n, chat=PRIVATE)) for n in range(20)]
    sent = run(lane(PRIVATE), jobs, until=60)
    times = [at for at, _ in sent]
    assert times[:4] == pytest.approx([0, 0, 0, 1])
    assert len(times) == 3 + 60
    for window in (0.5, 1, 2, 10, 60):
        assert peak(times, window) <= 3 + window, "both shares spend the one budget"


def test_a_quiet_private_chat_has_its_burst_again():
    queue = lane(PRIVATE)
    sent = run(queue, [(0.0, kept(n, chat=PRIVATE)) for n in range(3)], until=1)
    sent += run(queue, [(10.0, kept(n, 10.0, chat=PRIVATE)) for n in range(3, 7)], until=20)
    assert [at for at, _ in sent] == pytest.approx([0, 0, 0, 10, 10, 10, 11])


# -- priorities and coalescing ---------------------------------------------------------------------------
def test_the_most_urgent_first_then_the_longest_waiting():
    queue = lane(PRIVATE, Limits.unlimited())
    jobs = [
        kept("cosmetic", 1.0, Priority.COSMETIC),
        Parcel(PRIVATE, "reply", Priority.REPLY, 9.5, Share.REPLY, True),
        kept("info late", 9.0, Priority.INFO),
        kept("info early", 3.0, Priority.INFO),
        kept("phase", 4.0, Priority.PHASE),
        kept("act late", 8.0, Priority.ACT),
        kept("act early", 5.0, Priority.ACT),
    ]
    for job in jobs:
        queue.put(job)
    order = []
    while queue.parcels:
        job, _ = queue.next(10.0)
        order.append(job.key)
        queue.done(job, 10.0)
    assert order == ["act early", "act late", "phase", "reply", "info early", "info late", "cosmetic"]


def test_a_more_urgent_job_waiting_for_budget_lets_a_ready_one_go():
    queue = lane()
    for n in range(3):  # the table's burst
        queue.put(kept(("k", n), since=0.0))
        job, _ = queue.next(0.0)
        queue.done(job, 0.0)
    queue.put(kept("table", since=1.0, priority=Priority.PHASE))
    queue.put(reply("help", since=1.5))
    job, _ = queue.next(1.5)
    assert job.key == ("r", "help"), "the table waits for its next edit; the reply does not wait for it"


def test_many_wants_of_one_key_make_one_job_with_the_most_urgent_priority_and_earliest_place():
    queue = lane()
    assert queue.put(kept("table", 5.0, Priority.COSMETIC)) is True
    for since, priority in [(7.0, Priority.ACT), (3.0, Priority.INFO), (9.0, Priority.COSMETIC)]:
        assert queue.put(kept("table", since, priority)) is False
    assert list(queue.parcels) == ["table"]
    job = queue.parcels["table"]
    assert (job.priority, job.since) == (Priority.ACT, 3.0)
    sent, _ = queue.next(10.0)
    queue.done(sent, 10.0)
    assert sent is job and queue.next(10.0) == (None, 0.0), "sent once"


def test_a_job_wanted_again_while_in_flight_is_sent_again_after():
    queue = lane(PRIVATE)
    queue.put(kept("dm", 0.0, chat=PRIVATE))
    first, _ = queue.next(0.0)
    queue.put(kept("dm", 0.5, chat=PRIVATE))
    assert queue.next(0.5) == (None, 0.0), "one request of a chat in flight at a time"
    queue.done(first, 0.6)
    second, _ = queue.next(0.6)
    assert second is not None and second.key == "dm" and second.since == 0.5


# -- a 429 -----------------------------------------------------------------------------------------------
def test_a_429_blocks_only_its_lane_and_queues_the_job_again():
    a, b = lane(PRIVATE), lane(PRIVATE + 1)
    for queue in (a, b):
        for n in range(3):
            queue.put(kept(n, float(n), chat=queue.chat_id))
    refused, _ = a.next(0.0)
    a.done(refused, 0.2, retry_after=10)
    assert a.parcels[0] is refused and set(a.parcels) == {0, 1, 2}
    assert a.next(0.2) == (None, pytest.approx(10.0))
    assert a.next(5.0) == (None, pytest.approx(5.2))
    sent_b = run(b, [], until=10)
    assert [at for at, _ in sent_b] == [0.0, 0.0, 0.0], "the other chat goes on at once"
    again, _ = a.next(10.2)
    assert again is refused, "the refused job goes first when the wait is over: it waited longest"


def test_a_second_shorter_429_does_not_shorten_the_wait():
    queue = lane(PRIVATE)
    queue.put(kept("dm", chat=PRIVATE))
    job, _ = queue.next(0.0)
    queue.done(job, 0.0, retry_after=30)
    queue.done(job, 1.0, retry_after=5)
    assert queue.next(20.0) == (None, pytest.approx(10.0))
    assert queue.next(30.0)[0] is job


def test_a_429_requeued_over_a_newer_want_keeps_the_newer_wants_new_message():
    """The table is posted anew (a sendMessage: a new message) while its last edit is in flight;
    that edit gets a 429: the job queued again is still a new message."""
    queue = lane()
    queue.put(kept("table", 0.0))
    edit, _ = queue.next(0.0)
    queue.put(Parcel(GROUP, "table", Priority.PHASE, 0.5, Share.KEPT, new_message=True))
    queue.done(edit, 1.0, retry_after=3)
    job = queue.parcels["table"]
    assert job.new_message, "the message to send is new: it must take a token of the bot's budget"
    assert job.since == 0.0


# -- no reply dropped ------------------------------------------------------------------------------------
def test_a_flood_of_commands_is_all_sent_within_the_groups_budget():
    queue = lane()
    sent = run(queue, [(0.0, reply(n, 0.0)) for n in range(100)], until=3_600)
    assert len(sent) == 100 and queue.parcels == {}
    assert peak([at for at, _ in sent], 60) == 20


# -- the limits ------------------------------------------------------------------------------------------
def test_limits_of_settings():
    assert Limits.of_settings(15) == Limits()
    more = Limits.of_settings(30)
    assert (more.group_per_minute, more.table_per_minute, more.reply_share) == (35, 30, 5)
    less = Limits.of_settings(10)
    assert (less.group_per_minute, less.table_per_minute) == (20, 10)
    sent = run(lane(limits=more), [(0.0, kept(n)) for n in range(1_000)], until=600)
    assert peak([at for at, _ in sent], 60) == 30
    sent = run(lane(limits=less), [(0.0, kept(n)) for n in range(1_000)], until=600)
    assert peak([at for at, _ in sent], 60) == 10


@pytest.mark.parametrize("per_minute", [1, 2, 3, 4, 5])
def test_a_small_table_share_still_sends_within_it(per_minute):
    """Settings allow 1 a minute: the lane must neither stop for good nor divide by zero."""
    sent = run(lane(limits=Limits.of_settings(per_minute)), [(0.0, kept(n)) for n in range(100)], until=600)
    times = [at for at, _ in sent]
    assert len(times) >= 10, "it keeps sending"
    assert peak(times, 59.999) <= per_minute


def test_unlimited_limits_never_wait():
    for chat in (GROUP, PRIVATE):
        jobs = [(0.0, kept(n, chat=chat)) for n in range(500)]
        jobs += [(0.0, reply(n, chat=chat)) for n in range(500)]
        sent = run(lane(chat, Limits.unlimited()), jobs, until=0.01)  # (a group's replies: 60 ns apart)
        assert len(sent) == 1_000


def test_a_bucket_allows_its_burst_then_its_rate():
    bucket = Bucket(per_second=0.5, burst=2, now=0.0)
    for _ in range(2):
        assert bucket.wait(0.0) == 0
        bucket.take(0.0)
    assert bucket.wait(0.0) == pytest.approx(2.0)
    assert bucket.wait(1.5) == pytest.approx(0.5)
    assert bucket.wait(100.0) == 0
    bucket.take(100.0)
    bucket.take(100.0)
    assert bucket.wait(100.0) == pytest.approx(2.0), "never more than the burst saved up"


def sent_as_fast_as_allowed(budget: NewMessages | EveryRequest, start: float, end: float) -> list[float]:
    """When requests go from ``start`` to ``end`` if each goes as soon as ``budget`` lets it."""
    now, sent = start, []
    while now < end:
        wait = budget.wait(now)
        if wait > 0:
            now += wait
            continue
        budget.take(now)
        if isinstance(budget, EveryRequest):
            budget.done(now)  # answered at once
        sent.append(now)
    return sent


# -- the new-messages budget: none until Telegram says (issue 50) ---------------------------------------
def sent_in_the_last_second(new: NewMessages, count: int, now: float) -> None:
    for n in range(count):
        new.take(now - 0.5 + n * 0.4 / count)


def test_new_messages_have_no_cap_by_default():
    new = NewMessages(0.0)
    assert new.per_second is None and new.rate(0.0) == math.inf
    for _ in range(10_000):
        assert new.wait(0.0) == 0
        new.take(0.0)


def test_a_429_about_the_bot_caps_it_at_half_what_it_sent_and_again_down_to_the_floor():
    new = NewMessages(0.0)
    sent_in_the_last_second(new, 40, 100.0)
    assert new.throttled(100.0) == 20 and new.per_second == 20 and new.bucket.burst == 20
    seen = []
    for at in range(6):
        sent_in_the_last_second(new, 40, 100.1 + at / 10)
        new.throttled(100.1 + at / 10)  # (sending faster than the cap: half the cap)
        seen.append(new.per_second)
    assert seen == [10, 5, NEW_FLOOR, NEW_FLOOR, NEW_FLOOR, NEW_FLOOR]


def test_a_calm_spell_lifts_the_cap_by_a_quarter_each_10_s_until_it_is_off():
    new = NewMessages(0.0)
    sent_in_the_last_second(new, 40, 100.0)
    new.throttled(100.0)  # 20 a second: 40 drew the 429
    assert new.rate(109.9) == 20, "what the metrics read: the cap now"
    new.wait(110.0)
    assert new.per_second == 25
    new.wait(135.0)
    assert new.per_second == pytest.approx(39.0625), (
        "two more calm 10 s (the 5 s over count towards the next)"
    )
    new.wait(169.9)
    assert new.per_second == pytest.approx(76.29, abs=0.01)
    new.wait(170.0)
    assert new.per_second is None, "twice what drew the 429: no cap again"


def test_a_fixed_cap_stays_and_the_learnt_one_is_never_above_it():
    new = NewMessages(0.0, 30.0)
    assert new.per_second == 30
    sent_in_the_last_second(new, 30, 5.0)
    new.throttled(5.0)
    assert new.per_second == 15
    new.wait(10_000.0)
    assert new.per_second == 30 and new.bucket.burst == 30, "back to the fixed cap, not above"


def test_workers_share_the_learnt_cap_and_each_keeps_to_its_part():
    new, every = NewMessages(0.0), EveryRequest(30)
    new.share(3)
    every.share(3)
    assert new.per_second is None and every.count == 10
    assert new.learn(12.0, 1.0) == 12 and new.per_second == 4, (
        "another worker learnt 12: a third is this one's"
    )
    assert len(sent_as_fast_as_allowed(new, 1.0, 6.0)) <= 4 + 4 * 5
    assert new.learn(30.0, 2.0) == 12, "a higher cap heard later does not lift it: calm spells do"
    sent_in_the_last_second(new, 4, 3.0)
    assert new.throttled(3.0) == 6, "this worker's 4 a second, the bot's 12: half of it"
    new.share(1)  # the others are gone: the whole cap is this worker's
    assert new.per_second == 6
    new.wait(10_000.0)
    assert new.per_second is None
    every.share(100)
    assert every.count == 1, "never nothing"
    every.take(0.0)
    every.done(0.0)
    assert every.wait(1.0) > 100 / 30 - 1.0, "one in 100/30 s: a hundred workers keep to 30 a second"


def test_new_messages_under_a_cap_go_at_most_at_its_rate():
    new = NewMessages(0.0)
    new.learn(7.5, 0.0)  # 7.5 a second, 7.5 at once
    sent = sent_as_fast_as_allowed(new, 1.0, 20.0)
    assert sent[:8] == [1.0] * 7 + [pytest.approx(1.0 + 0.5 / 7.5)]
    assert peak(sent, 1.0) <= 7.5 + 9.375, "its burst, then its rate (7.5; 9.375 after 10 calm s)"
    assert len(sent) == pytest.approx(7.5 + 7.5 * 9 + 9.375 * 10, abs=2)


# -- the bot's cap on every request (an operator's PAIJU_BOT_REQUESTS_PER_SECOND) --------------------------
def test_every_request_keeps_to_its_count_in_any_second_counted_a_little_longer():
    every = EveryRequest(30)
    sent = sent_as_fast_as_allowed(every, 0.0, 10.0)
    assert sent[:30] == [0.0] * 30, "30 at once"
    assert sent[30] == pytest.approx(1.0 + BOT_WINDOW_MARGIN), "the 31st once the first is a second old"
    assert peak(sent, 1.0 + BOT_WINDOW_MARGIN - 1e-9) <= 30, "never 31 in any second, however counted"


def test_every_request_wait_counts_those_ahead_including_those_not_yet_sent():
    every = EveryRequest(2)
    every.take(0.0)
    every.done(0.0)
    assert every.wait(0.0) == 0, "room for one more now"
    assert every.wait(0.0, ahead=1) == pytest.approx(1.0 + BOT_WINDOW_MARGIN), "the one after waits a second"
    assert every.wait(0.5, ahead=2) == pytest.approx(1.0 + BOT_WINDOW_MARGIN), (
        "the second ahead goes once the first request left; this one once the one ahead sent now has"
    )
    assert every.wait(0.0, ahead=3) == pytest.approx(2 * (1.0 + BOT_WINDOW_MARGIN)), (
        "two windows on: the one ahead that goes now is in the next window's way"
    )
    assert every.wait(5.0, ahead=3) == pytest.approx(1.0 + BOT_WINDOW_MARGIN), "the old one has left"


def test_a_request_holds_its_place_until_its_answer_came_and_counts_from_then():
    """Telegram counts a request from when it arrived, which the bot knows only to lie between the
    moment it took its place and its answer. Benchmark 5 (b) drew 429s from 30 requests that
    arrived within 0.13 s after a slow start: counted from when each started, the bot had let a
    31st go."""
    every = EveryRequest(1)
    every.take(0.0)
    assert every.wait(5.0) == pytest.approx(OPEN_POLL), "however long it is on its way, its place holds"
    every.done(5.2)  # its answer came
    assert every.wait(5.2) == pytest.approx(1.0 + BOT_WINDOW_MARGIN), "a window after its answer"
    assert every.wait(5.2 + 1.0 + BOT_WINDOW_MARGIN) == 0


def test_a_request_not_sent_after_all_gives_its_place_back_counted_as_if_sent():
    every = EveryRequest(2)
    every.take(0.0)
    every.take(0.0)
    assert every.wait(0.1) == pytest.approx(OPEN_POLL)
    every.done(0.1)  # (called off before its request started: counted all the same, to be safe)
    assert every.wait(0.1) == pytest.approx(1.0 + BOT_WINDOW_MARGIN), "the room comes as that one leaves"
    every.done(0.2)
    assert every.wait(0.2 + 1.0 + BOT_WINDOW_MARGIN) == 0 and every.open == 0
