"""Plain data as compact JSON text: a table's state as saved, a Mini App's view as sent.

Both are made at every action, so orjson writes them: ten times the standard library's speed, the
same text for plain data (text, integers, floats, lists and objects of them). What orjson refuses (an
integer past 64 bits, a key that is not a string) the standard library writes, and what is not
plain data it refuses, as it always did: orjson would write a dataclass or a datetime its own way,
so those (and subclasses of str) are passed to it.
"""

from __future__ import annotations

import json

import orjson

_ONLY_PLAIN = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def compact_json(data: object) -> str:
    """``data`` as JSON text, UTF-8 unescaped, with no spaces (``TypeError`` for what is not plain data)."""
    try:
        return orjson.dumps(data, option=_ONLY_PLAIN).decode()
    except orjson.JSONEncodeError:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
