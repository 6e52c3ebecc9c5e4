"""The games the bot runs, each as what the bot needs of it: its engine, deck, buttons and views.

Everything that differs between the games goes through a ``GameKind``: the chat's views, the
Mini App's part, what a button stands for, and what the view remembers of an event. What a view
needs to know about the game (who is awaited, what a viewer may see, why a show-down went as it
did) it asks the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.display.views import muxi as muxi_view
from bot.display.views import muxi_app, showhand_app, showhand_reveal
from bot.display.views import showhand as showhand_view
from bot.display.views.acted import folded_as
from bot.display.views.app import GameJSON, ResultLineJSON
from bot.display.views.common import Rendering
from bot.display.views.lobby import DmView, on_autopilot
from bot.display.views.summary import dm_line
from bot.model.callbacks import MuxiCode, ShowhandCode, showhand_code
from bot.model.live_table import Acted, Engine, LiveTable, ResultLine, ViewState
from bot.model.shown import Markup
from games import Action, Event, muxi, showhand
from games.cards import DECK_28, DECK_54, Card
from games.codec import Plain
from games.events import DeadlinePassed
from games.table import Timeout

#: What a button stands for: (the person pressing, the button's argument) -> the engine's action.
MakeAction = Callable[[int, str | None], Action]
#: A person's DM for a table: (the table, the person, how to draw it, the group's title) -> its
#: text and buttons, or None.
DrawDm = Callable[[LiveTable, int, Rendering, str], DmView | None]


@dataclass(frozen=True)
class GameKind:
    name: str
    deck: tuple[Card, ...]
    new: Callable[[int, int], Engine]  # (turn seconds, lobby seconds)
    load: Callable[[dict[str, Plain]], Engine]
    moves: dict[str, MakeAction]  # a button's action code -> the engine action it stands for
    note_event: Callable[[LiveTable, Event], None]  # remembers on the view what the event says someone did
    round_results: Callable[[LiveTable, Event], list[ResultLine] | None]  # the results, when a round ends
    table_text: Callable[[LiveTable, Rendering], str]
    results_text: Callable[[LiveTable, Rendering], str]  # a finished round's message once the next begins
    table_keyboard: Callable[[LiveTable, str], Markup | None]
    private_hand: Callable[[LiveTable, int, str], str | None]  # the popup of "my cards"
    move_answer: Callable[[LiveTable, int, str], str | None]  # the toast after one's own move
    dm: DrawDm
    private_people: Callable[[LiveTable], list[int]]  # who holds cards this round
    acting: Callable[[LiveTable], list[int]]  # who must act now (prompted in their DM unless on 托管)
    # What a deadline at turn ``timer`` does when everyone awaited is on autopilot (托管).
    autopilot: Callable[[LiveTable, int], Action]
    app_part: Callable[[LiveTable, int, str], GameJSON]  # the Mini App: (viewer, language) -> game's part
    app_result_line: Callable[[LiveTable, ResultLine, str], ResultLineJSON]  # the Mini App's results line


def _with_autopilot(drawn: DrawDm) -> DrawDm:
    """A game's DM, with its autopilot line and button for someone on autopilot (托管)."""

    def dm(live: LiveTable, person: int, screen: Rendering, chat_title: str) -> DmView | None:
        return on_autopilot(live, person, screen.language, drawn(live, person, screen, chat_title))

    return dm


def _with_summary(drawn: DrawDm) -> DrawDm:
    """A game's DM, with the person's line of the table's 总结算 once it has ended (a DM that
    showed nothing of the last round shows that line alone)."""

    def dm(live: LiveTable, person: int, screen: Rendering, chat_title: str) -> DmView | None:
        shown = drawn(live, person, screen, chat_title)
        summary = live.summary
        line = dm_line(summary, person, screen.language) if summary and live.engine.closed else None
        if line is None:
            return shown
        if shown is None:
            return line, None
        return f"{shown[0]}\n{line}", shown[1]

    return dm


def _balance(live: LiveTable, person: int) -> int | None:
    seat = live.engine.core.seat_of(person)
    return seat.balance if seat is not None else None


def _timed_out(live: LiveTable, event: Event) -> None:
    """A deadline acted for them: told as such, no longer ready for every next round by choice, and
    on autopilot (托管) from now on: their turns are played at once."""
    if isinstance(event, DeadlinePassed):
        view = live.view
        view.moves += [Acted(person, timed_out=True) for person in event.people]
        view.auto_ready = [person for person in view.auto_ready if person not in event.people]
        for person in event.people:
            view.autopilot.setdefault(person, live.round_no)


def _muxi_engine(live: LiveTable) -> muxi.MuxiTable:
    return muxi_view.engine_of(live)


def _muxi_note(live: LiveTable, event: Event) -> None:
    view = live.view
    _timed_out(live, event)
    if isinstance(event, muxi.Decided):
        view.moves.append(Acted(event.person, MuxiCode.DRAW if event.drew else MuxiCode.STAND))
    elif isinstance(event, muxi.BankerChosen):
        view.moves.append(Acted(event.person, MuxiCode.BE_BANKER))


def _muxi_results(live: LiveTable, event: Event) -> list[ResultLine] | None:
    if not isinstance(event, muxi.RoundOver):
        return None
    live.view.end_reason = event.reason.value
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


#: A betting event, by the move it reports (a ``FoldedOnTimeout`` is a ``Folded``).
_BETS = (
    (showhand.Checked, showhand.Move.CHECK),
    (showhand.BetMade, showhand.Move.BET),
    (showhand.Called, showhand.Move.CALL),
    (showhand.Raised, showhand.Move.RAISE),
    (showhand.WentAllIn, showhand.Move.ALL_IN),
    (showhand.Folded, showhand.Move.FOLD),
)


def _showhand_note(live: LiveTable, event: Event) -> None:
    view = live.view
    _timed_out(live, event)
    for kind, move in _BETS:
        if isinstance(event, kind):
            on_timeout = isinstance(event, showhand.FoldedOnTimeout)
            # Someone on autopilot presses nothing (a press of theirs ends it first): their move
            # is autopilot's (``_showhand_autopilot``).
            autopilot = not on_timeout and event.person in view.autopilot
            # The event's total, not the engine's: the engine may be past this move already
            # (autopilot's turns come in the same batch).
            opening = view.opening or showhand_view.engine_of(live).state.opening
            code = showhand_code(move)
            view.moves.append(
                Acted(
                    event.person,
                    code,
                    event.paid,
                    event.total,
                    on_timeout,
                    autopilot,
                    round_total=max(event.total - opening, 0),
                )
            )
            return
    if isinstance(event, showhand.LeadChanged):
        view.lead_reason = event.reason.value
    elif isinstance(event, showhand.Stakes):  # everyone antes B: the first round opens on it
        view.opening = event.base
    elif isinstance(event, showhand.CardsDealt) and view.moves and event.card_no > 2:
        # A new card between two moves: the feeds mark it after the move that ended the betting.
        view.moves[-1] = replace(view.moves[-1], dealt=event.card_no)
    elif isinstance(event, showhand.BettingRoundOver):
        # Everyone still in is level at the largest total: the next round opens on it.
        view.opening = max([view.opening, *(move.total for move in view.moves)])


def _showhand_status(view: ViewState, result: showhand.PersonResult) -> str:
    if result.escaped:
        return "escaped"
    if result.folded:
        return folded_as(view, result.person)
    return ""


def _showhand_autopilot(live: LiveTable, timer: int) -> Action:
    """Autopilot (托管) at someone's turn: a check when checking is free (nobody bet this betting
    round: the engine offers it), else a fold. (The deadline that put them on autopilot folded:
    RULES.md 2.4, a timeout is a fold.)"""
    engine = showhand_view.engine_of(live)
    person = engine.turn
    if person is None:  # (no betting turn: the deadline's own rule)
        return Timeout(timer)
    if any(option.move is showhand.Move.CHECK for option in engine.legal_actions(person)):
        return showhand.Check(person)
    return showhand.Fold(person)


def _showhand_results(live: LiveTable, event: Event) -> list[ResultLine] | None:
    if not isinstance(event, showhand.GameOver):
        return None
    view = live.view
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


def _amount(action: type[showhand.Bet | showhand.Call | showhand.Raise]) -> MakeAction:
    return lambda person, arg: action(person, int(arg or 0))


MUXI = GameKind(
    name="muxi",
    deck=DECK_54,
    new=lambda turn, lobby: muxi.MuxiTable.new(turn_seconds=turn, lobby_seconds=lobby),
    load=muxi.MuxiTable.from_dict,
    moves={
        MuxiCode.BE_BANKER: lambda person, _: muxi.BeBanker(person),
        MuxiCode.PASS: lambda person, _: muxi.PassBanker(person),
        MuxiCode.DRAW: lambda person, _: muxi.Draw(person),
        MuxiCode.STAND: lambda person, _: muxi.Stand(person),
    },
    note_event=_muxi_note,
    round_results=_muxi_results,
    table_text=muxi_view.table_text,
    results_text=muxi_view.results_text,
    table_keyboard=muxi_view.table_keyboard,
    private_hand=muxi_view.private_hand,
    move_answer=muxi_view.move_answer,
    dm=_with_summary(_with_autopilot(muxi_view.dm)),
    private_people=lambda live: list(_muxi_engine(live).card_holders()),
    acting=lambda live: list(_muxi_engine(live).awaited()),
    autopilot=lambda _live, timer: Timeout(timer),  # as the deadline: stands, or passes on the bank
    app_part=muxi_app.app_part,
    app_result_line=muxi_app.app_result_line,
)

SHOWHAND = GameKind(
    name="showhand",
    deck=DECK_28,
    new=lambda turn, lobby: showhand.ShowhandTable.new(turn_seconds=turn, lobby_seconds=lobby),
    load=showhand.ShowhandTable.from_dict,
    moves={
        ShowhandCode.CHECK: lambda person, _: showhand.Check(person),
        ShowhandCode.BET: _amount(showhand.Bet),
        # The button's amount: a stale "call 100" is not a call of a raise.
        ShowhandCode.CALL: _amount(showhand.Call),
        ShowhandCode.RAISE: _amount(showhand.Raise),
        ShowhandCode.ALL_IN: lambda person, _: showhand.AllIn(person),
        ShowhandCode.FOLD: lambda person, _: showhand.Fold(person),
    },
    note_event=_showhand_note,
    round_results=_showhand_results,
    # (an all-in's reveal, dealt one card at a time, drawn instead while under way)
    table_text=showhand_reveal.staged(showhand_view.table_text),
    results_text=showhand_view.results_text,
    table_keyboard=showhand_reveal.staged_keyboard(showhand_view.table_keyboard),
    private_hand=showhand_view.private_hand,
    move_answer=showhand_view.move_answer,
    dm=_with_summary(_with_autopilot(showhand_reveal.staged_dm(showhand_view.dm))),
    private_people=showhand_reveal.staged_people(showhand_view.private_people),
    acting=lambda live: list(showhand_view.engine_of(live).awaited()),
    autopilot=_showhand_autopilot,
    app_part=showhand_reveal.staged_app(showhand_app.app_part),
    app_result_line=showhand_app.app_result_line,
)

KINDS: dict[str, GameKind] = {"muxi": MUXI, "showhand": SHOWHAND}
