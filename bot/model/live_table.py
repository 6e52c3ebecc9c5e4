"""A table as the bot holds it: the engine, what the table message shows besides, its turn's clock,
and its messages.

Saved as ``{"engine": <engine.to_dict()>, "view": <ViewState>, "turn": <Turn>}`` after every action
(the turn also when its reminder goes out, and what each message shows as Telegram confirmed
it; time given back to a turn is saved with the next action), so a restarted bot shows and
carries on every open table exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.model.shown import Shown
from games.cards import Card
from games.codec import Plain, from_plain, to_plain
from games.muxi import MuxiAction, MuxiEvent, MuxiTable
from games.showhand import ShowhandAction, ShowhandEvent, ShowhandTable
from storage import TableSummary

REMINDED = "reminded"  # where older versions kept the turn whose reminder had gone out (in ``shown``)
TURN = "turn"  # the key of the turn, in the saved state
AUTOPILOT_MARK = "🤖"  # after the name of someone on autopilot (托管), in every language
AUTOPILOT_ROUNDS = 2  # whole rounds on autopilot after which they get up at the round's end
OLD_ACTED = "acted"  # where older versions kept each person's last move (``_old_move``)
Action = MuxiAction | ShowhandAction  # (games.Action, spelled out for type checkers)
Event = MuxiEvent | ShowhandEvent


@dataclass
class ResultLine:
    """One person's line on a results screen, whatever the game."""

    person: int
    cards: tuple[Card, ...]
    hand: str | None  # the engine's kind/category name, None when not judged
    points: int
    status: str
    net: int
    is_banker: bool = False
    won: bool = False
    balance: int | None = None  # their coins after the round (None: no longer seated)
    put_in: int = 0  # showhand: what they put in the pot


@dataclass
class Notice:
    """Something worth a line on the table until the round ends (an escape, a timeout...)."""

    key: str
    person: int
    amount: int = 0
    round_no: int = 0  # the round it belongs to (it goes with that round's message)


@dataclass(frozen=True)
class Acted:
    """A move made this round, as the views tell it: who made it, its action code ("" when the
    deadline acted and the engine's state says what it did: stood, forfeited, declined the bank),
    the coins it put in, the person's total in the pot after it (showhand), whether the deadline
    made it, whether autopilot (托管) made it (showhand: a check when checking is free, else a
    fold), and the person's total in this betting round after it (showhand; 0 in older saves)."""

    person: int
    move: str = ""
    paid: int = 0
    total: int = 0
    timed_out: bool = False
    autopilot: bool = False
    round_total: int = 0
    dealt: int = 0  # showhand: the card dealt right after this move, its number (0: none)


@dataclass
class ViewState:
    names: dict[int, str] = field(default_factory=dict)
    commitment: str = ""
    results: list[ResultLine] = field(default_factory=list)
    results_round: int = 0
    notices: list[Notice] = field(default_factory=list)
    dm_failed: list[int] = field(default_factory=list)
    closed_reason: str = ""
    lead_reason: str = ""  # showhand: why the lead speaks first
    end_reason: str = ""  # how the last round ended
    title: str = ""  # the group's title, for the DMs (saved: a restarted bot shows the same DMs)
    moves: list[Acted] = field(default_factory=list)  # this round's moves, in order
    score: dict[int, int] = field(default_factory=dict)  # each person's net since the table opened
    auto_ready: list[int] = field(default_factory=list)  # ready for every next round (再来一局 ✓ 自动准备)
    # 托管: whom a deadline acted for, and the round it was in; their turns are played at once.
    autopilot: dict[int, int] = field(default_factory=dict)
    # showhand: every unfolded person's total when the betting round under way began (0: unknown,
    # a table saved by an older version; the engine's is read then).
    opening: int = 0
    # When the last round's results were shown (its end, or the end of its all-in's reveal): the
    # pause before auto-ready readies anyone counts from it (0: no round ended yet).
    ended_at: float = 0.0
    # The engine's version once the round under way was dealt: the last round's results stay in the
    # Mini App until an action follows (the round's first move).
    dealt_version: int = 0


# A game's table state machine, one of the two (not a Protocol: each takes only its own game's
# actions, which no one signature says, and the views ask each for what only it has).
Engine = MuxiTable | ShowhandTable


@dataclass(frozen=True)
class Turn:
    """A table's running turn as its clock keeps it (``timer`` 0: none runs)."""

    timer: int = 0  # the engine's timer it times
    deadline: float | None = None  # when it runs out (time given back included)
    reminded: bool = False  # its reminder has gone out
    given_back: float = 0.0  # the time given back for a prompt delivered late (the longest delay)
    # Not carried over a restart (the queue they are about is not):
    held: bool = False  # its deadline came while someone's prompt was still queued
    called: bool = False  # its call is out in the group
    heard_from: float | None = None  # deaf spells before this were given back (None: since it began)

    @classmethod
    def start(cls, timer: int, now: float, seconds: float) -> Turn:
        return cls(timer, now + seconds)

    def to_plain(self) -> dict[str, Plain]:
        """As saved (what is not carried over a restart left out)."""
        return {
            "timer": self.timer,
            "deadline": self.deadline,
            "reminded": self.reminded,
            "given_back": self.given_back,
        }

    @classmethod
    def from_plain(cls, data: dict[str, Plain]) -> Turn:
        deadline, given_back = data.get("deadline"), data.get("given_back")
        return cls(
            int(data["timer"]),  # type: ignore[arg-type]  # saved as an int (by to_plain above)
            float(deadline) if isinstance(deadline, int | float) else None,
            bool(data.get("reminded")),
            float(given_back) if isinstance(given_back, int | float) else 0.0,
        )


@dataclass
class Reveal:
    """An all-in everyone answered: the cards left are dealt on the table one by one (display
    only: the engine dealt them all at once). Kept in memory: a restarted bot shows the end."""

    round_no: int
    shown: int  # how many cards each hand shows now (the face-down one included)
    began: float  # when the answer came


@dataclass
class LiveTable:
    table_id: int
    chat_id: int
    game: str
    engine: Engine
    view: ViewState
    message_id: int | None = None
    dm_ids: dict[int, int] = field(default_factory=dict)
    saved: dict[str, Plain] = field(kw_only=True)  # the state last saved: what a failed save returns to
    shown: dict[str, Shown] = field(default_factory=dict)  # what each kept message shows: "table" or a person
    turn: Turn = field(default_factory=lambda: Turn())  # the running turn's clock (``bot.tables.turn_clock``)
    # The seats (person -> coins) as last saved (None: not known, the next save writes them).
    saved_seats: dict[int, int] | None = field(default=None, kw_only=True)
    # Its 总结算 as the store kept it when it closed (None while open, or not read: nothing is shown).
    summary: TableSummary | None = field(default=None, kw_only=True)
    # In memory only (not saved): an all-in's reveal under way, and when the pause after the last
    # results ends (0: none pending), both for the views.
    reveal: Reveal | None = field(default=None, kw_only=True)
    pause_until: float = field(default=0.0, kw_only=True)

    @property
    def round_no(self) -> int:
        return self.engine.core.round_no

    @property
    def timer(self) -> int:
        """The engine's timer: which turn (or lobby) runs now (0: none)."""
        return self.engine.core.timer

    def name(self, person: int) -> str:
        """As shown everywhere, with 🤖 while on autopilot (托管)."""
        shown = self.view.names.get(person, str(person))
        return shown if self.asks(person) else shown + AUTOPILOT_MARK

    def asks(self, person: int) -> bool:
        """Is ``person`` asked to act when it is their turn: prompted, waited for? Not on autopilot
        (托管): their turns are played as the deadline would, at once."""
        return person not in self.view.autopilot

    def seated(self) -> list[int]:
        return [seat.person for seat in self.engine.core.seats]

    @property
    def reminded(self) -> bool:
        """The running turn's reminder has gone out (saved: a restarted bot neither sends it again
        nor shows the prompts without it)."""
        return self.turn.reminded and self.turn.timer == self.engine.core.timer

    @property
    def deadline(self) -> float | None:
        """When the running turn (or the lobby) runs out, as people are shown it."""
        return self.turn.deadline

    @property
    def in_round(self) -> bool:
        """A round is under way (its deck is out)."""
        return self.engine.core.shuffle is not None

    @property
    def opening_unseen(self) -> bool:
        """A round is under way whose table message (its base and 🔐 shuffle commitment) the group
        has not been shown yet, as Telegram confirmed it: until it has, nothing of the round is
        shown anywhere else (no DM, no Mini App hand, no call) and its turn's clock does not run."""
        if not self.in_round:
            return False
        shown = self.shown.get("table")
        return shown is None or shown.round_no != self.round_no

    def state(self) -> dict[str, Plain]:
        return state_of(self.engine, self.view, self.turn)


def state_of(engine: Engine, view: ViewState, turn: Turn | None = None) -> dict[str, Plain]:
    """A table as saved: its engine, what its message shows besides, and its turn's clock."""
    return {"engine": engine.to_dict(), "view": to_plain(view), TURN: (turn or Turn()).to_plain()}


def view_from_plain(data: Plain) -> ViewState:
    assert isinstance(data, dict)
    kept = {key: value for key, value in data.items() if key not in ("deadline", OLD_ACTED)}
    view = from_plain(ViewState, kept)
    old = data.get(OLD_ACTED)
    if isinstance(old, dict) and not view.moves:
        view.moves = [_old_move(int(person), text) for person, text in old.items() if isinstance(text, str)]
    return view


def _old_move(person: int, text: str) -> Acted:
    """A move as older bots saved each person's last one: ``"<move>"`` or ``"<move>:<coins paid>"``,
    with ``timeout_`` before a move the deadline made, and a bare ``timeout`` when the deadline
    acted and the engine's state says what it did."""
    head, _, paid = text.partition(":")
    timed_out = head == "timeout" or head.startswith("timeout_")
    move = head.removeprefix("timeout").removeprefix("_") if timed_out else head
    return Acted(person, move, int(paid or 0), timed_out=timed_out)


def turn_from_saved(state: Mapping[str, Plain], shown: Mapping[str, str], timer: int) -> Turn:
    """The turn as saved; a table saved by an older version kept its deadline in its view and the
    turn whose reminder had gone out among what its messages show (``timer``: the engine's)."""
    turn = state.get(TURN)
    if isinstance(turn, dict):
        return Turn.from_plain(turn)
    view = state.get("view")
    deadline = view.get("deadline") if isinstance(view, dict) else None
    return Turn.from_plain(
        {"timer": timer, "deadline": deadline, "reminded": shown.get(REMINDED) == str(timer)}
    )


def shown_from_saved(shown: Mapping[str, str], round_no: int = 0) -> dict[str, Shown]:
    """What each kept message shows, as saved (the turn's old entry left out). A table message
    saved by older versions, which did not name the round it shows, shows ``round_no``, the one
    under way: they dealt a round once it was queued."""
    return {
        key: Shown.from_saved(value, round_no if key == "table" else 0)
        for key, value in shown.items()
        if key not in (REMINDED, TURN)
    }
