"""A table as the bot holds it: the engine, what the table message shows besides, and its messages.

Saved as ``{"engine": <engine.to_dict()>, "view": <ViewState>}`` after every action, so a restarted
bot shows and carries on every open table exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from games.cards import Card
from games.codec import Plain, from_plain, to_plain
from games.table import TableCore

REMINDED = "reminded"  # the key, in ``LiveTable.shown``, of the timer whose reminder has gone out


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


@dataclass
class ViewState:
    names: dict[int, str] = field(default_factory=dict)
    commitment: str = ""
    results: list[ResultLine] = field(default_factory=list)
    results_round: int = 0
    notices: list[Notice] = field(default_factory=list)
    dm_failed: list[int] = field(default_factory=list)
    deadline: float | None = None
    closed_reason: str = ""
    lead_reason: str = ""  # showhand: why the lead speaks first
    end_reason: str = ""  # how the last round ended
    title: str = ""  # the group's title, for the DMs (saved: a restarted bot shows the same DMs)
    acted: dict[int, str] = field(default_factory=dict)  # what each person last did this round


class Engine(Protocol):
    """What the bot needs of a game's table state machine."""

    core: TableCore

    @property
    def version(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    def apply(self, action: object) -> list[object]: ...

    def escape_cost(self, person: int) -> int | None: ...

    def to_dict(self) -> dict[str, Plain]: ...


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
    shown: dict[str, str] = field(default_factory=dict)  # what each kept message shows: "table" or a person
    # The seats (person -> coins) as last saved (None: not known, the next save writes them).
    saved_seats: dict[int, int] | None = field(default=None, kw_only=True)

    @property
    def round_no(self) -> int:
        return self.engine.core.round_no

    def name(self, person: int) -> str:
        return self.view.names.get(person, str(person))

    def seated(self) -> list[int]:
        return [seat.person for seat in self.engine.core.seats]

    @property
    def reminded(self) -> bool:
        """The running turn's reminder has gone out (kept with what the messages show: a restarted
        bot neither sends it again nor shows the prompts without it)."""
        return self.shown.get(REMINDED) == str(self.engine.core.timer)

    @property
    def in_round(self) -> bool:
        """A round is under way (its deck is out)."""
        return self.engine.core.shuffle is not None

    def state(self) -> dict[str, Plain]:
        return state_of(self.engine, self.view)


def state_of(engine: Engine, view: ViewState) -> dict[str, Plain]:
    """A table as saved: its engine and what its message shows besides."""
    return {"engine": engine.to_dict(), "view": to_plain(view)}


def view_from_plain(data: Plain) -> ViewState:
    assert isinstance(data, dict)
    return from_plain(ViewState, data)
