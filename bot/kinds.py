"""The games the bot runs, each as what the bot needs of it: its engine, deck, buttons and views."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from telegram import InlineKeyboardMarkup

from bot.live import Engine, LiveTable, ResultLine
from bot.views import muxi as muxi_view
from bot.views.common import Screen
from games import muxi
from games.cards import DECK_54, Card
from games.codec import Plain


@dataclass(frozen=True)
class GameKind:
    name: str
    deck: tuple[Card, ...]
    new: Callable[[int, int], Engine]  # (turn seconds, lobby seconds)
    load: Callable[[dict[str, Plain]], Engine]
    moves: dict[str, Callable[[int], object]]  # a button's action -> the engine action of a person
    results: Callable[[object], list[ResultLine] | None]  # an event -> the results it announces
    table_text: Callable[[LiveTable, Screen], str]
    table_keyboard: Callable[[LiveTable, str], InlineKeyboardMarkup | None]
    private_hand: Callable[[LiveTable, int, str], str | None]  # the popup of "my cards"
    dm: Callable[[LiveTable, int, Screen, str], tuple[str, InlineKeyboardMarkup | None] | None]
    private_people: Callable[[LiveTable], list[int]]  # who holds cards this round


def _muxi_results(event: object) -> list[ResultLine] | None:
    if not isinstance(event, muxi.RoundOver):
        return None
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
        )
        for r in event.results
    ]


MUXI = GameKind(
    name="muxi",
    deck=DECK_54,
    new=lambda turn, lobby: muxi.MuxiTable.new(turn_seconds=turn, lobby_seconds=lobby),
    load=muxi.MuxiTable.from_dict,
    moves={"banker": muxi.BeBanker, "pass": muxi.PassBanker, "draw": muxi.Draw, "stand": muxi.Stand},
    results=_muxi_results,
    table_text=muxi_view.table_text,
    table_keyboard=muxi_view.table_keyboard,
    private_hand=muxi_view.private_hand,
    dm=muxi_view.dm,
    private_people=lambda live: [hand.person for hand in live.engine.state.hands],
)

KINDS: dict[str, GameKind] = {"muxi": MUXI}
