"""Muxi (木虱), the Chaoshan banker-against-everyone game: hands, settlement and the table.

Public API: ``evaluate``, ``compare``, ``settle``, ``base_for_balance`` (RULES.md 1.2–1.4),
``MuxiTable`` and its actions and events (1.5–1.6), ``verify`` for the fairness commitment.
"""

from games.fairness import Shuffle, verify
from games.muxi.hands import Kind, MuxiHand, card_points, compare, evaluate, settle
from games.muxi.table import (
    BankerAsked,
    BankerChosen,
    BeBanker,
    Decided,
    Draw,
    HandShown,
    Move,
    MuxiAction,
    MuxiEvent,
    MuxiTable,
    PassBanker,
    PersonResult,
    Phase,
    RoundEnd,
    RoundOver,
    SeenHand,
    Stand,
    Status,
    TurnOf,
)
from games.stakes import MIN_BALANCE, base_for_balance
from games.table import Cancel, CloseAfterRound, Credit, Join, Leave, Ready, Timeout

__all__ = [
    "MIN_BALANCE",
    "BankerAsked",
    "BankerChosen",
    "BeBanker",
    "Cancel",
    "CloseAfterRound",
    "Credit",
    "Decided",
    "Draw",
    "HandShown",
    "Join",
    "Kind",
    "Leave",
    "Move",
    "MuxiAction",
    "MuxiEvent",
    "MuxiHand",
    "MuxiTable",
    "PassBanker",
    "PersonResult",
    "Phase",
    "Ready",
    "RoundEnd",
    "RoundOver",
    "SeenHand",
    "Shuffle",
    "Stand",
    "Status",
    "Timeout",
    "TurnOf",
    "base_for_balance",
    "card_points",
    "compare",
    "evaluate",
    "settle",
    "verify",
]
