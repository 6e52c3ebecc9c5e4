"""A prompt's grace in its lane (``Parcel.not_before``) and the Mini App's heartbeats, with explicit
times (issue 50: the open Mini App as a turn's channel). Pure: no event loop."""

from __future__ import annotations

from bot.send.rate_policy import ChatLane, Limits, Parcel, Priority, Share
from bot.web.miniapp.watching import BURST, FRESH, KEPT_MAX, PER_SECOND, Heartbeats

PERSON = 42


def lane() -> ChatLane:
    return ChatLane(PERSON, Limits().budget(PERSON, 0.0))


def prompt(not_before: float = 0.0, payload: str = "prompt", since: float = 0.0) -> Parcel:
    return Parcel(PERSON, "dm", Priority.ACT, since, Share.KEPT, True, True, payload, not_before)


def test_a_parcel_in_its_grace_waits_for_it_and_then_goes():
    queue = lane()
    queue.put(prompt(not_before=4.0))
    assert queue.next(1.0) == (None, 3.0)
    parcel, wait = queue.next(4.0)
    assert parcel is not None and parcel.payload == "prompt" and wait == 0.0


def test_a_newer_state_without_grace_goes_at_once_and_a_newer_grace_never_extends_one():
    queue = lane()
    queue.put(prompt(not_before=4.0))
    queue.put(prompt(not_before=6.0, payload="the same turn, redrawn", since=2.0))
    assert queue.next(3.0) == (None, 1.0), "the grace running is kept, not made longer"
    queue.put(prompt(payload="what they did", since=3.0))  # they acted: the record, at once
    parcel, _ = queue.next(3.0)
    assert parcel is not None and parcel.payload == "what they did" and parcel.since == 0.0


def test_a_parcel_put_back_keeps_its_own_grace():
    queue = lane()
    queue.put(prompt(not_before=4.0))
    queue.put(prompt(payload="older"), newer=False)
    assert queue.next(1.0)[0] is None


def test_hastened_it_goes_at_once_and_other_parcels_never_wait_for_it():
    queue = lane()
    queue.put(prompt(not_before=4.0))
    queue.put(Parcel(PERSON, "reply", Priority.REPLY, 0.5, Share.REPLY, payload="hello"))
    parcel, _ = queue.next(1.0)
    assert parcel is not None and parcel.payload == "hello", "the reply does not wait behind the grace"
    queue.done(parcel, 1.0)
    assert queue.hasten("dm") and not queue.hasten("dm") and not queue.hasten("nothing")
    parcel, _ = queue.next(1.0)
    assert parcel is not None and parcel.payload == "prompt"


def test_one_in_its_grace_never_takes_a_picked_parcels_place():
    queue = lane()
    queue.put(Parcel(PERSON, "info", Priority.INFO, 0.0, Share.KEPT, payload="info"))
    picked, _ = queue.next(0.0)
    assert picked is not None
    queue.put(Parcel(PERSON, "other", Priority.ACT, 0.5, Share.KEPT, True, payload="p", not_before=4.0))
    assert queue.more_urgent(picked, 1.0, new_message=True) is None
    assert queue.more_urgent(picked, 4.0, new_message=True) is not None


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_heartbeat_is_fresh_for_two_intervals_and_gone_when_hidden():
    clock = Clock()
    beats = Heartbeats(clock)
    assert not beats.fresh(1, PERSON)
    beats.beat(1, PERSON)
    clock.now += FRESH
    assert beats.fresh(1, PERSON) and not beats.fresh(2, PERSON) and not beats.fresh(1, 7)
    clock.now += 0.01
    assert not beats.fresh(1, PERSON)
    beats.beat(1, PERSON)
    beats.hidden(1, PERSON)
    assert not beats.fresh(1, PERSON)


def test_one_person_posts_a_burst_then_one_a_second():
    clock = Clock()
    beats = Heartbeats(clock)
    assert [beats.allowed(PERSON) for _ in range(BURST + 1)] == [True] * BURST + [False]
    assert beats.allowed(7), "another person's allowance is their own"
    clock.now += 1 / PER_SECOND
    assert beats.allowed(PERSON) and not beats.allowed(PERSON)


def test_what_is_kept_is_bounded():
    clock = Clock()
    beats = Heartbeats(clock)
    for person in range(KEPT_MAX):
        beats.beat(1, person)
        beats.allowed(person)
    clock.now += FRESH + BURST / PER_SECOND + 1
    beats.beat(1, -1)
    assert beats.allowed(-1)
    assert len(beats.last) == 1 and len(beats.allowance) == 1
