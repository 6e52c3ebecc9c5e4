"""Showhand (梭哈): the 28-card five-card stud of RULES.md section 2.

``hands`` rates five-card hands (:func:`evaluate`, :func:`compare`) and face-up cards for choosing
the lead (:func:`visible_strength`, :func:`compare_visible`).
"""

from games.showhand.hands import (
    Category,
    ShowhandHand,
    compare,
    compare_visible,
    evaluate,
    visible_strength,
)

__all__ = ["Category", "ShowhandHand", "compare", "compare_visible", "evaluate", "visible_strength"]
