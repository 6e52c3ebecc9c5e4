"""The buttons people can press after the bot process was SIGKILLed at a chosen point of handling a
press and started again on the same database (issue 31; tests/process/e2e/test_restart_buttons.py).

- ``DealtBot``: the real ``python -m bot``, dealing the cards a test chose (``dealt/sitecustomize.py``)
  and serving its metrics on a port of their own: the depth of its send queue says when it is done.
- ``HoldingEmulator``: the emulator, keeping the requests a ``Hold`` names unanswered until it is
  released (after the kill): carried out by Telegram all the same (sent, never confirmed) or not at
  all (lost).
- ``press_and_kill``: one press, the bot killed at a ``KillPoint`` of handling it, started again.
- ``findings``: what is wrong with the buttons people see now: a chat with more than one message
  offering moves, someone who must act with no button to do it, a button the engine refuses (then
  pressed, through Telegram: the bot's refusal is the proof).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.display.game_kinds import KINDS
from bot.display.i18n import catalog
from bot.model import callbacks
from faketg.driver import Driver
from faketg.harness import GROUP, PEOPLE
from faketg.server import Emulator, _error, _params
from faketg.world import JSON, ApiError, Message, World
from games.cards import Card, format_cards
from games.errors import RuleError
from tests.process.e2e.process import BotProcess, Stage, free_port
from tests.process.reliability.players import Saved, saved_table
from tests.waiting import until

DEALT = Path(__file__).with_name("dealt")  # its sitecustomize.py deals PAIJU_TEST_DECK in the bot
NOT_MOVES = frozenset({"join", "leave", "ready"})  # the engines' options that are no move of a round
# What the bot answers a press it turns down with (bot/tables/acting.py: refusal_text), in the players'
# language.
REFUSALS = frozenset(
    text
    for key, text in catalog("zh-hans").items()
    if key.startswith(("error.", "press.")) and key != "press.no_cards"
)
QUIET = 0.2  # seconds without a request to the emulator before the bot counts as done sending


# -- the bot and the emulator ---------------------------------------------------------------------
@dataclass
class DealtBot(BotProcess):
    deck: tuple[Card, ...] = ()
    metrics_port: int = field(default_factory=free_port)

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(
            PYTHONPATH=os.pathsep.join([str(DEALT), env["PYTHONPATH"]]),
            PAIJU_TEST_DECK=format_cards(self.deck),
            PAIJU_METRICS="local",
            PAIJU_METRICS_LISTEN=f"127.0.0.1:{self.metrics_port}",
        )
        env.setdefault("PAIJU_TURN_SECONDS", "120")  # no turn runs out unless asked: every move a press
        return env

    async def queued(self) -> int:
        """How many messages the bot has waiting to be sent (its ``paiju_send_queue_depth``)."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        async with aiohttp.ClientSession() as http, http.get(url) as answer:
            text = await answer.text()
        for line in text.splitlines():
            if line.startswith("paiju_send_queue_depth "):
                return int(float(line.split()[1]))
        raise AssertionError(f"no paiju_send_queue_depth in the bot's metrics: {text[:300]}")


@dataclass
class Hold:
    """The requests ``matches`` names are taken and not answered until ``release``: carried out all
    the same when ``done`` (Telegram did it, the bot does not know), else lost."""

    matches: Callable[[str, JSON], bool]
    done: bool
    held: list[tuple[str, JSON]] = field(default_factory=list)
    answer: ApiError | None = None  # what the held requests get (None: a 502, to a bot that is gone)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def has(self, method: str | None = None, chat_id: int | None = None) -> bool:
        return any(
            (method is None or held_method == method)
            and (chat_id is None or str(params.get("chat_id")) == str(chat_id))
            for held_method, params in self.held
        )

    def release(self, answer: ApiError | None = None) -> None:
        """The held requests get ``answer`` now (none: the bot that sent them is dead)."""
        self.answer = answer
        self.released.set()


def to_chat(chat_id: int, *methods: str) -> Callable[[str, JSON], bool]:
    """A request to ``chat_id`` (of one of ``methods``, if any are named)."""
    return lambda method, params: (
        str(params.get("chat_id")) == str(chat_id) and (not methods or method in methods)
    )


class HoldingEmulator(Emulator):
    """The emulator with a ``hold``: the requests it names wait until the hold is released."""

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.hold: Hold | None = None

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        method, hold = request.match_info["method"], self.hold
        if hold is None or method == "getUpdates":
            return await super()._answer(request)
        params = await _params(request)
        if not hold.matches(method, params):
            return await super()._answer(_ReadAgain(request))  # type: ignore[arg-type]
        hold.held.append((method, params))
        if hold.done:
            with contextlib.suppress(ApiError):
                self.world.call(method, params)
        self.in_flight -= 1  # held on purpose: the rest of what the bot sends may settle meanwhile
        try:
            await hold.released.wait()
        finally:
            self.in_flight += 1
        return web.Response(status=502) if hold.answer is None else _error(hold.answer)

    def release(self) -> None:
        """The bot is dead: what was held ends, and nothing more is held."""
        if self.hold is not None:
            self.hold.release()
        self.hold = None


class _ReadAgain:
    """A request whose form the hold has read: aiohttp keeps the form, but says the body is read."""

    can_read_body = True

    def __init__(self, request: web.Request) -> None:
        self._request = request

    def __getattr__(self, name: str) -> object:
        return getattr(self._request, name)


async def dealt_stage(world: World, tmp: Path, deck: Iterable[Card], **env: str) -> Stage:
    """A started bot dealing ``deck`` (``env``: more settings), its emulator able to hold requests."""
    emulator = HoldingEmulator(world)
    await emulator.start()
    bot = DealtBot(emulator, tmp / "paiju.sqlite3", tmp / "bot.log", deck=tuple(deck), extra_env=env)
    stage = Stage(world, emulator, Driver.remote(world, emulator.deliver), bot)
    await bot.start()
    await settle(stage)
    return stage


async def settle(stage: Stage, timeout: float = 30.0) -> None:
    """Until the bot has nothing left to send: no update waiting, no press unanswered, nothing
    queued (its metrics), no request in flight (held ones aside) and none for ``QUIET`` s."""
    world, emulator, bot = stage.world, stage.emulator, stage.bot
    assert isinstance(bot, DealtBot)
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while loop.time() < give_up:
        seen = len(world.requests)
        waiting = any(int(str(update["update_id"])) >= emulator.taken_offset for update in world.updates)
        if not (waiting or emulator.in_flight or world.open_queries) and await bot.queued() == 0:
            quiet = world.clock() - world.last_request_at(exclude="getUpdates")
            if quiet >= QUIET and len(world.requests) == seen and emulator.in_flight == 0:
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the bot did not settle in {timeout} s")


# -- what people see and what the engine takes ------------------------------------------------------
@dataclass(frozen=True)
class Live:
    """A button of a move that a bot message shows now."""

    message: Message
    label: str
    data: str
    press: callbacks.Press

    @property
    def chat_id(self) -> int:
        return self.message.chat_id


def where(message: Message) -> str:
    chat = "the table" if message.chat_id == GROUP else f"{PEOPLE[message.chat_id]}'s DM"
    return f"{chat}, message {message.message_id}"


def live_moves(world: World, chats: Iterable[int]) -> list[Live]:
    """Every button of a move (a game's action, not a seat or the cards popup) shown in ``chats``."""
    found = []
    for chat in chats:
        for message in world.bot_messages(chat):
            for button in message.buttons:
                data = button.get("callback_data")
                press = callbacks.decode(str(data)) if data is not None else None
                if press is not None and press.action in KINDS[press.game].moves:
                    found.append(Live(message, str(button["text"]), str(data), press))
    return found


def seated(saved: Saved | None) -> list[int]:
    return [] if saved is None else [seat.person for seat in saved.engine.core.seats]


def must_act(saved: Saved | None) -> list[int]:
    """Who the engine waits for now (their options include a move of the round)."""
    if saved is None:
        return []
    return [
        person
        for person in seated(saved)
        if any(
            getattr(option, "move", option).value not in NOT_MOVES
            for option in saved.engine.legal_actions(person)
        )
    ]


def accepts(saved: Saved | None, press: callbacks.Press, person: int) -> bool:
    """Would the bot carry out ``person``'s press now: the table and round it names are the open
    ones (bot/tables/acting.py), and the engine as saved takes the move (tried on a copy)."""
    if saved is None or press.table_id != saved.table_id or press.round_no != saved.engine.core.round_no:
        return False
    engine = type(saved.engine).from_dict(saved.engine.to_dict())
    try:
        engine.apply(KINDS[saved.game].moves[press.action](person, press.arg))
    except RuleError:
        return False
    return True


async def press(stage: Stage, person: int, button: Live) -> str:
    """``person`` presses ``button``; what the bot answered (a popup's text, "" for none)."""
    before = len(stage.world.popups.get(person, []))
    await stage.driver.press_data(person, button.chat_id, button.message.message_id, button.data)
    said = stage.world.popups.get(person, [])[before:]
    return said[-1].text if said else ""


async def findings(stage: Stage, people: list[int]) -> list[tuple[str, str]]:
    """What is wrong with the buttons in the group and in ``people``'s DMs now, a line each with
    the place it is about (to tell it from a new one):

    (a) a chat with more than one message offering moves (two live prompts for one person), or
    someone the engine waits for whose DM offers them none;
    (b) a message offering a move the engine refuses to whoever may press it (the person of the
    DM; at the table, anyone seated): each such button is pressed by them through Telegram, and the
    bot's answer must be a refusal (else this judge is wrong, and the test says so)."""
    saved = saved_table(str(stage.bot.database))
    buttons = live_moves(stage.world, [GROUP, *people])
    lines = []
    for chat in [GROUP, *people]:
        shown = sorted({b.message.message_id for b in buttons if b.chat_id == chat})
        if len(shown) > 1:
            owner = "the table" if chat == GROUP else f"{PEOPLE[chat]}'s DM"
            lines.append((f"{chat} {shown}", f"{owner}: {len(shown)} messages offer moves at once {shown}"))
    for person in must_act(saved):
        if person in people and not any(b.chat_id == person for b in buttons):
            lines.append((f"{person} unasked", f"{PEOPLE[person]} must act; their DM offers no button"))
    refused: dict[tuple[int, int], list[str]] = {}
    for button in buttons:
        pressers = [button.chat_id] if button.chat_id != GROUP else seated(saved)
        if any(accepts(saved, button.press, person) for person in pressers):
            continue
        presser = button.chat_id if button.chat_id != GROUP else (must_act(saved) or pressers or people)[0]
        answer = await press(stage, presser, button)
        assert answer in REFUSALS, (
            f"{where(button.message)} [{button.label}]: judged refused, answered {answer!r}"
        )
        refused.setdefault((button.chat_id, button.message.message_id), []).append(
            f"[{button.label}] {answer!r}"
        )
    for (chat, message_id), answers in refused.items():
        place = where(stage.world.messages[(chat, message_id)])
        lines.append((place, f"{place} offers moves the bot refuses when pressed: {', '.join(answers)}"))
    return lines


def find_button(
    world: World, person: int, action: str, arg: str | None = None, table: bool = True
) -> Live | None:
    """The button of ``action`` in ``person``'s newest DM prompt that has it, else (with ``table``)
    the table's."""
    for chat in (person, GROUP) if table else (person,):
        for button in reversed(live_moves(world, [chat])):
            if button.press.action == action and (arg is None or button.press.arg == arg):
                return button
    return None


# -- killing the bot at a point of a press -----------------------------------------------------------
class KillPoint(Enum):
    """Where, in the handling of one press, the bot is SIGKILLed."""

    # The move is saved and the bot answers the press: nothing it sent about it reached Telegram.
    BEFORE_ANSWER = "before-answer"
    # Telegram carried out the answer and the first request to each chat it changed (the table, the
    # presser's DM, the DM of each person now asked), and no answer came back to the bot.
    UNCONFIRMED = "unconfirmed"
    # The press is answered and everything it changed is shown, except that after a new prompt in
    # a DM (a new message with buttons), what the bot sends next to that DM is lost.
    AFTER_ANSWER = "after-answer"


def after_a_prompt(prompted: set[str], chats: Iterable[int] | None = None) -> Callable[[str, JSON], bool]:
    """A request to a DM (of ``chats``, if named) after a new prompt there (which goes through and
    is noted in ``prompted``)."""
    only = None if chats is None else {str(chat) for chat in chats}

    def matches(method: str, params: JSON) -> bool:
        chat = str(params.get("chat_id", ""))
        if chat in prompted:
            return True
        new_prompt = method == "sendMessage" and chat.isdigit() and bool(params.get("reply_markup"))
        if new_prompt and (only is None or chat in only):
            prompted.add(chat)
        return False

    return matches


async def press_and_kill(stage: Stage, person: int, button: Live, point: KillPoint) -> None:
    """``person`` presses ``button``; the bot is killed at ``point`` of handling it, then started
    again on the same database, and left to send what it will."""
    world, emulator = stage.world, stage.emulator
    assert isinstance(emulator, HoldingEmulator)
    database = str(stage.bot.database)
    waited = set(must_act(saved_table(database)))
    update = world.press(person, button.chat_id, button.message.message_id, button.data)
    if point is KillPoint.AFTER_ANSWER:
        prompted: set[str] = set()
        emulator.hold = Hold(after_a_prompt(prompted), done=False)
        await emulator.deliver(update)
        await settle(stage)
    else:
        hold = emulator.hold = Hold(lambda method, params: True, done=point is KillPoint.UNCONFIRMED)
        await emulator.notify()
        await until(lambda: hold.has("answerCallbackQuery"), "the bot answers the press")
        if point is KillPoint.UNCONFIRMED:  # (saved before its answer: who is asked now)
            asked = set(must_act(saved_table(database))) - waited
            for chat in [GROUP, person, *asked]:
                await until(lambda chat=chat: hold.has(chat_id=chat), f"the bot sends to chat {chat}")
    await restart(stage, update)


async def restart(stage: Stage, update: JSON | None = None) -> None:
    """SIGKILL the bot, start it again on the same database, and wait until it is done sending."""
    await stage.bot.kill()
    assert isinstance(stage.emulator, HoldingEmulator)
    stage.emulator.release()
    query = None if update is None else update.get("callback_query")
    if isinstance(query, dict):  # a press the dead bot never answered: Telegram lets it go (a bot that
        stage.world.open_queries.pop(str(query["id"]), None)  # gets it again answers too late: 400)
    await stage.bot.start()
    await settle(stage)
