"""The minimal reference bot of benchmark 5 (``bench.reference_bot``) plays muxi with the simulated
people of ``bench.crowd`` through the HTTP emulator, as the real bot does, within Telegram's limits."""

from collections import deque

import pytest

from bench.crowd import LANGUAGE
from bench.people import TableSpec
from bench.reference_bot import GROUP_KEEP, Outbox, Parcel, Window
from bench.session import Session
from bench.stage import BotSpec
from bot.display.i18n import t
from faketg.limits import FloodLimits, group_peaks
from tests.waiting import until

FAST = (0.05, 0.3)  # seconds from seeing a prompt to pressing
MUXI = TableSpec("muxi", -4_000_000, tuple(4_000_000 + seat for seat in range(5)))


async def test_the_reference_bot_plays_muxi_rounds_to_their_end_with_the_crowd():
    limits = FloodLimits(pessimistic=True)
    bot = BotSpec("bench.reference_bot", env=(("PAIJU_BOT_REQUESTS_PER_SECOND", "30"),))
    async with Session(1, limits, bot, specs=[MUXI], pace=FAST, rounds=2) as run:
        assert run.crowd is not None
        run.crowd.open_tables(0)
        await until(lambda: len(run.crowd.seen.rounds) >= 2, "two muxi rounds finished", timeout=60)
        world, seen = run.world, run.crowd.seen
        assert [end.round_no for end in seen.rounds] == [1, 2] and not seen.timeouts
        # Every turn was shown and taken in time: the banker question once a round (always accepted),
        # then a draw or stand by everyone whose hand may draw; every press answered, none refused.
        for round_no in (1, 2):
            moves = [r.action for r in seen.presses if r.round_no == round_no and r.move]
            assert moves[0] == "banker" and set(moves[1:]) <= {"draw", "stand"} and len(moves) <= 6, moves
        assert all(r.answered is not None and not r.refused for r in seen.presses)
        # Each player's DM showed their cards and their buttons; the results were on the table.
        table = world.bot_messages(MUXI.chat_id)[-1]
        assert t(LANGUAGE, "round.verify", table=1, round=2) in table.text
        assert all(world.bot_messages(person) for person in MUXI.people)
        # Within Telegram's limits: no 429, at most 20 requests in any minute to the group.
        assert not [r for r in world.requests if r.error == 429]
        assert max(group_peaks(world.requests, world.chats).values()) <= 20


async def test_the_reference_bot_sends_prompts_first_and_only_the_latest_state_within_its_windows():
    outbox = Outbox(api=None, per_second=30)  # nothing is sent: only what would go next is asked
    group, dm = Parcel(-1, private=False), Parcel(5, private=True)
    outbox.want(group, "ready marks", None, frozenset())
    outbox.want(group, "more ready marks", None, frozenset())
    outbox.want(dm, "your turn", None, frozenset({(1, "move")}))
    assert outbox._pick(0.0)[0] is dm and group.wanted == ("more ready marks", None, frozenset())
    outbox.want(dm, "nothing new", None, frozenset())  # no longer a prompt: first come, first served
    assert outbox._pick(0.0)[0] is group
    group.shown = ("shown", None)
    outbox.want(group, "shown", None, frozenset())  # what Telegram shows already: nothing to send
    assert group.wanted is None and outbox._pick(0.0)[0] is dm
    # A window counts a request from its start until its answer plus the window's length.
    window = Window(2, 1.0)
    window.flying = 1
    assert window.wait(10.0) == 0 and window.wait(10.0, keep=1) == float("inf")
    window.flying, window.ends = 0, deque([10.0, 10.5])
    assert window.wait(10.6) == pytest.approx(0.4) and window.wait(10.6, keep=1) == pytest.approx(0.9)
    assert window.wait(11.0) == 0
    # An informational state leaves the last places of a group's minute to prompts.
    outbox.chats[-1] = Window(20, 60.0)
    outbox.chats[-1].ends = deque([0.0] * (20 - GROUP_KEEP))
    outbox.want(dm, "shown", None, frozenset())
    outbox.want(group, "a move shown", None, frozenset())
    assert outbox._pick(1.0) == (dm, 0.0)
    dm.wanted = None
    outbox.others.pop(dm)
    assert outbox._pick(1.0) == (None, pytest.approx(59.0))
    outbox.want(group, "the banker's turn", None, frozenset({(1, "move", 7)}))
    assert outbox._pick(1.0) == (group, 0.0)
