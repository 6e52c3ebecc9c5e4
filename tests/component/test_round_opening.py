"""A round is dealt only once its group has seen it (issue 51, point 1): the new round's table
message, with its base and 🔐 shuffle commitment, goes first in the group's budget (the replies'
share too); until Telegram has confirmed it, nobody is shown a card of the round (no DM, no Mini
App hand) and its turn's clock does not run. A busy group waits for it, the turn losing no time."""

from __future__ import annotations

import json

from faketg.harness import GROUP
from tests.component.decks import SHOWHAND_ACES_WIN, stack_showhand
from tests.component.scenarios import act, handle, live_table, open_and_start, spend_the_group_budget

SENDS = ("sendMessage", "editMessageText", "editMessageReplyMarkup")


async def play_out(bot) -> None:
    """Whoever's turn it is checks (or calls) until the game is over."""
    while live_table(bot).in_round:
        labels = bot.driver.labels(GROUP)
        await act(bot, next(label for label in labels if label.startswith(("过牌", "跟注"))))


async def test_a_busy_group_sees_the_round_s_commitment_before_anyone_sees_a_card(bot, world):
    """The group had 20 requests in the last minute: 3 leave the window in 1.5 s, 5 more in 3 s.
    The new round's table message takes the first free request (not the table's share, which
    needs 6 free): the hole cards' DMs follow it, and the turn counts from when it was seen."""
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    await d.press(1, GROUP, "继续下一局")
    spend_the_group_budget(bot, {1.5: 3, 3.0: 5})
    before, pressed = len(world.requests), world.clock()
    await d.press(2, GROUP, "继续下一局")
    live = live_table(bot)
    assert live.round_no == 2 and not live.opening_unseen
    sent = [r for r in world.requests[before:] if r.method in SENDS and not r.error]
    opening = next(
        r for r in sent if r.chat_id == GROUP and live.view.commitment[:4] in r.params.get("text", "")
    )
    dms = [r for r in sent if r.chat_id in (1, 2)]
    assert dms, "the hole cards went out"
    assert all(r.at >= opening.at for r in dms), "no card before the group saw the commitment"
    assert 1.4 < opening.at - pressed < 2.9, "it took the first request the group had free"
    assert live.deadline >= opening.at + live.engine.core.turn_seconds - 0.3, "the turn lost no time"
    dealt = [r for r in dms if "底牌" in json.dumps(r.params, ensure_ascii=False)]
    assert dealt, "their DMs show the new round's hole card"


async def test_a_deadline_that_comes_before_the_group_saw_the_round_waits_for_it(bot, world):
    """The round's table message cannot go for 2 s (the group's minute is full): its deadline
    coming meanwhile acts for nobody, no DM and no call tell of the round; once the group has seen
    it, the turn starts over, whole."""
    d = bot.driver
    stack_showhand(bot, [1, 2], 1, SHOWHAND_ACES_WIN)
    await open_and_start(bot, [1, 2], "showhand")
    await play_out(bot)
    await d.press(1, GROUP, "继续下一局")
    spend_the_group_budget(bot, {2.0: 8})
    before = len(world.requests)
    message_id, data = d.button_data(GROUP, "继续下一局")
    await handle(bot, world.press(2, GROUP, message_id, data))  # (nothing waits for the sender)
    live = live_table(bot)
    timer = live.engine.core.timer
    assert live.round_no == 2 and live.opening_unseen
    assert bot.runtime.turns.moment(live.table_id) == "deadline", "no reminder while unseen"
    await bot.runtime.turns.timeout(GROUP, live.table_id, timer)  # its deadline, come early
    assert live.engine.core.timer == timer and live.turn.held, "nobody timed out"
    assert not [r for r in world.requests[before:] if r.method in SENDS], "nothing sent yet"

    await bot.runtime.wait_idle()
    assert not live.opening_unseen
    [opening] = [r for r in world.requests[before:] if r.chat_id == GROUP and r.method in SENDS][:1]
    await bot.fire_timer()  # armed at the old deadline, past: the held turn starts over now
    assert live.engine.core.timer == timer and not live.turn.held, "still nobody timed out"
    assert live.deadline >= opening.at + live.engine.core.turn_seconds
    dms = [r for r in world.requests[before:] if r.chat_id in (1, 2) and r.method in SENDS]
    assert dms and min(r.at for r in dms) >= opening.at
