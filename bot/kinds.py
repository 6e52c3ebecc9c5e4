"""The games the bot runs, each as what the bot needs of it: its engine, deck, buttons and views."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.live import Engine, LiveTable, ResultLine, ViewState
from bot.views import muxi as muxi_view
from bot.views import showhand as showhand_view
from bot.views.common import Markup, Rendering
from games import muxi, showhand
from games.cards import DECK_28, DECK_54, Card
from games.codec import Plain
from games.events import TimedOut

Move = Callable[[int, str | None], object]  # (the person pressing, the button's argument) -> an action


@dataclass(frozen=True)
class GameKind:
    name: str
    deck: tuple[Card, ...]
    new: Callable[[int, int], Engine]  # (turn seconds, lobby seconds)
    load: Callable[[dict[str, Plain]], Engine]
    moves: dict[str, Move]  # a button's action code -> the engine action it stands for
    note: Callable[[LiveTable, object], list[ResultLine] | None]  # notes an event; a round's results
    table_text: Callable[[LiveTable, Rendering], str]
    results_text: Callable[[LiveTable, Rendering], str]  # a finished round's message once the next begins
    table_keyboard: Callable[[LiveTable, str], Markup | None]
    private_hand: Callable[[LiveTable, int, str], str | None]  # the popup of "my cards"
    dm: Callable[[LiveTable, int, Rendering, str], tuple[str, Markup | None] | None]
    private_people: Callable[[LiveTable], list[int]]  # who holds cards this round
    acting: Callable[[LiveTable], list[int]]  # who must act now (each is prompted in their DM)


def _balance(live: LiveTable, person: int) -> int | None:
    seat = live.engine.core.seat_of(person)
    return seat.balance if seat is not None else None


def _timed_out(view: ViewState, event: object) -> None:
    if isinstance(event, TimedOut):
        for person in event.people:
            view.acted[person] = "timeout"


def _muxi_note(live: LiveTable, event: object) -> list[ResultLine] | None:
    view = live.view
    _timed_out(view, event)
    if isinstance(event, muxi.Decided):
        view.acted[event.person] = "draw" if event.drew else "stand"
    elif isinstance(event, muxi.BankerChosen):
        view.acted[event.person] = "banker"
    if not isinstance(event, muxi.RoundOver):
        return None
    view.end_reason = event.reason
    return [
        ResultLine(
            r.person,
            r.cards,
            r.kind.value if r.kind else None,
            r.points,
            r.status.value,
            r.net,
            r.is_banker,
            r.net > 0,
            _balance(live, r.person),
        )
        for r in event.results
    ]


_BETS = {
    showhand.Checked: "check",
    showhand.BetMade: "bet",
    showhand.Called: "call",
    showhand.Raised: "raise",
    showhand.WentAllIn: "allin",
    showhand.Folded: "fold",
}


def _showhand_status(view: ViewState, result: showhand.PersonResult) -> str:
    if result.escaped:
        return "escaped"
    if result.folded:
        return "timed_out" if view.acted.get(result.person, "").startswith("timeout_fold") else "folded"
    return ""


def _showhand_note(live: LiveTable, event: object) -> list[ResultLine] | None:
    view = live.view
    _timed_out(view, event)
    move = _BETS.get(type(event))
    if move is not None:
        person = event.person  # type: ignore[attr-defined]
        if move == "fold" and view.acted.get(person) == "timeout":
            move = "timeout_fold"
        view.acted[person] = f"{move}:{event.paid}"  # type: ignore[attr-defined]
    if isinstance(event, showhand.LeadChanged):
        view.lead_reason = event.reason.value
    if not isinstance(event, showhand.GameOver):
        return None
    view.end_reason = event.reason.value
    return [
        ResultLine(
            person=r.person,
            cards=((r.hole,) if r.hole else ()) + r.face_up,
            hand=r.category.value if r.category else None,
            points=0,
            status=_showhand_status(view, r),
            net=r.net,
            won=r.person == event.winner,
            balance=_balance(live, r.person),
            put_in=r.total,
        )
        for r in event.results
    ]


def _amount(action: type) -> Move:
    return lambda person, arg: action(person, int(arg or 0))


MUXI = GameKind(
    name="muxi",
    deck=DECK_54,
    new=lambda turn, lobby: muxi.MuxiTable.new(turn_seconds=turn, lobby_seconds=lobby),
    load=muxi.MuxiTable.from_dict,
    moves={
        "banker": lambda person, _: muxi.BeBanker(person),
        "pass": lambda person, _: muxi.PassBanker(person),
        "draw": lambda person, _: muxi.Draw(person),
        "stand": lambda person, _: muxi.Stand(person),
    },
    note=_muxi_note,
    table_text=muxi_view.table_text,
    results_text=muxi_view.results_text,
    table_keyboard=muxi_view.table_keyboard,
    private_hand=muxi_view.private_hand,
    dm=muxi_view.dm,
    private_people=lambda live: [hand.person for hand in live.engine.state.hands],
    acting=muxi_view.acting,
)

SHOWHAND = GameKind(
    name="showhand",
    deck=DECK_28,
    new=lambda turn, lobby: showhand.ShowhandTable.new(turn_seconds=turn, lobby_seconds=lobby),
    load=showhand.ShowhandTable.from_dict,
    moves={
        "check": lambda person, _: showhand.Check(person),
        "bet": _amount(showhand.Bet),
        "call": _amount(showhand.Call),  # the button's amount: a stale "call 100" is not a call of a raise
        "raise": _amount(showhand.Raise),
        "allin": lambda person, _: showhand.AllIn(person),
        "fold": lambda person, _: showhand.Fold(person),
    },
    note=_showhand_note,
    table_text=showhand_view.table_text,
    results_text=showhand_view.results_text,
    table_keyboard=showhand_view.table_keyboard,
    private_hand=showhand_view.private_hand,
    dm=showhand_view.dm,
    private_people=showhand_view.private_people,
    acting=showhand_view.acting,
)

KINDS: dict[str, GameKind] = {"muxi": MUXI, "showhand": SHOWHAND}
