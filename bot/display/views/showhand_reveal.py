"""Showhand's all-in reveal as the table message and the Mini App show it (issue 49, point 4): when
everyone answered an all-in, the engine deals the cards left at once; while ``LiveTable.reveal``
is under way (``bot/tables/reveals.py``) the hands are drawn as they ended, cut to the cards shown
so far, face-down cards still down (a viewer's own shown to them), and no results or buttons yet.

Each game's view is wrapped here (``staged``, ``staged_keyboard``, ``staged_app``): outside a reveal
it is drawn as always.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from bot.display.i18n import t
from bot.display.views.acted import folded_as
from bot.display.views.app import GameJSON, SeatJSON, seat, tokens
from bot.display.views.common import Rendering, card_text, cards_text, coins, name
from bot.display.views.lobby import DmView
from bot.display.views.showhand import engine_of, header, seat_cards
from bot.model.live_table import LiveTable
from bot.model.shown import Markup
from games.showhand import BettingRoundStarted, CardsDealt, Phase, Player, ShowDown

#: A person's DM for a table (as ``bot.display.game_kinds.DrawDm``): its text and buttons, or None.
DrawDm = Callable[[LiveTable, int, Rendering, str], DmView | None]
FULL_HAND = 5  # a showhand hand's cards: the step after the last card shows the hands and results
REVEAL_PHASE = "reveal"  # the Mini App's phase while the cards are dealt one by one


def run_out(events: Iterable[object]) -> int | None:
    """How many cards each hand held when an all-in was answered, if the engine then dealt the rest
    with nobody left to bet (a card with no betting after it, before the show-down); else None."""
    dealt: int | None = None  # the last card dealt, while no betting followed it
    for event in events:
        if isinstance(event, CardsDealt | ShowDown) and dealt is not None:
            return dealt - 1
        if isinstance(event, CardsDealt):
            dealt = event.card_no
        elif isinstance(event, BettingRoundStarted):
            dealt = None
    return None


def revealing(live: LiveTable) -> bool:
    """The last round's cards are being dealt one by one now (its engine is back in the lobby)."""
    reveal = live.reveal
    return (
        reveal is not None
        and reveal.round_no == live.round_no
        and engine_of(live).phase is Phase.LOBBY
        and not live.in_round
    )


def _as_shown(live: LiveTable, player: Player) -> Player:
    """A player as the reveal shows them now: the face-up cards dealt so far."""
    assert live.reveal is not None
    return replace(player, face_up=list(player.face_up[: live.reveal.shown - 1]))


def reveal_text(live: LiveTable, screen: Rendering) -> str:
    engine, language = engine_of(live), screen.language
    lines = [header(live, language), t(language, "showhand.reveal")]
    for number, player in enumerate(engine.state.ended, 1):
        line = t(
            language,
            "showhand.player_line",
            n=number,
            name=name(live.name(player.person)),
            cards=seat_cards(live, _as_shown(live, player), language),
            total=coins(player.total),
        )
        lines.append(line)
    return "\n".join(lines)


def staged(table_text: Callable[[LiveTable, Rendering], str]) -> Callable[[LiveTable, Rendering], str]:
    """The table message: the reveal's step while one is under way, else as always."""

    def text(live: LiveTable, screen: Rendering) -> str:
        return reveal_text(live, screen) if revealing(live) else table_text(live, screen)

    return text


def staged_keyboard(
    table_keyboard: Callable[[LiveTable, str], Markup | None],
) -> Callable[[LiveTable, str], Markup | None]:
    """No buttons while the cards are dealt (the lobby's come with the results)."""

    def keyboard(live: LiveTable, language: str) -> Markup | None:
        return None if revealing(live) else table_keyboard(live, language)

    return keyboard


def staged_dm(dm: DrawDm) -> DrawDm:
    """A player's DM while the cards are dealt: their cards so far and that they are coming, no
    result yet and nothing to press (an answered prompt loses its buttons at once, as always)."""

    def drawn(live: LiveTable, person: int, screen: Rendering, chat_title: str) -> DmView | None:
        if not revealing(live):
            return dm(live, person, screen, chat_title)
        engine, language = engine_of(live), screen.language
        player = next((one for one in engine.state.ended if one.person == person), None)
        if player is None or player.hole is None:
            return None
        title = t(
            language,
            "showhand.dm",
            title=t(language, "showhand.title"),
            chat=name(chat_title, 32),
            round=engine.game_no,
        )
        up = cards_text(_as_shown(live, player).face_up, language) or "—"
        cards = t(language, "showhand.your_cards", hole=card_text(player.hole, language), up=up)
        return "\n".join([title, cards, t(language, "showhand.reveal")]), None

    return drawn


def staged_people(private_people: Callable[[LiveTable], list[int]]) -> Callable[[LiveTable], list[int]]:
    """Who holds cards: while they are dealt one by one, those of the game just played (someone
    it left with no coins, no longer seated, still sees their own face-down card in the Mini App)."""

    def people(live: LiveTable) -> list[int]:
        if revealing(live):
            return [player.person for player in engine_of(live).state.ended]
        return private_people(live)

    return people


def reveal_part(live: LiveTable, viewer: int, language: str) -> GameJSON:
    """The Mini App's part while the cards are dealt: the hands as shown so far, the pot, nothing
    to press."""
    engine = engine_of(live)
    seats: list[SeatJSON] = []
    for player in engine.state.ended:
        shown = _as_shown(live, player)
        one = seat(live, player.person, viewer)
        one.pop("score", None)  # (both count this game already: they would tell who won)
        one["balance"] = None
        one["total"] = player.total
        one["folded"] = player.folded or player.escaped
        hole = [player.hole if player.person == viewer else None] if player.hole is not None else []
        one["cards"] = tokens(hole) + tokens(shown.face_up)
        one["hole"] = player.hole is not None
        if player.folded:
            one["status"] = t(language, f"showhand.{folded_as(live.view, player.person)}")
        seats.append(one)
    assert live.reveal is not None
    return {
        "phase": REVEAL_PHASE,
        "base": engine.base,
        "pot": sum(player.total for player in engine.state.ended),
        "seats": seats,
        "actions": [],
        "card_no": live.reveal.shown,
    }


def staged_app(
    app_part: Callable[[LiveTable, int, str], GameJSON],
) -> Callable[[LiveTable, int, str], GameJSON]:
    def part(live: LiveTable, viewer: int, language: str) -> GameJSON:
        return reveal_part(live, viewer, language) if revealing(live) else app_part(live, viewer, language)

    return part
