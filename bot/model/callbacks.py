"""Callback data: our own short strings, ``<game>:<table>:<round>:<action>[:<arg>]`` (≤ 64 bytes).

The round number, not the table's version, marks a stale button: during the simultaneous draw every
player presses at once, and the table message is edited at most every few seconds, so a version
would refuse presses that are perfectly good; the engine refuses what no longer fits the round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from bot.telegram_facts import CALLBACK_DATA_BYTES
from games import muxi, showhand

GAME_CODES = {"muxi": "m", "showhand": "s"}
GAMES_BY_CODE = {code: game for game, code in GAME_CODES.items()}
PICK = "pick"  # the game picker of a bare /newgame: ``pick:<game>``
MAX_BYTES = CALLBACK_DATA_BYTES
# ASCII only: ``\d`` alone takes any script's digits (``١``), which ``int`` reads as ours.
_PATTERN = re.compile(r"^([ms]):(\d{1,12}):(\d{1,9}):([a-z_]{1,16})(?::([0-9]{1,16}))?$", re.ASCII)


CARDS = "cards"  # the "my cards" button of either game: a popup, no engine action
AUTO_READY = "autoready"  # either game, between rounds: ready now and for every next round
AUTOPILOT_OFF = "back"  # either game, in the DM of someone on autopilot (托管): "我回来了"


class MuxiCode(StrEnum):
    """A muxi button's action code, one per engine ``games.muxi.Move`` of the same name (the codes
    are what buttons already sent carry: they never change)."""

    JOIN = "join"
    LEAVE = "leave"
    READY = "ready"
    BE_BANKER = "banker"
    PASS = "pass"
    DRAW = "draw"
    STAND = "stand"


class ShowhandCode(StrEnum):
    """A showhand button's action code, one per engine ``games.showhand.Move`` of the same name
    (a bet's amount rides as the argument)."""

    JOIN = "join"
    LEAVE = "leave"
    READY = "ready"
    CHECK = "check"
    BET = "bet"
    CALL = "call"
    RAISE = "raise"
    ALL_IN = "allin"
    FOLD = "fold"


def muxi_code(move: muxi.Move) -> MuxiCode:
    return MuxiCode[move.name]


def showhand_code(move: showhand.Move) -> ShowhandCode:
    return ShowhandCode[move.name]


@dataclass(frozen=True, slots=True)
class Press:
    """A decoded table button."""

    game: str
    table_id: int
    round_no: int
    action: str
    arg: str | None = None


def encode(game: str, table_id: int, round_no: int, action: str, arg: str | int | None = None) -> str:
    data = f"{GAME_CODES[game]}:{table_id}:{round_no}:{action}" + (f":{arg}" if arg is not None else "")
    assert len(data.encode()) <= MAX_BYTES and _PATTERN.fullmatch(data), data
    return data


def decode(data: str | None) -> Press | None:
    """The press a button's data stands for, or None for anything we did not make."""
    if not data or len(data.encode()) > MAX_BYTES:
        return None
    match = _PATTERN.fullmatch(data)
    if match is None:
        return None
    code, table_id, round_no, action, arg = match.groups()
    return Press(GAMES_BY_CODE[code], int(table_id), int(round_no), action, arg)


def pick(game: str) -> str:
    return f"{PICK}:{game}"


def decode_pick(data: str | None) -> str | None:
    if data and data.startswith(PICK + ":"):
        game = data.removeprefix(PICK + ":")
        return game if game in GAME_CODES else None
    return None
