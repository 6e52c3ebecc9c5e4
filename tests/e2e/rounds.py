"""A round as the whole-process tests play it: the group's table message, a person's DM buttons,
and a muxi round finished by everyone standing in their DMs.
"""

from __future__ import annotations

from faketg.harness import GROUP
from faketg.world import Message
from tests.e2e.process import Stage


def table_of(stage: Stage) -> Message:
    """The newest bot message in the group that has buttons (the table)."""
    return next(m for m in reversed(stage.world.bot_messages(GROUP)) if m.buttons or "结算" in m.text)


def dm_buttons(stage: Stage, person: int) -> list[str]:
    """The buttons of the person's newest DM from the bot (their own draw / stand)."""
    messages = stage.world.bot_messages(person)
    return [str(button["text"]) for button in messages[-1].buttons] if messages else []


async def finish_muxi_round(stage: Stage, people: list[int]) -> int:
    """Everyone who must choose stands (or draws, when that is all they may do), by DM buttons;
    return how many were asked (a hand that stands by itself, a tiangong, is never asked)."""
    asked: set[int] = set()
    for _ in range(2 * len(people)):
        if "结算" in table_of(stage).text:
            return len(asked)
        for person in people:
            buttons = dm_buttons(stage, person)
            if buttons:
                await stage.driver.press(person, person, "不补" if "不补" in buttons else "补牌")
                asked.add(person)
    raise AssertionError(f"the round did not end: {table_of(stage).text}")
