"""Showhand's part of the Mini App's JSON: the players as the viewer may see them, the pot, the
viewer's buttons with what each puts in, and a slider for a bet of any step."""

from __future__ import annotations

from bot.display.i18n import t
from bot.display.views.acted import folded_as
from bot.display.views.app import (
    ActionJSON,
    AmountJSON,
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
from bot.display.views.showdown import hand_name
from bot.display.views.showhand import engine_of, feed, last_all_in, option_label
from bot.model.callbacks import showhand_code
from bot.model.live_table import LiveTable, ResultLine
from games.showhand import Move, Phase, SeenPlayer, ShowhandTable, evaluate


def app_part(live: LiveTable, viewer: int, language: str) -> GameJSON:
    engine = engine_of(live)
    part: GameJSON = {
        "phase": engine.phase.value,
        "base": engine.base,
        "pot": None,
        "seats": [],
        "actions": [],
    }
    if engine.phase is Phase.BETTING:
        part |= {"pot": engine.pot, "cap": engine.cap, "stake": engine.max_stake, "card_no": engine.card_no}
        part["seats"] = [
            _player_seat(live, engine, seen, viewer, language) for seen in engine.seen_by(viewer)
        ]
        part["feed"] = feed(live, language)
        all_in = last_all_in(live, language)
        part["all_in"] = None if all_in is None else {"seq": all_in[0], "text": all_in[1]}
    else:
        part["seats"] = lobby_seats(live, viewer, language)
    part["actions"] = _actions(live, engine, viewer, language)
    part["amount"] = _amount_range(engine, viewer, language)
    return part


def _player_seat(
    live: LiveTable, engine: ShowhandTable, seen: SeenPlayer, viewer: int, language: str
) -> SeatJSON:
    one = seat(live, seen.person, viewer)
    one["lead"] = seen.person == engine.lead
    one["turn"] = seen.person in engine.awaited()
    one["total"] = seen.total
    one["folded"] = seen.folded or seen.escaped
    one["cards"] = tokens([seen.hole] if seen.has_hole else []) + tokens(seen.face_up)
    one["hole"] = seen.has_hole  # the first card is the face-down one
    if seen.folded:
        one["status"] = t(language, f"showhand.{folded_as(live.view, seen.person)}")
    return one


def _amount_range(engine: ShowhandTable, viewer: int, language: str) -> AmountJSON | None:
    """A bet or raise of any whole multiple of B between the least and the round's cap (RULES.md
    2.4: the buttons offer B, 2B and the cap), for a slider: None when the buttons already offer
    every amount. A total of M is left to the all-in button, which does the same."""
    amounts = engine.bet_amounts(viewer)
    player = engine.player(viewer)
    if amounts is None or player is None:
        return None
    (move, floor, top), step = amounts, engine.base
    buttons = [option for option in engine.legal_actions(viewer) if option.move is move]
    if (top - floor) // step + 1 <= len(buttons):
        return None
    template = t(language, f"showhand.button.{move}", pay="{pay}", total="{total}")
    code = showhand_code(move).value
    return {"action": code, "min": floor, "max": top, "step": step, "own": player.total, "label": template}


def _actions(live: LiveTable, engine: ShowhandTable, viewer: int, language: str) -> list[ActionJSON]:
    actions: list[ActionJSON] = []
    for option in engine.legal_actions(viewer):
        move = option.move
        if move is Move.LEAVE:
            actions.append(leave_action(live, viewer, language))
        elif move in (Move.JOIN, Move.READY):
            actions += lobby_actions(live, move.value, viewer, language)
        else:
            style = {Move.FOLD: "danger", Move.ALL_IN: "allin"}.get(move, "primary")
            actions.append(
                {
                    "action": showhand_code(move).value,
                    "arg": None if move in (Move.CHECK, Move.FOLD) else option.amount,
                    "label": option_label(option, language),
                    "style": style,
                    "pay": option.pay,
                }
            )
    return actions


def app_result_line(live: LiveTable, line: ResultLine, language: str) -> ResultLineJSON:
    """A results line: the engine gives the face-down card only when it was shown (then the hand
    is named, and the first card is that face-down one)."""
    if line.status in ("escaped", "folded", "timed_out", "autopilot_folded"):
        hand = t(language, f"showhand.{line.status}")
    elif line.hand:
        hand = hand_name(evaluate(list(line.cards)), language)
    else:
        hand = ""
    return result_line(live, line, tokens(line.cards), hand, hole=bool(line.hand))
