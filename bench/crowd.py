"""Simulated people at a human pace, in an open loop, for benchmarks 5 and 6.

Each person looks at what Telegram shows them — the table message in their group and their own
DMs — the moment the emulator changes it, and presses 2 to 6 s (``pace``) after something they must
act on becomes visible, whichever shows it first: their DM's buttons, or the table message naming
them (👉 asked to be banker, ⏳ still to draw, 👈 their bet, ⏳ not ready in a full lobby, their
name missing from a fresh lobby: join). They never wait for the bot to answer somebody else; a
person with a press of their own unanswered does not press again until it is answered (or 15 s
passed: Telegram's spinner stops and they look again), and then acts only on what the bot showed
after that answer. A refused press (the answer is one of the bot's refusals) lets them press again
on a newer message.

Choices: a muxi player draws or stands at random from their DM (draws when pressing on the table
without their cards in sight), and always accepts being banker; a showhand player checks or calls
mostly, bets or raises the smallest amount sometimes, never folds, and goes all in only when
nothing else is offered — so every fold a table shows, every ⌛ forfeit in muxi and every banker
question passed on is a deadline that fired on someone who would have pressed: a timeout caused
by delivery.

Everything seen is kept for ``bench.figures``: each press (made, handed to the bot, answered), each
table message version (when, its phase and whose prompts it shows), each prompt's first sight,
each round's end and the timeouts its results show.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from bench.people import TableSpec
from bench.stage import WatchedWorld
from bot.display.i18n import catalog, t
from bot.model import callbacks
from faketg.server import Emulator
from faketg.world import BOT_ID, JSON, ApiError, Message

PACE = (2.0, 6.0)  # seconds from seeing a prompt to pressing
RETRY_PACE = (1.0, 2.0)  # after a refusal, to press again on a newer message
GIVE_UP = 15.0  # an unanswered press: the spinner stops, the person looks again
LANGUAGE = "zh-hans"
JOIN_ANSWERS = frozenset({"join.done", "join.next_round"})  # a join's answer when it is taken
MOVES = {
    "muxi": frozenset({"banker", "draw", "stand"}),
    "showhand": frozenset({"check", "bet", "call", "raise", "allin", "fold"}),
}
SHOWHAND_WEIGHTS = {"check": 6.0, "call": 6.0, "bet": 1.5, "raise": 1.5}
PLAY_PHASES = frozenset({"ask", "play", "bet"})


def name_of(person: int) -> str:
    return f"P{person}"


def seat_people(world: WatchedWorld, specs: list[TableSpec]) -> None:
    """Everyone exists, has opened a DM with the bot, and is a member of their table's group."""
    for spec in specs:
        for person in spec.people:
            world.add_person(person, name_of(person), language=LANGUAGE)
        world.add_group(spec.chat_id, f"Bench {-spec.chat_id}", list(spec.people))


# -- what the texts say -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Marks:
    """The catalog's texts the people read (the chat's language: Simplified Chinese)."""

    not_ready: str
    waiting: str
    banker_prompt: str  # the start of "⏳ 庄家 {name} ..." up to the name
    forfeit: str
    folded: str
    verify: str  # the start of the line under a round's results
    turn: str  # the start of showhand's "⏳ 轮到 {name}，… （超时算弃牌）": names a person and says 弃牌

    @classmethod
    def load(cls) -> Marks:
        def head(key: str) -> str:
            return catalog(LANGUAGE)[key].split("{", 1)[0]

        return cls(
            not_ready=t(LANGUAGE, "lobby.not_ready"),
            waiting=t(LANGUAGE, "muxi.status.waiting"),
            banker_prompt=head("muxi.banker_prompt"),
            forfeit=t(LANGUAGE, "muxi.status.forfeit"),
            folded=t(LANGUAGE, "showhand.folded"),
            verify=head("round.verify"),
            turn=head("showhand.turn"),
        )


@cache
def _refusal_patterns() -> tuple[frozenset[str], re.Pattern[str]]:
    """Every text the bot refuses a press with (``error.*``, ``press.*``, ``join.*``), all languages."""
    plain: set[str] = set()
    patterns: list[str] = []
    for language in ("zh-hans", "zh-hant", "en"):
        for key, text in catalog(language).items():
            if not key.startswith(("error.", "press.", "join.")) or key in JOIN_ANSWERS:
                continue
            if "{" in text:
                parts = re.split(r"\{[^}]*\}", text)
                patterns.append(".*?".join(re.escape(part) for part in parts))
            else:
                plain.add(text)
    return frozenset(plain), re.compile("|".join(f"(?:{p})" for p in patterns) or "(?!)", re.DOTALL)


def is_refusal(text: str | None) -> bool:
    """Does an answer's text say the press was refused? (No text, or any other text: accepted.)"""
    if not text:
        return False
    plain, pattern = _refusal_patterns()
    return text in plain or pattern.fullmatch(text) is not None


# -- what was seen ------------------------------------------------------------------------------------
@dataclass
class PressRecord:
    table: int  # the index of the table
    person: int
    action: str
    round_no: int
    source: str  # "dm" or "table"
    query_id: str
    update_id: int
    made: float
    handed: float | None = None
    answered: float | None = None  # when the bot's answerCallbackQuery came (answered or too old)
    too_old: bool = False
    refused: bool = False

    @property
    def move(self) -> bool:
        return self.action not in ("join", "ready")


@dataclass
class TableVersion:
    at: float
    message_id: int
    round_no: int
    phase: str  # lobby, ask, play (muxi), bet (showhand), closed, other
    prompts: dict[int, str]  # person -> what the table asks of them: join, ready, banker, move

    def asks_move_of(self, person: int, round_no: int) -> bool:
        return self.round_no == round_no and self.phase in PLAY_PHASES and person in self.prompts


@dataclass
class PromptSample:
    table: int
    person: int
    round_no: int
    action: str  # "banker" (muxi: asked to be banker) or "move"
    visible: float  # when the prompt first showed (the DM's buttons or the table naming them)
    source: str  # where it showed first: "dm" or "table"


@dataclass
class RoundEnd:
    table: int
    game: str
    round_no: int
    at: float
    timeouts: int  # forfeits (muxi) or folds (showhand) in its results


@dataclass
class Timeout:
    table: int
    round_no: int
    at: float  # when the table message first showed it
    kind: str  # "forfeit", "fold", "banker question"
    person: int


@dataclass
class Seen:
    """Everything the people saw and did, for ``bench.figures``."""

    presses: list[PressRecord] = field(default_factory=list)
    prompts: list[PromptSample] = field(default_factory=list)
    rounds: list[RoundEnd] = field(default_factory=list)
    timeouts: list[Timeout] = field(default_factory=list)
    versions: dict[int, list[TableVersion]] = field(default_factory=dict)  # table index -> versions
    opened: dict[int, float] = field(default_factory=dict)  # table index -> its first lobby seen
    asked: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # (table, round) -> asked, in order
    closed: set[int] = field(default_factory=set)


# -- the people -----------------------------------------------------------------------------------------
@dataclass
class DmView:
    message_id: int
    edits: int
    at: float  # when it last changed
    round_no: int
    datas: list[str]
    since: float  # since when it has shown these buttons


def _dm_action(dm: DmView) -> str:
    """What a DM prompt asks: "banker" (muxi: asked to be banker, as its buttons say) or "move"."""
    presses = [callbacks.decode(data) for data in dm.datas]
    return "banker" if any(press is not None and press.action == "banker" for press in presses) else "move"


class Person:
    def __init__(self, person_id: int, table: TableCrowd) -> None:
        self.id, self.table, self.name = person_id, table, name_of(person_id)
        self.dms: dict[int, DmView] = {}  # their DMs that show buttons of this table, by message id
        self.pending: asyncio.TimerHandle | None = None
        self.inflight: PressRecord | None = None
        # Their last press: (round, what it answered: join / ready / banker / move, made, answered).
        self.last: tuple[int, str, float, float] | None = None
        self.pressed_on: set[tuple[str, int, int]] = set()  # (source, message id, edits) pressed there
        self.retry = False

    def blocked(self, at: float, round_no: int, kind: str) -> bool:
        """Is a prompt the bot showed at ``at`` one they must not act on: shown before their last
        press, or asking again what that press answered before the bot answered it (the bot may
        show the next turn before answering the press that made it, never the same one)?"""
        if self.last is None:
            return False
        last_round, last_kind, made, answered = self.last
        return at < made or (at < answered and (round_no, kind) == (last_round, last_kind))

    def dm_prompt(self) -> DmView | None:
        """The DM that asks them to act, the one shown first if several do (a round's buttons left
        in a DM after its end are not)."""
        found = None
        for message_id, dm in list(self.dms.items()):
            if dm.round_no <= self.table.lobby_round:
                del self.dms[message_id]
            elif ("dm", dm.message_id, dm.edits) not in self.pressed_on and not self.blocked(
                dm.at, dm.round_no, "move"
            ):
                found = dm if found is None or dm.since < found.since else found
        return found

    def dm_for(self, round_no: int) -> DmView | None:
        return next((dm for dm in self.dms.values() if dm.round_no == round_no), None)


class TableCrowd:
    """The people of one table, what they see of it, and their presses."""

    def __init__(self, crowd: Crowd, index: int, spec: TableSpec, rng: random.Random) -> None:
        self.crowd, self.index, self.spec, self.rng = crowd, index, spec, rng
        self.people = {person: Person(person, self) for person in spec.people}
        self.table_id: int | None = None
        self.view: TableVersion | None = None
        self.view_datas: dict[str, list[str]] = {}  # the newest table message's buttons by action
        self.view_edits = 0
        self.lobby_round = -1  # the newest round whose lobby (after its end) has been seen
        self.results_seen: set[int] = set()
        self.lost: set[tuple[int, str, int]] = set()  # (round, kind, person): timeouts seen

    # -- what the table message shows -------------------------------------------------------------
    def table_message(self, message: Message, at: float) -> None:
        found = [
            (callbacks.decode(str(b.get("callback_data"))), str(b.get("callback_data")))
            for b in message.buttons
        ]
        mine = [(press, data) for press, data in found if press is not None and press.game == self.spec.game]
        if self.table_id is None:
            if not mine:
                return
            self.table_id = mine[0][0].table_id
        mine = [(press, data) for press, data in mine if press.table_id == self.table_id]
        if self.view is not None and message.message_id < self.view.message_id:
            return  # an older round's message
        if not mine:
            if self.view is not None and message.message_id == self.view.message_id:
                self._closed(at)
            return
        datas: dict[str, list[str]] = {}
        for press, data in mine:
            datas.setdefault(press.action, []).append(data)
        round_no = mine[0][0].round_no
        version = self._parse(message, round_no, datas, at)
        self.view, self.view_datas, self.view_edits = version, datas, message.edits
        self.crowd.seen.versions.setdefault(self.index, []).append(version)
        if version.phase == "lobby":
            self.crowd.seen.opened.setdefault(self.index, at)
            if round_no > self.lobby_round:
                self.lobby_round = round_no
            if (
                round_no >= 1
                and round_no not in self.results_seen
                and self.crowd.marks.verify in message.text
            ):
                self._round_over(message.text, round_no, at)
        elif version.phase in ("play", "bet"):
            self._lost_turns(message.text, round_no, at)
        if version.phase == "ask":
            for person in version.prompts:
                asked = self.crowd.seen.asked.setdefault((self.index, round_no), [])
                if person not in asked:
                    if asked:
                        self._timed_out(round_no, at, "banker question", asked[-1])
                    asked.append(person)
        for person in self.people.values():
            self.crowd.consider(person)

    def _parse(self, message: Message, round_no: int, datas: dict[str, list[str]], at: float) -> TableVersion:
        marks, text = self.crowd.marks, message.text
        lines = text.split("\n")
        prompts: dict[int, str] = {}
        if "ready" in datas:
            phase = "lobby"
            everyone = all(person.name in text for person in self.people.values())
            for person in self.people.values():
                if person.name not in text:
                    prompts[person.id] = "join"
                elif everyone and any(person.name in line and marks.not_ready in line for line in lines):
                    prompts[person.id] = "ready"
        elif "banker" in datas:
            phase = "ask"
            for person in self.people.values():
                if any(person.name in line and "👉" in line for line in lines):
                    prompts[person.id] = "banker"
        elif "draw" in datas:
            phase = "play"
            for person in self.people.values():
                for line in lines:
                    if person.name in line and (
                        marks.waiting in line or line.startswith(marks.banker_prompt)
                    ):
                        prompts[person.id] = "move"
        elif MOVES["showhand"] & datas.keys() or (self.spec.game == "showhand" and "cards" in datas):
            phase = "bet"
            for person in self.people.values():
                if any(person.name in line and "👈" in line for line in lines):
                    prompts[person.id] = "move"
        else:
            phase = "other"
        return TableVersion(at, message.message_id, round_no, phase, prompts)

    def _round_over(self, text: str, round_no: int, at: float) -> None:
        self.results_seen.add(round_no)
        lost = self._lost_turns(text, round_no, at)
        self.crowd.seen.rounds.append(RoundEnd(self.index, self.spec.game, round_no, at, lost))

    def _lost_turns(self, text: str, round_no: int, at: float) -> int:
        """Note the players the table shows as timed out (muxi: ⌛ forfeit; showhand: folded, which
        these people never choose), during the round or in its results; how many in all so far."""
        muxi = self.spec.game == "muxi"
        mark = self.crowd.marks.forfeit if muxi else self.crowd.marks.folded
        if mark not in text:
            return sum(1 for key in self.lost if key[0] == round_no)
        for line in text.split("\n"):
            if mark in line and not line.startswith(self.crowd.marks.turn):
                for person in self.people.values():
                    if person.name in line:
                        self._timed_out(round_no, at, "forfeit" if muxi else "fold", person.id)
        return sum(1 for key in self.lost if key[0] == round_no)

    def _timed_out(self, round_no: int, at: float, kind: str, person: int) -> None:
        if (round_no, kind, person) not in self.lost:
            self.lost.add((round_no, kind, person))
            self.crowd.seen.timeouts.append(Timeout(self.index, round_no, at, kind, person))

    def _closed(self, at: float) -> None:
        self.crowd.seen.closed.add(self.index)
        for person in self.people.values():
            self.crowd.cancel(person)

    # -- a person's DM ------------------------------------------------------------------------------
    def dm_message(self, person: Person, message: Message, at: float) -> None:
        datas = []
        round_no = 0
        for button in message.buttons:
            press = callbacks.decode(str(button.get("callback_data")))
            if (
                press is not None
                and press.table_id == self.table_id
                and press.action in MOVES[self.spec.game]
            ):
                datas.append(str(button["callback_data"]))
                round_no = press.round_no
        old = person.dms.pop(message.message_id, None)
        if datas:
            since = old.since if old is not None and old.datas == datas else at
            person.dms[message.message_id] = DmView(
                message.message_id, message.edits, at, round_no, datas, since
            )
        self.crowd.consider(person)


class Crowd:
    """Every table's people, watching ``world`` through its listener."""

    def __init__(
        self,
        world: WatchedWorld,
        emulator: Emulator,
        specs: list[TableSpec],
        *,
        seed: int = 1,
        pace: tuple[float, float] = PACE,
        rounds: int | None = None,
    ) -> None:
        self.world, self.emulator, self.pace = world, emulator, pace
        self.rounds = rounds  # stop pressing Ready once this many rounds were played at a table
        self.marks = Marks.load()
        self.seen = Seen()
        self.tables = [
            TableCrowd(self, i, spec, random.Random(seed * 100_003 + i)) for i, spec in enumerate(specs)
        ]
        self.by_chat = {table.spec.chat_id: table for table in self.tables}
        self.by_person = {person.id: person for table in self.tables for person in table.people.values()}
        self.by_query: dict[str, PressRecord] = {}
        self.pressing = True
        self.excluded: set[int] = set()  # tables whose people stop pressing
        self._loop = asyncio.get_running_loop()
        self._notify_pending = False
        world.listeners.append(self._heard)

    # -- the emulator's news ------------------------------------------------------------------------
    def _heard(self, method: str, params: JSON, result: object, error: ApiError | None, at: float) -> None:
        if method == "answerCallbackQuery":
            self._answered(str(params.get("callback_query_id")), params.get("text"), error, at)
            return
        if error is None and method == "deleteMessage":
            self._deleted(int(str(params["chat_id"])), int(str(params["message_id"])))
            return
        if error is not None or method not in ("sendMessage", "editMessageText", "editMessageReplyMarkup"):
            return
        chat_id = int(str(params["chat_id"]))
        message_id = (
            int(str(result["message_id"])) if isinstance(result, dict) else int(str(params["message_id"]))
        )
        message = self.world.messages.get((chat_id, message_id))
        if message is None or message.sender != BOT_ID:
            return
        table = self.by_chat.get(chat_id)
        if table is not None:
            table.table_message(message, at)
            return
        person = self.by_person.get(chat_id)
        if person is not None:
            person.table.dm_message(person, message, at)

    def _deleted(self, chat_id: int, message_id: int) -> None:
        """A message is gone: a DM's buttons with it; the table message until the bot sends another."""
        person = self.by_person.get(chat_id)
        if person is not None:
            person.dms.pop(message_id, None)
            return
        table = self.by_chat.get(chat_id)
        if table is not None and table.view is not None and table.view.message_id == message_id:
            table.view, table.view_datas = None, {}

    def _answered(self, query_id: str, text: object, error: ApiError | None, at: float) -> None:
        record = self.by_query.get(query_id)
        if record is None or record.answered is not None:
            return
        record.answered = at
        record.too_old = error is not None
        record.refused = error is None and is_refusal(str(text) if text else None)
        person = self.by_person[record.person]
        if person.inflight is record:
            self._done(person, record, at)

    def _done(self, person: Person, record: PressRecord, at: float) -> None:
        person.inflight = None
        kind = record.action if record.action in ("join", "ready", "banker") else "move"
        # Refused: they may press again at once, on a message they have not pressed on.
        person.last = (record.round_no, kind, record.made, record.made if record.refused else at)
        person.retry = record.refused
        self.consider(person)

    # -- deciding ---------------------------------------------------------------------------------
    def consider(self, person: Person) -> None:
        """Does ``person`` see something to act on? Then they press in 2–6 s."""
        if person.pending is not None or person.inflight is not None or not self.pressing:
            return
        if person.table.index in self.excluded:
            return
        found = self.prompt(person)
        if found is None:
            return
        source, action, what, visible = found
        table = person.table
        if action == "ready" and self.rounds is not None and table.lobby_round >= self.rounds:
            return  # played enough rounds here
        delay = self.pace if not person.retry else RETRY_PACE
        person.pending = self._loop.call_later(table.rng.uniform(*delay), self._fire, person)
        if action not in ("join", "ready") and not person.retry:
            round_no = what.round_no if isinstance(what, DmView | TableVersion) else 0
            self.seen.prompts.append(PromptSample(table.index, person.id, round_no, action, visible, source))

    def prompt(self, person: Person) -> tuple[str, str, object, float] | None:
        """What ``person`` must act on, seen first: (source, action, the message's view, since when)."""
        table = person.table
        found: list[tuple[float, str, str, object]] = []
        dm = person.dm_prompt()
        if dm is not None:
            since = dm.at if person.blocked(dm.since, dm.round_no, "move") else dm.since
            found.append((since, "dm", _dm_action(dm), dm))
        view = table.view
        action = view.prompts.get(person.id) if view is not None else None
        if (
            view is not None
            and action is not None
            and not person.blocked(view.at, view.round_no, action)
            and ("table", view.message_id, table.view_edits) not in person.pressed_on
        ):
            found.append((self._since(table, person, view), "table", action, view))
        if not found:
            return None
        at, source, action, what = min(found, key=lambda item: item[0])
        return source, action, what, at

    @staticmethod
    def _since(table: TableCrowd, person: Person, view: TableVersion) -> float:
        """Since when the table message has asked this of ``person`` (the first version that did)."""
        since = view.at
        for version in reversed(table.crowd.seen.versions.get(table.index, [])):
            action = version.prompts.get(person.id)
            if (
                version.message_id != view.message_id
                or action != view.prompts.get(person.id)
                or version.round_no != view.round_no
                or person.blocked(version.at, version.round_no, str(action))
            ):
                break
            since = version.at
        return since

    # -- pressing -----------------------------------------------------------------------------------
    def _fire(self, person: Person) -> None:
        person.pending = None
        if not self.pressing or person.table.index in self.excluded:
            return
        found = self.prompt(person)
        if found is None:
            return  # it went away while they thought (their turn passed, or the table moved on)
        source, action, what, _ = found
        table = person.table
        if source == "dm":
            assert isinstance(what, DmView)
            chat_id, message_id, edits, datas = person.id, what.message_id, what.edits, what.datas
            data = self._choose(table, datas)
            round_no = what.round_no
        else:
            assert isinstance(what, TableVersion)
            chat_id, message_id, edits = table.spec.chat_id, what.message_id, table.view_edits
            data = self._table_choice(table, person, action)
            round_no = what.round_no
            if data is None:
                return
        person.retry = False
        update = self.world.press(person.id, chat_id, message_id, data)
        query = update["callback_query"]
        assert isinstance(query, dict)
        press = callbacks.decode(data)
        record = PressRecord(
            table.index,
            person.id,
            press.action if press else data,
            round_no,
            source,
            str(query["id"]),
            int(str(update["update_id"])),
            self.world.pressed_at[str(query["id"])],
        )
        person.pressed_on.add((source, message_id, edits))
        kind = action if action in ("join", "ready", "banker") else "move"
        person.last = (round_no, kind, record.made, float("inf"))
        self.seen.presses.append(record)
        self.by_query[record.query_id] = record
        person.inflight = record
        self._loop.call_later(GIVE_UP, self._give_up, person, record)
        self.wake()

    def _give_up(self, person: Person, record: PressRecord) -> None:
        if person.inflight is record:
            self._done(person, record, self.world.clock())

    def _table_choice(self, table: TableCrowd, person: Person, action: str) -> str | None:
        datas = table.view_datas
        if action in ("join", "ready", "banker"):
            return datas[action][0] if action in datas else None
        if table.spec.game == "muxi":
            # Their DM (if they have it for this round) says what they may do; else drawing is safe.
            view = table.view
            dm = person.dm_for(view.round_no) if view is not None else None
            allowed = {"draw"}
            if dm is not None:
                allowed = {press.action for data in dm.datas if (press := callbacks.decode(data))}
            choices = [data for action in sorted(allowed) for data in datas.get(action, [])]
            return table.rng.choice(choices) if choices else None
        options = [data for move in MOVES["showhand"] for data in datas.get(move, [])]
        return self._choose(table, options) if options else None

    def _choose(self, table: TableCrowd, datas: list[str]) -> str:
        if table.spec.game == "muxi":
            return table.rng.choice(datas)
        offered: dict[str, list[str]] = {}
        for data in datas:
            press = callbacks.decode(data)
            if press is not None:
                offered.setdefault(press.action, []).append(data)
        # Never fold: a fold in the results is then always a deadline. All in only when nothing else
        # is offered.
        actions = [action for action in offered if action in SHOWHAND_WEIGHTS]
        if not actions:
            actions = [action for action in offered if action != "fold"] or list(offered)
        action = table.rng.choices(actions, [SHOWHAND_WEIGHTS.get(a, 1.0) for a in actions])[0]
        return min(offered[action], key=lambda data: int(callbacks.decode(data).arg or 0))

    def cancel(self, person: Person) -> None:
        if person.pending is not None:
            person.pending.cancel()
            person.pending = None

    # -- commands and the run -------------------------------------------------------------------
    def wake(self) -> None:
        """New updates are in the world: wake the bot's long poll (once per turn of the loop)."""
        if not self._notify_pending:
            self._notify_pending = True
            self._loop.call_soon(self._notify)

    def _notify(self) -> None:
        self._notify_pending = False
        self._loop.create_task(self.emulator.notify())

    def command(self, person: int, chat_id: int, text: str) -> None:
        self.world.post(person, chat_id, text)
        self.wake()

    def open_tables(self, over: float, start: float = 0.0) -> list[asyncio.TimerHandle]:
        """Each table's opener sends ``/newgame <game>``, the tables spread evenly over ``over`` s."""
        count = len(self.tables)
        return [
            self._loop.call_later(
                start + over * i / max(1, count),
                self.command,
                table.spec.people[0],
                table.spec.chat_id,
                f"/newgame {table.spec.game}",
            )
            for i, table in enumerate(self.tables)
        ]

    def stop(self) -> None:
        """Nobody presses any more (what is in flight stays in flight)."""
        self.pressing = False
        for table in self.tables:
            for person in table.people.values():
                self.cancel(person)

    def exclude(self, table_index: int) -> None:
        self.excluded.add(table_index)
        for person in self.tables[table_index].people.values():
            self.cancel(person)

    def handed_times(self) -> None:
        """Fill in when the bot's polls took each press."""
        handed = self.world.handed
        for record in self.seen.presses:
            if record.handed is None:
                record.handed = handed.get(record.update_id)


Clock = Callable[[], float]
