"""Showhand (梭哈): the 28-card five-card stud of RULES.md section 2.

``hands`` rates five-card hands (:func:`evaluate`, :func:`compare`) and face-up cards for choosing
the lead (:func:`visible_strength`, :func:`compare_visible`); ``ShowhandTable`` is the table's state
machine with its actions (``Bet``, ``Check``, ``Call``, ``Raise``, ``AllIn``, ``Fold`` and the shared
``Join``, ``Leave``, ``Ready``, ``Timeout``, ``Cancel``), its events and its refusals.
"""

from games.fairness import Shuffle, verify
from games.showhand.betting import AllIn, Bet, BettingAction, Call, Check, Fold, Move, Option, Raise
from games.showhand.errors import (
    AllInNotYet,
    AlreadyFolded,
    BadAmount,
    CannotBet,
    CannotCheck,
    CannotRaisePastCap,
    NothingToCall,
    NothingToRaise,
)
from games.showhand.events import (
    BetMade,
    BettingRoundOver,
    BettingRoundStarted,
    Called,
    CardsDealt,
    Checked,
    EndReason,
    FaceUp,
    Folded,
    GameOver,
    LeadChanged,
    LeadReason,
    PersonResult,
    Raised,
    ShowDown,
    ShownHand,
    Stakes,
    TurnOf,
    WentAllIn,
)
from games.showhand.hands import (
    Category,
    ShowhandHand,
    compare,
    compare_visible,
    evaluate,
    visible_strength,
)
from games.showhand.table import Phase, Player, ShowhandAction, ShowhandTable
from games.table import Cancel, Credit, Join, Leave, Ready, Timeout

__all__ = [
    "AllIn",
    "AllInNotYet",
    "AlreadyFolded",
    "BadAmount",
    "Bet",
    "BetMade",
    "BettingAction",
    "BettingRoundOver",
    "BettingRoundStarted",
    "Call",
    "Called",
    "Cancel",
    "CannotBet",
    "CannotCheck",
    "CannotRaisePastCap",
    "CardsDealt",
    "Category",
    "Check",
    "Checked",
    "Credit",
    "EndReason",
    "FaceUp",
    "Fold",
    "Folded",
    "GameOver",
    "Join",
    "LeadChanged",
    "LeadReason",
    "Leave",
    "Move",
    "NothingToCall",
    "NothingToRaise",
    "Option",
    "PersonResult",
    "Phase",
    "Player",
    "Raise",
    "Raised",
    "Ready",
    "ShowDown",
    "ShowhandAction",
    "ShowhandHand",
    "ShowhandTable",
    "ShownHand",
    "Shuffle",
    "Stakes",
    "Timeout",
    "TurnOf",
    "WentAllIn",
    "compare",
    "compare_visible",
    "evaluate",
    "verify",
    "visible_strength",
]
