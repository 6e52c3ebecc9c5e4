"""A finished round played again: its actions as saved, and the engine re-run over them.

A round's actions are kept as plain JSON (``action_to_plain``), each tagged with its type; the
action that started the round (a ``Ready``) is kept without its deck, which the round's record
holds once the round is over (the deck and salt revealed for /verify): ``rerun`` gives it back.
Re-running the engine from the table as it was before that action, with the same actions, makes
the same events: the engines read no clock and no random source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from games.cards import parse_cards
from games.codec import Plain, from_plain, to_plain
from games.fairness import Shuffle
from games.muxi import BeBanker, Draw, MuxiTable, PassBanker, Stand
from games.showhand import AllIn, Bet, Call, Check, Fold, Raise, ShowhandTable
from games.table import Cancel, CloseAfterRound, Credit, Join, Leave, Ready, Timeout

TYPE = "type"  # the key naming an action's type in its plain form
_ACTIONS: dict[str, type] = {
    kind.__name__: kind
    for kind in (
        Join,
        Leave,
        Ready,
        Timeout,
        Credit,
        Cancel,
        CloseAfterRound,
        BeBanker,
        PassBanker,
        Draw,
        Stand,
        Bet,
        Check,
        Call,
        Raise,
        AllIn,
        Fold,
    )
}
_LOADERS: dict[str, Callable[[dict[str, Plain]], MuxiTable | ShowhandTable]] = {
    "muxi": MuxiTable.from_dict,
    "showhand": ShowhandTable.from_dict,
}


def action_to_plain(action: object) -> dict[str, Plain]:
    """An action as kept: its fields and its type; a ``Ready`` without its deck (see the module)."""
    name = type(action).__name__
    if _ACTIONS.get(name) is not type(action):
        raise TypeError(f"not an action of either game: {action!r}")
    if isinstance(action, Ready):
        return {TYPE: name, "person": action.person}
    plain = to_plain(action)
    assert isinstance(plain, dict)
    return {TYPE: name, **plain}


def action_from_plain(data: Mapping[str, Any], shuffle: Shuffle | None = None) -> object:
    """An action as kept, back (a ``Ready`` gets ``shuffle``, the round's deck); ``ValueError`` for
    what is no action."""
    fields = {key: value for key, value in data.items() if key != TYPE}
    kind = _ACTIONS.get(str(data.get(TYPE)))
    if kind is None:
        raise ValueError(f"no such action: {data.get(TYPE)!r}")
    if kind is Ready:
        if shuffle is None:
            raise ValueError("a round's first action needs its deck")
        return Ready(int(fields["person"]), shuffle)
    return from_plain(kind, fields)


@dataclass(frozen=True)
class Played:
    """One action of the round and what the engine said it made happen."""

    action: object
    events: list[Any]


def rerun(
    game: str,
    before: Mapping[str, Any],
    actions: Iterable[Mapping[str, Any]],
    deck: str,
    salt: str,
    on_step: Callable[[MuxiTable | ShowhandTable, Played], None] | None = None,
) -> tuple[MuxiTable | ShowhandTable, list[Played]]:
    """The round played again: the engine loaded as it was before the round's first action
    (``before``: its ``to_dict``), each kept action applied in order, with the round's deck and salt
    (its record). ``on_step`` is called after each action with the engine as it is then. A
    ``RuleError`` or ``ValueError`` means what was kept is not this round's."""
    engine = _LOADERS[game](dict(before))
    shuffle = Shuffle(tuple(parse_cards(deck)), salt)
    played = []
    for data in actions:
        action = action_from_plain(data, shuffle)
        step = Played(action, list(engine.apply(action)))  # type: ignore[arg-type]  # the game's own
        played.append(step)
        if on_step is not None:
            on_step(engine, step)
    return engine, played
