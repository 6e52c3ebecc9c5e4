"""Simulated people playing whole tables, as fast as the bot answers (or at a pace given to them).

They know only what Telegram shows them: the table message in the group, their DMs, and the answer
to each press (no text, or their own hand: accepted; another text: refused, or a popup). In
process, an update is done once the bot has sent what it changed, so after each answer the people
read their DMs to decide the next press; the group's table message, whose edits the bot spaces
out, is read only to open a table and to find their way back after an unexpected refusal (a
deadline that passed, say).

One front door (``Front``) serves both the in-process Application and the bot process behind the
HTTP emulator: it hands an update to the bot and waits for the bot's answer to it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from random import Random

from bot.model import callbacks
from faketg.world import BOT_ID, JSON, Message, World

Deliver = Callable[[JSON], Awaitable[None]]
Pause = Callable[[], Awaitable[None]]
WALLET = 1_000_000_000  # the bot's starting grant in benchmarks: nobody runs out of coins


class BenchWorld(World):
    """The fake Telegram, plus an index of each chat's newest bot message and waiters for answers."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock)
        self.newest: dict[int, Message] = {}
        self._answers: dict[str, asyncio.Future[tuple[str | None, float]]] = {}
        self._posts: dict[int, asyncio.Future[float]] = {}

    def expect_answer(self, query_id: str) -> asyncio.Future[tuple[str | None, float]]:
        future: asyncio.Future[tuple[str | None, float]] = asyncio.get_running_loop().create_future()
        self._answers[query_id] = future
        return future

    def expect_post(self, chat_id: int) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._posts[chat_id] = future
        return future

    def waiting(self) -> int:
        """Updates the people still wait on (a press not answered, a command not answered)."""
        return sum(not f.done() for f in self._answers.values()) + sum(
            not f.done() for f in self._posts.values()
        )

    def api_sendMessage(self, params: JSON) -> JSON:
        result = super().api_sendMessage(params)
        chat_id, message_id = int(str(params["chat_id"])), int(str(result["message_id"]))
        self.newest[chat_id] = self.messages[(chat_id, message_id)]
        waiter = self._posts.pop(chat_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(time.perf_counter())
        return result

    def api_answerCallbackQuery(self, params: JSON) -> bool:
        result = super().api_answerCallbackQuery(params)
        waiter = self._answers.pop(str(params["callback_query_id"]), None)
        if waiter is not None and not waiter.done():
            waiter.set_result((str(params.get("text") or "") or None, time.perf_counter()))
        return result


@dataclass
class Tally:
    """What the people saw: each update's latency (press -> the bot's answer; command -> its post)."""

    latencies: list[float] = field(default_factory=list)
    handled_at: list[float] = field(default_factory=list)  # perf_counter when each update was handled
    refused: int = 0
    unanswered: int = 0
    resyncs: int = 0
    rounds: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0  # seconds the people played

    by_kind: dict[str, list[float]] = field(default_factory=dict)  # latencies by button action / command

    def handled(self, sent: float, done: float, kind: str) -> None:
        self.latencies.append(done - sent)
        self.handled_at.append(done)
        self.by_kind.setdefault(kind, []).append(done - sent)

    @property
    def updates(self) -> int:
        return len(self.latencies)

    def within(self, start: float, end: float) -> int:
        return sum(1 for moment in self.handled_at if start <= moment <= end)


class Front:
    """The people's side of Telegram: hand the bot an update, wait for what it does about it."""

    def __init__(self, world: BenchWorld, deliver: Deliver, tally: Tally, timeout: float = 60.0) -> None:
        self.world, self.deliver, self.tally, self.timeout = world, deliver, tally, timeout

    async def command(self, person: int, chat_id: int, text: str) -> bool:
        """``person`` sends ``text`` in a group; True once the bot posted its answer there."""
        posted = self.world.expect_post(chat_id)
        sent = time.perf_counter()
        await self.deliver(self.world.post(person, chat_id, text))
        try:
            done = await asyncio.wait_for(posted, self.timeout)
        except TimeoutError:
            self.tally.unanswered += 1
            return False
        self.tally.handled(sent, done, text.split()[0])
        return True

    async def press(self, person: int, chat_id: int, message_id: int, data: str) -> str | bool | None:
        """The answer's text (None: accepted without a word); False when the bot never answered."""
        update = self.world.press(person, chat_id, message_id, data)
        query = update["callback_query"]
        assert isinstance(query, dict)
        answered = self.world.expect_answer(str(query["id"]))
        sent = time.perf_counter()
        await self.deliver(update)
        try:
            text, done = await asyncio.wait_for(answered, self.timeout)
        except TimeoutError:
            self.tally.unanswered += 1
            return False
        press = callbacks.decode(data)
        self.tally.handled(sent, done, press.action if press else data)
        if text is not None and text.startswith(OWN_HAND):
            return None  # accepted: the answer to a move carries the presser's hand
        if text is not None:
            self.tally.refused += 1
        return text


# How the answer to an accepted move begins (it carries the presser's hand), in the bench's language.
OWN_HAND = ("你的牌：", "底牌：")


@dataclass(frozen=True)
class TableSpec:
    game: str  # "muxi" or "showhand"
    chat_id: int
    people: tuple[int, ...]  # the opener first


def table_specs(
    count: int,
    first_chat: int = -1_000_000,
    first_person: int = 1_000_000,
    games: tuple[str, ...] = ("muxi", "showhand"),
) -> list[TableSpec]:
    """``count`` tables in their own groups, their games taken in turn from ``games`` (muxi with 5
    people, showhand with 4; by default alternately). Person ids all have 7 digits, so one name
    ("P1000123") is never part of another."""
    specs = []
    for index in range(count):
        game = games[index % len(games)]
        size = 5 if game == "muxi" else 4
        people = tuple(first_person + index * 10 + seat for seat in range(size))
        specs.append(TableSpec(game, first_chat - index, people))
    return specs


def seat_people(world: World, specs: list[TableSpec]) -> None:
    """Everyone exists, has opened a DM with the bot, and is a member of their table's group."""
    for spec in specs:
        for person in spec.people:
            world.add_person(person, f"P{person % 100_000}", language="zh-hans")
        world.add_group(spec.chat_id, f"Bench {-spec.chat_id}", list(spec.people))


class Stopped(Exception):
    """Time is up, or the bot stopped answering: the table's people go home."""


class TablePlayers:
    """The people of one table, playing round after round."""

    def __init__(
        self,
        front: Front,
        spec: TableSpec,
        rng: Random,
        stop: Callable[[], bool],
        pause: Pause | None = None,
    ) -> None:
        self.front, self.spec, self.rng, self.stop, self.pause = front, spec, rng, stop, pause
        self.world = front.world
        self.table_id = 0
        self.round_no = 0  # the round (muxi) or game (showhand) number the buttons carry
        self.rounds = 0
        self.first_asked = 0  # where to start asking for the banker (muxi)
        self.consumed: dict[int, tuple[int, int]] = {}  # person -> their DM (id, edits) when they last acted

    # -- what the people see -----------------------------------------------------------------------
    def table_message(self) -> Message:
        return self.world.newest[self.spec.chat_id]

    def dm_buttons(self, person: int) -> tuple[Message, list[str]] | None:
        """The buttons of ``person``'s DM for this table and round, with the DM.

        A DM the bot has not changed since its owner's last accepted press is not read again: the
        bot leaves the last mover's buttons in place when a round ends (see bench/README.md).
        """
        message = self.world.newest.get(person)
        if message is None or message.sender != BOT_ID:
            return None
        if self.consumed.get(person) == (message.message_id, message.edits):
            return None
        found = [str(b["callback_data"]) for b in message.buttons if "callback_data" in b]
        mine = [data for data in found if self._current(callbacks.decode(data))]
        return (message, mine) if mine else None

    def _current(self, press: callbacks.Press | None) -> bool:
        return press is not None and press.table_id == self.table_id and press.round_no == self.round_no

    # -- pressing ----------------------------------------------------------------------------------
    async def _press(self, person: int, chat_id: int, message_id: int, data: str) -> bool:
        """True when accepted; ``Stopped`` when time is up or the bot did not answer."""
        if self.stop():
            raise Stopped
        if self.pause is not None:
            await self.pause()
        answer = await self.front.press(person, chat_id, message_id, data)
        if answer is False:
            raise Stopped
        return answer is None

    async def press_table(self, person: int, action: str) -> bool:
        data = callbacks.encode(self.spec.game, self.table_id, self.round_no, action)
        return await self._press(person, self.spec.chat_id, self.table_message().message_id, data)

    async def press_dm(self, person: int, message: Message, data: str) -> bool:
        seen = (message.message_id, message.edits)
        accepted = await self._press(person, person, message.message_id, data)
        if accepted:
            self.consumed[person] = seen
        return accepted

    # -- playing -----------------------------------------------------------------------------------
    async def seat(self) -> bool:
        """Open the table and sit everyone down; False when time ran out first."""
        try:
            await self.open()
        except Stopped:
            return False
        return True

    async def play(self, rounds: int | None = None) -> None:
        """Round after round, until ``rounds`` are played or ``stop()``."""
        lobby = True
        try:
            while rounds is None or self.rounds < rounds:
                if await self.play_round(lobby):
                    self.rounds += 1
                    lobby = True
                else:
                    lobby = await self.resync()
        except Stopped:
            return

    async def open(self) -> None:
        opener, chat = self.spec.people[0], self.spec.chat_id
        if self.stop() or not await self.front.command(opener, chat, f"/newgame {self.spec.game}"):
            raise Stopped
        found = [callbacks.decode(str(b.get("callback_data"))) for b in self.table_message().buttons]
        self.table_id = next(press.table_id for press in found if press is not None)
        for person in self.spec.people[1:]:
            await self.press_table(person, "join")

    async def play_round(self, lobby: bool) -> bool:
        """One round from the lobby (or from the middle, after a resync); False when lost."""
        if lobby:
            for person in self.spec.people:
                await self.press_table(person, "ready")
            self.round_no += 1
            if self.spec.game == "muxi" and not await self.choose_banker():
                return False
        return await self.play_dms()

    async def choose_banker(self) -> bool:
        """Ask in seat order from a guess; whoever is asked accepts (a refusal: not their turn)."""
        people = self.spec.people
        for step in range(len(people)):
            index = (self.first_asked + step) % len(people)
            if await self.press_table(people[index], "banker"):
                self.first_asked = index + 1
                return True
        return False

    async def play_dms(self) -> bool:
        """Press the buttons people find in their DMs until nobody has any: the round is over."""
        for _ in range(100):
            waiting = [(p, found) for p in self.spec.people if (found := self.dm_buttons(p)) is not None]
            if not waiting:
                return True
            person, (message, buttons) = self.rng.choice(waiting) if self.spec.game == "muxi" else waiting[0]
            accepted = await self.press_dm(person, message, self.choose(buttons))
            if not accepted and not await self.press_dm(person, message, buttons[0]):
                return False  # even the first button (draw; check or call) refused: we are lost
        return False

    def choose(self, buttons: list[str]) -> str:
        """Muxi: draw or stand, evenly. Showhand: mostly check or call, some bets and raises (the
        smallest offered), few folds, no all-in (a long run must not empty anyone's wallet)."""
        if self.spec.game == "muxi":
            return self.rng.choice(buttons)
        offered: dict[str, list[str]] = {}
        for data in buttons:
            press = callbacks.decode(data)
            assert press is not None
            offered.setdefault(press.action, []).append(data)
        weights = {"check": 6.0, "call": 6.0, "bet": 1.5, "raise": 1.5, "fold": 0.4}
        actions = [action for action in offered if action in weights] or list(offered)
        action = self.rng.choices(actions, [weights.get(action, 1.0) for action in actions])[0]
        return min(
            offered[action], key=lambda data: int(data.rsplit(":", 1)[1]) if data.count(":") > 3 else 0
        )

    async def resync(self) -> bool:
        """After an unexpected refusal: find the round from the group's table message, which the bot
        edits with a delay. True: the table is in its lobby."""
        self.front.tally.resyncs += 1
        for _ in range(200):
            if self.stop():
                raise Stopped
            await asyncio.sleep(0.1)
            found = [callbacks.decode(str(b.get("callback_data"))) for b in self.table_message().buttons]
            presses = [press for press in found if press is not None and press.table_id == self.table_id]
            if not presses:
                continue
            self.round_no = presses[0].round_no
            actions = {press.action for press in presses}
            if "ready" in actions:
                return True
            if "banker" in actions and await self.choose_banker():
                return False  # the round goes on with the DMs
            if any(self.dm_buttons(p) for p in self.spec.people):
                return False
        raise Stopped


class Window:
    """When the people stop: first a limit for opening the tables, then the measured window."""

    def __init__(self, setup_limit: float) -> None:
        self.started = time.perf_counter()
        self.end = self.started + setup_limit
        self.begun = asyncio.Event()

    def begin(self, seconds: float) -> None:
        self.started = time.perf_counter()
        self.end = self.started + seconds
        self.begun.set()

    def over(self) -> bool:
        return time.perf_counter() >= self.end


@dataclass
class Session:
    """The tables, and the tallies of opening them and of playing them (filled in as they go)."""

    tables: list[TablePlayers] = field(default_factory=list)
    opened: int = 0
    setup: Tally = field(default_factory=Tally)
    setup_seconds: float = 0.0
    play: Tally = field(default_factory=Tally)

    def rounds(self) -> dict[str, int]:
        played: dict[str, int] = {}
        for table in self.tables:
            played[table.spec.game] = played.get(table.spec.game, 0) + table.rounds
        return played


async def play_tables(
    front: Front,
    specs: list[TableSpec],
    window: Window,
    seconds: float | None,
    session: Session | None = None,
    *,
    seed: int = 1,
    rounds: int | None = None,
    pause: Pause | None = None,
) -> Session:
    """Open every table at once (until the window's setup limit), then play them all at once for
    ``seconds`` (or ``rounds`` rounds each). ``front.tally`` counts the opening, then is replaced by
    ``session.play``."""
    session = session or Session()
    session.tables = [
        TablePlayers(front, spec, Random(seed * 100_003 + i), window.over, pause)
        for i, spec in enumerate(specs)
    ]
    session.setup, began = front.tally, time.perf_counter()
    seated = await asyncio.gather(*(table.seat() for table in session.tables))
    session.setup_seconds = time.perf_counter() - began
    playing = [table for table, ok in zip(session.tables, seated, strict=True) if ok]
    session.opened = len(playing)
    front.tally = session.play
    window.begin(seconds if seconds is not None else float("inf"))
    await asyncio.gather(*(table.play(rounds) for table in playing))
    session.play.elapsed = time.perf_counter() - window.started
    session.play.rounds = session.rounds()
    return session
