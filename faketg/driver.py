"""Simulated people using the bot, the one driver of the tests (in process, over HTTP, several
workers): they send commands, press buttons by label, leave groups, and read what they see (the
group, their DMs, their popups); and the scenes every level plays: a table opened and started, a
muxi round finished by everyone's choice in their DMs, a round played to its end by whatever each
is shown (``Driver``). Who presses what at random or by the rules is the reliability tests' own
(``tests/process/reliability``: by the saved table, or by the buttons shown, under chaos), built on these.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from telegram import Update
from telegram.ext import Application

from faketg.world import JSON, Message, World

REMOTE_PATIENCE = 30.0  # seconds a press waits for its button from a bot in another process
# What a player presses to move a round on, the first of these they are shown (the bank, in the
# group or in their DM; then a draw's or a bet's choice in their DM).
CHOICES = ("当庄", "不补", "过牌", "跟注", "补牌", "弃牌")


class Driver:
    """People acting on ``world``; ``deliver`` hands their updates to the bot and waits for it.

    ``patience``: seconds a press by label or data waits for a message showing that button. A bot
    in process has sent what an update changed before ``deliver`` returns (0); a bot over HTTP
    counts as done once it falls quiet for a moment, which a busy machine can stretch past its
    next message (``remote``)."""

    def __init__(
        self, world: World, deliver: Callable[[JSON], Awaitable[None]], patience: float = 0.0
    ) -> None:
        self.world = world
        self.deliver = deliver
        self.patience = patience

    @classmethod
    def remote(cls, world: World, deliver: Callable[[JSON], Awaitable[None]]) -> Driver:
        """People using a bot over HTTP (another process, or the bot served in this one)."""
        return cls(world, deliver, REMOTE_PATIENCE)

    @classmethod
    def in_process(
        cls, world: World, application: Application, settle: Callable[[], Awaitable[None]] | None = None
    ) -> Driver:
        """The bot's Application in this process: each update is processed before the call returns,
        and then ``settle`` (the bot's messages sent) is awaited."""

        async def deliver(update: JSON) -> None:
            await process(application, update)
            if settle is not None:
                await settle()

        return cls(world, deliver)

    async def send(self, person: int, chat_id: int, text: str) -> int:
        """``person`` writes ``text`` (a command) in a group or in their DM (``chat_id == person``);
        the id of the message they wrote (to edit it later)."""
        update = self.world.post(person, chat_id, text)
        await self.deliver(update)
        message = update["message"]
        assert isinstance(message, dict)
        return int(message["message_id"])

    async def send_as(self, chat_id: int, as_chat: int, text: str) -> None:
        """Someone writes ``text`` in a group as the channel ``as_chat``, or as an anonymous admin
        (``as_chat == chat_id``)."""
        await self.deliver(self.world.post_as(chat_id, as_chat, text))

    async def edit(self, person: int, chat_id: int, message_id: int, text: str) -> None:
        """``person`` edits their message ``message_id`` to say ``text``."""
        await self.deliver(self.world.edit(person, chat_id, message_id, text))

    async def press(
        self,
        person: int,
        chat_id: int,
        label: str | None = None,
        *,
        data: str | None = None,
        message: Message | None = None,
    ) -> None:
        """Press a button of the newest bot message in the chat that has it (by label or data),
        once one shows it (``patience``)."""
        message = message or await self.shown(chat_id, label=label, data=data)
        button = self._button(message, label, data)
        await self.deliver(
            self.world.press(person, chat_id, message.message_id, str(button["callback_data"]))
        )

    async def leave_group(self, person: int, chat_id: int) -> None:
        await self.deliver(self.world.leave_group(person, chat_id))

    # -- what people see ------------------------------------------------------------------------
    async def shown(self, chat_id: int, *, label: str | None = None, data: str | None = None) -> Message:
        """The newest bot message in the chat with that button, waiting up to ``patience`` for one."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.patience
        while True:
            try:
                return self.message_with(chat_id, label=label, data=data)
            except LookupError:
                if loop.time() >= give_up:
                    raise
            await asyncio.sleep(0.02)

    def message_with(self, chat_id: int, *, label: str | None = None, data: str | None = None) -> Message:
        for message in reversed(self.world.bot_messages(chat_id)):
            if any(self._matches(button, label, data) for button in message.buttons):
                return message
        raise LookupError(f"no message in {chat_id} has a button {label or data!r}")

    @staticmethod
    def _matches(button: dict[str, object], label: str | None, data: str | None) -> bool:
        if data is not None:
            return button.get("callback_data") == data
        return label is not None and label in str(button.get("text", ""))

    def _button(self, message: Message, label: str | None, data: str | None) -> dict[str, object]:
        exact = [button for button in message.buttons if label is not None and button.get("text") == label]
        for button in exact or message.buttons:
            if self._matches(button, label, data):
                return button
        raise LookupError(f"message {message.message_id} has no button {label or data!r}")

    def button_data(self, chat_id: int, label: str) -> tuple[int, str]:
        """The message id and callback data of a button, to press it again later (when it is stale)."""
        message = self.message_with(chat_id, label=label)
        return message.message_id, str(self._button(message, label, None)["callback_data"])

    async def press_data(self, person: int, chat_id: int, message_id: int, data: str) -> None:
        """Press a button with this data under this message, even one the message no longer shows."""
        await self.deliver(self.world.press(person, chat_id, message_id, data))

    def last(self, chat_id: int) -> str:
        """The text of the newest bot message in a chat."""
        messages = self.world.bot_messages(chat_id)
        return messages[-1].text if messages else ""

    def table(self, chat_id: int) -> str:
        """The text of the newest bot message in a group that answers no message: a table's
        (replies to commands answer the command's message)."""
        table = newest_table(self.world, chat_id)
        return table.text if table else ""

    def texts(self, chat_id: int) -> list[str]:
        return [message.text for message in self.world.bot_messages(chat_id)]

    def popup(self, person: int) -> str:
        popups = self.world.popups.get(person, [])
        return popups[-1].text if popups else ""

    def labels(self, chat_id: int) -> list[str]:
        """The labels of the newest bot message in a chat (none: [])."""
        messages = self.world.bot_messages(chat_id)
        return [str(button["text"]) for button in messages[-1].buttons] if messages else []

    def buttons(self, chat_id: int) -> list[str]:
        """The labels of the newest bot message in a chat that has any."""
        message = newest_with_buttons(self.world, chat_id)
        return [str(button["text"]) for button in message.buttons] if message else []

    def table_message(self, chat_id: int) -> Message:
        """The group's table as it stands: the newest bot message with buttons, or with a result."""
        return next(m for m in reversed(self.world.bot_messages(chat_id)) if m.buttons or "结算" in m.text)

    def settled(self, chat_id: int) -> bool:
        """Has a round in the group been settled?"""
        return any("结算" in message.text for message in self.world.bot_messages(chat_id))

    # -- scenes -------------------------------------------------------------------------------------
    async def open_table(self, chat_id: int, people: list[int], game: str = "muxi") -> None:
        """``people[0]`` opens a ``game`` table in the group, the others join, and everyone presses
        start: the first round is dealt (a muxi round asks for a banker first)."""
        await self.send(people[0], chat_id, f"/newgame {game}")
        for person in people[1:]:
            await self.press(person, chat_id, "加入")
        for person in people:
            await self.press(person, chat_id, "开始")

    async def bank_and_stand(
        self, chat_id: int, banker: int, players: list[int], *, in_dms: bool = False
    ) -> None:
        """A muxi round asking for its banker, played out: ``banker`` takes the bank, each of
        ``players`` stands, then the banker stands; each by the group's table (``in_dms``: by the
        prompt in their DM)."""
        await self.press(banker, banker if in_dms else chat_id, "当庄")
        for person in players:
            await self.press(person, person if in_dms else chat_id, "不补")
        await self.press(banker, banker if in_dms else chat_id, "不补")

    async def finish_muxi_round(self, chat_id: int, people: list[int]) -> int:
        """Everyone who must choose stands (or draws, when that is all they may do), by their DM's
        buttons, until the round in the group is settled; how many were asked (a hand that stands
        by itself, a tiangong, is never asked)."""
        asked: set[int] = set()
        for _ in range(2 * len(people)):
            if "结算" in self.table_message(chat_id).text:
                return len(asked)
            for person in people:
                shown = self.labels(person)
                if shown:
                    await self.press(person, person, "不补" if "不补" in shown else "补牌")
                    asked.add(person)
        raise AssertionError(f"the round did not end: {self.table_message(chat_id).text}")

    async def play_to_the_end(self, chat_id: int, people: list[int], timeout: float = 90.0) -> None:
        """Everyone asked presses the first of ``CHOICES`` their DM shows (or the group, for the
        bank) until the round in the group is settled."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout
        while not self.settled(chat_id):
            if loop.time() > give_up:
                raise AssertionError(f"not in {timeout:g} s: the round in {chat_id} settled")
            await self._press_a_choice(chat_id, people)
            await asyncio.sleep(0.02)

    async def _press_a_choice(self, chat_id: int, people: list[int]) -> None:
        for person in people:
            for where in (person, chat_id):
                shown = self.buttons(where)
                choice = next((label for label in CHOICES if label in shown), None)
                if choice is not None and (where == person or choice == "当庄"):
                    await self.press(person, where, choice)
                    return


def newest_with_buttons(world: World, chat_id: int) -> Message | None:
    """The newest bot message in a chat that has buttons."""
    for message in reversed(world.bot_messages(chat_id)):
        if message.buttons:
            return message
    return None


def newest_table(world: World, chat_id: int) -> Message | None:
    """The newest bot message in a group that answers no message: a table's (replies to commands
    answer the command's message)."""
    tables = [message for message in world.bot_messages(chat_id) if message.reply_to is None]
    return tables[-1] if tables else None


async def process(application: Application, update: JSON) -> None:
    """``update`` handled as the running bot handles one: through the Application's update
    processor (the bot's saves each update's id) and ``Application.process_update``."""
    parsed = Update.de_json(update, application.bot)
    await application.update_processor.process_update(parsed, application.process_update(parsed))
