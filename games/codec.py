"""Plain-JSON round trips for the engines' dataclasses (tables, actions, events).

Cards become their tokens, enums their values, tuples lists, dict keys strings; ``from_plain``
reads the type hints back, so a saved table comes back exactly as it was.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from functools import cache

from games.cards import Card, parse_card

Plain = None | bool | int | float | str | list["Plain"] | dict[str, "Plain"]


def to_plain(value: object) -> Plain:
    """A JSON-ready form of a dataclass tree."""
    # The exact type, tested by identity: faster than isinstance (the save after every action is
    # hot), but a checker cannot narrow ``value`` by it, hence the four ignores.
    kind: type = type(value)
    if kind in _SCALARS:
        return value  # type: ignore[return-value]  # exactly None, bool, int, float or str
    if kind is Card:
        return value.token  # type: ignore[attr-defined,no-any-return]  # a Card's token is a str
    if kind is list or kind is tuple:
        return [to_plain(item) for item in value]  # type: ignore[attr-defined]  # a list or a tuple
    if kind is dict:
        return {str(key): to_plain(item) for key, item in value.items()}  # type: ignore[attr-defined]  # a dict
    names = _fields(kind)
    if names is not None:
        return {name: to_plain(getattr(value, name)) for name in names}
    if isinstance(value, Enum):
        plain: Plain = value.value  # the engines' enums hold a str or an int
        return plain
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_plain(item) for key, item in value.items()}
    raise TypeError(f"cannot encode {type(value).__name__}")


_SCALARS = frozenset({type(None), bool, int, float, str})


@cache
def _fields(kind: type) -> tuple[str, ...] | None:
    """A dataclass's field names (looked up once per class: the save after every action is hot)."""
    return tuple(field.name for field in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None


@cache
def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


T = typing.TypeVar("T")


def from_plain(cls: type[T], data: Plain) -> T:
    """Rebuild a ``cls`` (a dataclass) from :func:`to_plain`'s output."""
    value = _decode(cls, data)
    assert isinstance(value, cls)
    return value


def _decode(kind: object, data: Plain) -> object:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            if arg in (int, float, str, bool):
                if type(data) is arg or (arg is float and type(data) is int):
                    return data
                continue
            return _decode(arg, data)
        raise TypeError(f"{data!r} fits none of {kind}")
    if origin is tuple:
        assert isinstance(data, list)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], item) for item in data)
        return tuple(_decode(arg, item) for arg, item in zip(args, data, strict=True))
    if origin is list:
        assert isinstance(data, list)
        return [_decode(args[0], item) for item in data]
    if origin is dict:
        assert isinstance(data, dict)
        key_type, value_type = args
        return {
            _decode(key_type, int(key) if key_type is int else key): _decode(value_type, item)
            for key, item in data.items()
        }
    if kind is Card:
        assert isinstance(data, str)
        return parse_card(data)
    if isinstance(kind, type) and issubclass(kind, Enum):
        return kind(data)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        assert isinstance(data, dict)
        hints = _hints(kind)
        return kind(**{name: _decode(hints[name], item) for name, item in data.items()})
    if kind is float and isinstance(data, int | float):
        return float(data)
    if kind in (int, str, bool) or kind is type(None):
        return data
    raise TypeError(f"cannot decode {kind}")
