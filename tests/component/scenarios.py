"""Scenes the in-process bot tests share, so that no test module imports another: a table opened
and started (the driver's scene, in the group), whose turn it is, the newest message and its
buttons, a turn's reminder falling due, an update handled before anything is sent, the group's
table budget spent. A table opened and started serves the whole-process tests too.

Built on the harness (the real Application against the fake Telegram); the dealt cards come from
``tests/component/decks.py``.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Protocol

from bot.send.rate_policy import WINDOW, WINDOW_MARGIN, GroupBudget, Limits, Share
from faketg.driver import Driver, process
from faketg.harness import GROUP, Bot
from faketg.world import JSON, Message

if TYPE_CHECKING:
    from bot.model.live_table import LiveTable


class Played(Protocol):
    """A bot the fake people play with: in process (``Bot``) or a process (``tests/process/e2e``'s Stage)."""

    @property
    def driver(self) -> Driver: ...


async def open_and_start(played: Played, people: list[int], game: str = "muxi") -> None:
    """``people[0]`` opens a ``game`` table in the group, the others join, and everyone presses
    start: the first round is dealt (a muxi round asks for a banker first). The driver's scene
    (``Driver.open_table``), in the group."""
    await played.driver.open_table(GROUP, people, game)


def live_table(bot: Bot) -> LiveTable:
    """The group's open table, as the bot holds it."""
    live = bot.runtime.tables.get(GROUP)
    assert live is not None, "no table is open in the group"
    return live


async def act(bot: Bot, label: str) -> int:
    """The person whose turn it is (showhand) presses the button whose label starts with ``label``;
    who that was."""
    person = live_table(bot).engine.turn
    assert person is not None, "nobody's turn"
    await bot.driver.press(person, GROUP, label)
    return person


async def snapshot(bot: Bot) -> tuple[dict[str, object] | None, dict[int, int]]:
    """The group's table as the engine holds it and the coins of 1, 2 and 3: the same before and
    after something the bot must refuse means nothing happened."""
    live = bot.runtime.tables.get(GROUP)
    coins = {person: await bot.balance(person) for person in (1, 2, 3)}
    return (live.engine.to_dict() if live else None), coins


def newest(bot: Bot, chat_id: int) -> Message:
    """The bot's newest message in ``chat_id`` (a group, or a person's DM)."""
    return bot.world.bot_messages(chat_id)[-1]


def labels(message: Message) -> list[str]:
    """The labels of a message's buttons, in order."""
    return [str(button["text"]) for button in message.buttons]


async def remind(bot: Bot) -> None:
    """A third of the running turn is left now: the reminder the bot scheduled runs at once."""
    live = live_table(bot)
    assert bot.runtime.turns.moment(live.table_id) == "reminder"
    bot.runtime.turns.disarm(live.table_id)
    await bot.runtime.turns.remind(live.chat_id, live.table_id, live.engine.core.timer)
    await bot.runtime.wait_idle()


async def handle(bot: Bot, update: JSON) -> None:
    """The bot handles ``update``; what it queued is not sent yet (nothing waits for the sender)."""
    await process(bot.application, update)


def spend_the_group_budget(bot: Bot, leaving: dict[float, int], chat_id: int = GROUP) -> None:
    """The group has had its 20 requests of the last minute (Telegram's limit, the bot's real
    budget from now on): ``leaving[seconds]`` of them leave the window in that many seconds, the
    rest long after."""
    now = time.monotonic()
    budget = GroupBudget(Limits(), now)
    limit = budget.limit
    for seconds, count in leaving.items():
        budget.sent.extend([(now - WINDOW - WINDOW_MARGIN + seconds, Share.KEPT)] * count)
    budget.sent.extend([(now - 1.0, Share.KEPT)] * (limit - len(budget.sent)))
    budget.sent = deque(sorted(budget.sent))
    bot.runtime.presenter.sender.lanes[chat_id].budget = budget


def empty_the_table_budget(bot: Bot, chat_id: int = GROUP, seconds: float = 1.6) -> None:
    """The group's table share is spent: its next edit waits about ``seconds``."""
    bucket = bot.runtime.presenter.sender.lanes[chat_id].budget.table
    bucket.tokens = 1 - seconds * bucket.per_second
    bucket.at = time.monotonic()
