"""What one person may see of a table, as the Mini App's JSON (pure: no I/O).

Everyone sees the public table: seats, names, banker or lead, whose turn it is and until when,
face-up cards, the base or the pot and each total, the last show-down. Only the viewer's own hidden
cards are added, and only the viewer's own legal actions. Never another person's hidden card, the
deck or its salt: a hidden card is sent as ``"?"``. ``tests/bot/test_miniapp_view.py`` checks this
on the serialized JSON.
"""

from __future__ import annotations

from typing import Any

from bot.i18n import t
from bot.live import LiveTable, ResultLine
from bot.views.common import coins, signed
from bot.views.muxi import hand_label, judged_label, shown_down
from bot.views.showdown import hand_name
from bot.views.showhand import ACTION_CODES, option_label
from games import muxi, showhand
from games.muxi.state import Hand
from games.showhand.betting import LAST_CARD

HIDDEN = "?"
SPECTATOR = 0  # the viewer of a spectators' view: no person (Telegram's ids are positive)
JSON = dict[str, Any]
# The Mini App's own words, sent with every state in the viewer's language.
PAGE_STRINGS = (
    "miniapp.open",
    "miniapp.banker",
    "miniapp.lead",
    "miniapp.you",
    "miniapp.spectating",
    "miniapp.results",
    "miniapp.closed",
    "miniapp.waiting",
    "miniapp.offline",
    "miniapp.confirm",
    "miniapp.cancel",
    "miniapp.seconds",
    "miniapp.your_turn",
    "miniapp.round",
    "miniapp.base",
    "miniapp.pot",
    "miniapp.total",
    "miniapp.unauthorized",
    "miniapp.hole",
)
MUXI_CODES = {
    muxi.Move.JOIN: "join",
    muxi.Move.LEAVE: "leave",
    muxi.Move.READY: "ready",
    muxi.Move.BE_BANKER: "banker",
    muxi.Move.PASS: "pass",
    muxi.Move.DRAW: "draw",
    muxi.Move.STAND: "stand",
}


def tokens(cards: Any) -> list[str]:
    return [card.token for card in cards]


def page_strings(language: str) -> dict[str, str]:
    return {key.removeprefix("miniapp."): t(language, key) for key in PAGE_STRINGS}


def viewer_of(live: LiveTable, person: int) -> int:
    """Whom ``person``'s view is made for: themselves when anything at the table is theirs alone
    (a seat, a hand, a player's cards), else ``SPECTATOR`` (every spectator sees the same)."""
    engine = live.engine
    if engine.core.seat_of(person) is not None:
        return person
    if isinstance(engine, muxi.MuxiTable):
        dealt = any(hand.person == person for hand in engine.state.hands)
    else:
        assert isinstance(engine, showhand.ShowhandTable)
        dealt = any(player.person == person for player in engine.players)
    return person if dealt else SPECTATOR


def table_view(live: LiveTable, viewer: int, language: str, now: float) -> JSON:
    """The table as ``viewer`` may see it (a spectator: anyone not seated)."""
    engine, core = live.engine, live.engine.core
    view: JSON = {
        "table": live.table_id,
        "game": live.game,
        "title": t(language, f"{live.game}.title"),
        "round": core.round_no,
        "version": engine.version,
        "closed": engine.closed,
        "me": viewer,
        "seated": core.seat_of(viewer) is not None,
        "now": now,
        "deadline": live.view.deadline,
        "turn_seconds": core.turn_seconds if live.in_round else core.lobby_seconds,
        "in_round": live.in_round,
        "commitment": live.view.commitment if live.in_round else "",
        "language": language,
        "strings": page_strings(language),
    }
    if live.game == "muxi":
        assert isinstance(engine, muxi.MuxiTable)
        view |= _muxi(live, engine, viewer, language)
    else:
        assert isinstance(engine, showhand.ShowhandTable)
        view |= _showhand(live, engine, viewer, language)
    view["results"] = _results(live, language)
    return view


def _seat(live: LiveTable, person: int, viewer: int) -> JSON:
    seat = live.engine.core.seat_of(person)
    return {
        "person": person,
        "name": live.name(person),
        "me": person == viewer,
        "balance": seat.balance if seat is not None else None,
        "ready": bool(seat and seat.ready),
        "banker": False,
        "lead": False,
        "turn": False,
        "cards": [],
        "hand": "",
        "status": "",
        "hole": False,
    }


def _lobby_seats(live: LiveTable, viewer: int, language: str) -> list[JSON]:
    seats = []
    for person in live.seated():
        seat = _seat(live, person, viewer)
        seat["status"] = t(language, "lobby.ready" if seat["ready"] else "lobby.not_ready").strip()
        seats.append(seat)
    return seats


def _muxi(live: LiveTable, engine: muxi.MuxiTable, viewer: int, language: str) -> JSON:
    state, phase = engine.state, engine.phase
    part: JSON = {"phase": phase.value, "base": state.base, "pot": None}
    acting = engine.pending() if phase in (muxi.Phase.DRAW, muxi.Phase.BANKER_DRAW) else ()
    if phase is muxi.Phase.BANKER:
        asked = engine.asked_person()
        seats = [_seat(live, person, viewer) for person in state.participants]
        for seat in seats:
            seat["turn"] = seat["person"] == asked
    elif phase in (muxi.Phase.DRAW, muxi.Phase.BANKER_DRAW):
        banker_hand = [hand for hand in state.hands if hand.person == state.banker]
        seats = []
        for hand in banker_hand + [hand for hand in state.hands if hand.person != state.banker]:
            seat = _seat(live, hand.person, viewer)
            seat["banker"] = hand.person == state.banker
            seat["turn"] = hand.person in acting
            shown = hand.status is muxi.Status.NATURAL and not seat["banker"]
            if hand.person == viewer or shown:
                seat["cards"] = tokens(hand.cards)
                seat["hand"] = judged_label(hand.cards, language)
            else:
                seat["cards"] = [HIDDEN] * len(hand.cards)
            seat["status"] = _muxi_status(hand, seat["banker"], language)
            seats.append(seat)
    else:
        seats = _lobby_seats(live, viewer, language)
    part["seats"] = seats
    part["actions"] = _muxi_actions(live, engine, viewer, language)
    return part


def _muxi_status(hand: Hand, banker: bool, language: str) -> str:
    if hand.status is muxi.Status.NATURAL:
        return t(language, "muxi.status.stands") if banker else ""
    # A forced draw looks like any undecided hand: "must draw" would tell everyone of the joker.
    status = muxi.Status.WAITING if hand.status is muxi.Status.FORCED else hand.status
    return t(language, f"muxi.status.{status.value}")


def _leave(live: LiveTable, viewer: int, language: str) -> JSON:
    price = live.engine.escape_cost(viewer)
    if price is None:
        return {"action": "leave", "arg": None, "label": t(language, "button.leave"), "style": "quiet"}
    label = t(language, f"{live.game}.button.escape", amount=coins(price))
    return {"action": "leave", "arg": None, "label": label, "style": "danger", "escape": True}


def _lobby_action(live: LiveTable, code: str, language: str) -> JSON:
    key = {"join": "button.join", "ready": "button.continue" if live.round_no else "button.ready"}[code]
    return {"action": code, "arg": None, "label": t(language, key), "style": "primary"}


def _muxi_actions(live: LiveTable, engine: muxi.MuxiTable, viewer: int, language: str) -> list[JSON]:
    actions = []
    for move in engine.legal_actions(viewer):
        code = MUXI_CODES[move]
        if code == "leave":
            actions.append(_leave(live, viewer, language))
        elif code in ("join", "ready"):
            actions.append(_lobby_action(live, code, language))
        else:
            style = "primary" if code in ("banker", "draw") else "secondary"
            actions.append(
                {"action": code, "arg": None, "label": t(language, f"button.{code}"), "style": style}
            )
    return actions


def _showhand(live: LiveTable, engine: showhand.ShowhandTable, viewer: int, language: str) -> JSON:
    part: JSON = {"phase": engine.phase.value, "base": engine.base}
    if engine.phase is showhand.Phase.BETTING:
        part |= {"pot": engine.pot, "cap": engine.cap, "stake": engine.max_stake, "card_no": engine.card_no}
        seats = []
        for player in engine.players:
            seat = _seat(live, player.person, viewer)
            seat["lead"] = player.person == engine.lead
            seat["turn"] = player.person == engine.turn
            seat["total"] = player.total
            seat["folded"] = player.folded or player.escaped
            hole = [player.hole.token if player.person == viewer and player.hole else HIDDEN]
            seat["cards"] = ([] if player.hole is None else hole) + tokens(player.face_up)
            seat["hole"] = player.hole is not None  # the first card is the face-down one
            if player.folded:
                timed_out = live.view.acted.get(player.person, "").startswith("timeout_fold")
                seat["status"] = t(language, "showhand.timed_out" if timed_out else "showhand.folded")
            seats.append(seat)
        part["seats"] = seats
    else:
        part |= {"pot": None, "seats": _lobby_seats(live, viewer, language)}
    part["actions"] = _showhand_actions(live, engine, viewer, language)
    part["amount"] = _amount_range(engine, viewer, language)
    return part


def _amount_range(engine: showhand.ShowhandTable, viewer: int, language: str) -> JSON | None:
    """A bet or raise of any whole multiple of B between the least and the round's cap (RULES.md
    2.4: the buttons offer B, 2B and the cap), for a slider: None when the buttons already offer
    every amount. A total of M is left to the all-in button, which does the same."""
    amounts = engine.bet_amounts(viewer)
    if amounts is None:
        return None
    (move, floor, top), step = amounts, engine.base
    buttons = [o for o in engine.legal_actions(viewer) if o.move is move]
    if (top - floor) // step + 1 <= len(buttons):
        return None
    own = engine.player(viewer).total
    template = t(language, f"showhand.button.{move}", pay="{pay}", total="{total}")
    code = ACTION_CODES[move]
    return {"action": code, "min": floor, "max": top, "step": step, "own": own, "label": template}


def _showhand_actions(
    live: LiveTable, engine: showhand.ShowhandTable, viewer: int, language: str
) -> list[JSON]:
    actions = []
    for option in engine.legal_actions(viewer):
        move = option.move
        if move is showhand.Move.LEAVE:
            actions.append(_leave(live, viewer, language))
        elif move in (showhand.Move.JOIN, showhand.Move.READY):
            actions.append(_lobby_action(live, move.value, language))
        elif move in ACTION_CODES:
            style = "danger" if move is showhand.Move.FOLD else "primary"
            if move is showhand.Move.ALL_IN:
                style = "allin"
            actions.append(
                {
                    "action": ACTION_CODES[move],
                    "arg": None if move in (showhand.Move.CHECK, showhand.Move.FOLD) else option.amount,
                    "label": option_label(option, language),
                    "style": style,
                    "pay": option.pay,
                }
            )
    return actions


def _results(live: LiveTable, language: str) -> JSON | None:
    """The last show-down: hands named, who won what (cards only as the table message shows them)."""
    view = live.view
    if not view.results:
        return None
    lines = [_result_line(live, line, language) for line in view.results]
    if live.game == "muxi":
        lines.sort(key=lambda line: not line["banker"])
    return {"round": view.results_round, "reason": view.end_reason, "lines": lines}


def _result_line(live: LiveTable, line: ResultLine, language: str) -> JSON:
    cards: list[str] = []
    hand = ""
    if live.game == "muxi":
        shown = shown_down(live, line)
        if line.status in (muxi.Status.ESCAPED, muxi.Status.FORFEIT):
            hand = t(language, f"muxi.status.{line.status}")
        elif shown:
            hand = hand_label(line.hand, line.points, language)
        if shown:
            cards = tokens(line.cards)
    else:
        if line.status in ("escaped", "folded", "timed_out"):
            hand = t(language, f"showhand.{line.status}")
        elif line.hand:
            hand = hand_name(showhand.evaluate(list(line.cards)), language)
        cards = tokens(line.cards)  # the engine gives the face-down card only when it was shown
    hole = live.game == "showhand" and len(cards) == LAST_CARD
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
        "hole": hole,  # the first card was the face-down one, shown
    }
