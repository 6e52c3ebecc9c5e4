"""Muxi's part of the Mini App's JSON: the seats as the viewer may see them, and their buttons."""

from __future__ import annotations

from bot.display.i18n import t
from bot.display.views.app import (
    ActionJSON,
    GameJSON,
    ResultLineJSON,
    SeatJSON,
    leave_action,
    lobby_actions,
    lobby_seats,
    result_line,
    seat,
    tokens,
)
from bot.display.views.muxi import engine_of, hand_label, judged_label, shown_down
from bot.model.callbacks import MuxiCode, muxi_code
from bot.model.live_table import LiveTable, ResultLine
from games.muxi import Phase, SeenHand, Status


def app_part(live: LiveTable, viewer: int, language: str) -> GameJSON:
    engine = engine_of(live)
    state, phase = engine.state, engine.phase
    awaited = engine.awaited()
    if phase is Phase.BANKER:
        seats = [seat(live, person, viewer) for person in state.participants]
        for one in seats:
            one["turn"] = one["person"] in awaited
    elif phase in (Phase.DRAW, Phase.BANKER_DRAW):
        seen = engine.seen_by(viewer)
        banker_first = [hand for hand in seen if hand.is_banker] + [
            hand for hand in seen if not hand.is_banker
        ]
        seats = [_hand_seat(live, hand, viewer, awaited, language) for hand in banker_first]
    else:
        seats = lobby_seats(live, viewer, language)
    return {
        "phase": phase.value,
        "base": state.base,
        "pot": None,
        "seats": seats,
        "actions": _actions(live, viewer, language),
    }


def _hand_seat(
    live: LiveTable, hand: SeenHand, viewer: int, awaited: tuple[int, ...], language: str
) -> SeatJSON:
    one = seat(live, hand.person, viewer)
    one["banker"], one["turn"] = hand.is_banker, hand.person in awaited
    one["cards"] = tokens(hand.cards)
    if None not in hand.cards:
        one["hand"] = judged_label([card for card in hand.cards if card is not None], language)
    if hand.status is Status.NATURAL:
        one["status"] = t(language, "muxi.status.stands") if hand.is_banker else ""
    else:
        one["status"] = t(language, f"muxi.status.{hand.status.value}")
    return one


def _actions(live: LiveTable, viewer: int, language: str) -> list[ActionJSON]:
    actions: list[ActionJSON] = []
    for move in engine_of(live).legal_actions(viewer):
        code = muxi_code(move)
        if code is MuxiCode.LEAVE:
            actions.append(leave_action(live, viewer, language))
        elif code in (MuxiCode.JOIN, MuxiCode.READY):
            actions += lobby_actions(live, code.value, viewer, language)
        else:
            style = "primary" if code in (MuxiCode.BE_BANKER, MuxiCode.DRAW) else "secondary"
            label = t(language, f"button.{code.value}")
            actions.append({"action": code.value, "arg": None, "label": label, "style": style})
    return actions


def app_result_line(live: LiveTable, line: ResultLine, language: str) -> ResultLineJSON:
    """A results line with the cards and the hand only as the table message shows them."""
    shown = shown_down(live, line)
    hand = ""
    if line.status in (Status.ESCAPED, Status.FORFEIT):
        hand = t(language, f"muxi.status.{line.status}")
    elif shown:
        hand = hand_label(line.hand, line.points, language)
    return result_line(live, line, tokens(line.cards) if shown else [], hand, hole=False)
