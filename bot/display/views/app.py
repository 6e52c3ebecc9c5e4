"""The Mini App's JSON, as typed dictionaries, and the pieces both games' parts share.

``bot/web/miniapp/view.py`` builds the table's common part and asks the game's kind
(``bot/display/game_kinds.py``) for the rest: ``bot/display/views/muxi_app.py`` and
``bot/display/views/showhand_app.py``.
What a viewer may see comes from the engine's censored view (``seen_by``); a card the viewer may
not see is sent as ``HIDDEN``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NotRequired, TypedDict

from bot.display.i18n import t
from bot.display.views.common import coins, signed
from bot.model.callbacks import AUTO_READY
from bot.model.live_table import LiveTable, ResultLine
from games.cards import Card

HIDDEN = "?"
SPECTATOR = 0  # the viewer of a spectators' view: no person (Telegram's ids are positive)


class ActionJSON(TypedDict):
    """A button the viewer may press: the action code (as in callback data) and its argument."""

    action: str
    arg: int | None
    label: str
    style: str
    escape: NotRequired[bool]  # leaving now is an escape (it costs coins: the page asks first)
    pay: NotRequired[int]  # showhand: the coins the press puts in


class AmountJSON(TypedDict):
    """A bet or raise of any step, for a slider (showhand)."""

    action: str
    min: int
    max: int
    step: int
    own: int
    label: str  # with ``{pay}`` and ``{total}`` for the page to fill


class SeatJSON(TypedDict):
    person: int
    name: str
    me: bool
    balance: int | None
    ready: bool
    banker: bool
    lead: bool
    turn: bool
    cards: list[str]  # card tokens, ``HIDDEN`` for one the viewer may not see
    hand: str
    status: str
    hole: bool  # showhand: the first card is the face-down one
    total: NotRequired[int]  # showhand: what they put in this game
    folded: NotRequired[bool]  # showhand: out of the game (folded or escaped)
    score: NotRequired[int]  # their net since the table opened (once a round was played)
    autopilot: NotRequired[bool]  # 托管: their turns are played at once


class ResultLineJSON(TypedDict):
    person: int
    name: str
    cards: list[str]
    hand: str
    net: int
    net_text: str
    banker: bool
    won: bool
    balance: int | None
    hole: bool  # the first card was the face-down one, shown


class ResultsJSON(TypedDict):
    round: int
    reason: str
    lines: list[ResultLineJSON]


class AllInJSON(TypedDict):
    text: str  # who went all-in, and to how much: 阿强 梭哈 9,300
    seq: int  # which move of the round it was (the page announces each once)


class GameJSON(TypedDict):
    """What a game adds to the table's view."""

    phase: str
    base: int
    pot: int | None
    seats: list[SeatJSON]
    actions: list[ActionJSON]
    cap: NotRequired[int | None]  # showhand, during a game
    stake: NotRequired[int]
    card_no: NotRequired[int]
    amount: NotRequired[AmountJSON | None]  # showhand
    feed: NotRequired[list[str]]  # showhand: the game's last moves, as told, oldest first
    all_in: NotRequired[AllInJSON | None]  # showhand: the game's last all-in, announced once


def tokens(cards: Iterable[Card | None]) -> list[str]:
    """Card tokens, ``HIDDEN`` for a card the engine's censored view withholds (None)."""
    return [HIDDEN if card is None else card.token for card in cards]


def seat(live: LiveTable, person: int, viewer: int) -> SeatJSON:
    found = live.engine.core.seat_of(person)
    one: SeatJSON = {
        "person": person,
        "name": live.name(person),
        "me": person == viewer,
        "balance": found.balance if found is not None else None,
        "ready": bool(found and found.ready),
        "banker": False,
        "lead": False,
        "turn": False,
        "cards": [],
        "hand": "",
        "status": "",
        "hole": False,
    }
    if person in live.view.score:
        one["score"] = live.view.score[person]
    if not live.asks(person):
        one["autopilot"] = True
    return one


def lobby_seats(live: LiveTable, viewer: int, language: str) -> list[SeatJSON]:
    seats = []
    for person in live.seated():
        one = seat(live, person, viewer)
        one["status"] = t(language, "lobby.ready" if one["ready"] else "lobby.not_ready").strip()
        seats.append(one)
    return seats


def leave_action(live: LiveTable, viewer: int, language: str) -> ActionJSON:
    price = live.engine.escape_cost(viewer)
    if price is None:
        return {"action": "leave", "arg": None, "label": t(language, "button.leave"), "style": "quiet"}
    label = t(language, f"{live.game}.button.escape", amount=coins(price))
    # Red text on no fill: never mistaken for the filled red 弃牌 beside it.
    return {"action": "leave", "arg": None, "label": label, "style": "escape", "escape": True}


def lobby_actions(live: LiveTable, code: str, viewer: int, language: str) -> list[ActionJSON]:
    """Join, or Start (Continue after a round, then also the same for every next round)."""
    key = {"join": "button.join", "ready": "button.continue" if live.round_no else "button.ready"}[code]
    actions: list[ActionJSON] = [{"action": code, "arg": None, "label": t(language, key), "style": "primary"}]
    if code == "ready" and live.round_no and viewer not in live.view.auto_ready:
        label = t(language, "button.auto_ready")
        actions.append({"action": AUTO_READY, "arg": None, "label": label, "style": "secondary"})
    return actions


def result_line(live: LiveTable, line: ResultLine, cards: list[str], hand: str, hole: bool) -> ResultLineJSON:
    """A results line: ``cards`` and ``hand`` only as the table message shows them (the game's to
    say), ``hole`` when the first card is the face-down one, shown."""
    return {
        "person": line.person,
        "name": live.name(line.person),
        "cards": cards,
        "hand": hand,
        "net": line.net,
        "net_text": signed(line.net),
        "banker": line.is_banker,
        "won": line.won,
        "balance": line.balance,
        "hole": hole,
    }
