"""Pure rules of the two games: ``games.muxi`` (木虱) and ``games.showhand`` (梭哈).

``Action`` and ``Event`` are every action a table takes and every event it reports, of either
game (``games.muxi.MuxiAction``/``MuxiEvent``, ``games.showhand.ShowhandAction``/``ShowhandEvent``).
They are built on first use, so importing ``games.cards`` alone (storage does) does not rate every
showhand hand.
"""

from __future__ import annotations

from types import UnionType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from games.muxi import MuxiAction, MuxiEvent
    from games.showhand import ShowhandAction, ShowhandEvent

    Action = MuxiAction | ShowhandAction
    Event = MuxiEvent | ShowhandEvent

__all__ = ["Action", "Event"]


def __getattr__(name: str) -> UnionType:
    if name not in __all__:
        raise AttributeError(f"module 'games' has no attribute {name!r}")
    from games.muxi import MuxiAction, MuxiEvent
    from games.showhand import ShowhandAction, ShowhandEvent

    unions = {"Action": MuxiAction | ShowhandAction, "Event": MuxiEvent | ShowhandEvent}
    globals().update(unions)
    return unions[name]
