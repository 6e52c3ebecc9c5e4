"""Waiting on a condition, bounded, never on a sleep of a guess (the one way the tests wait)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable


async def until(condition: Callable[[], object], what: str = "", timeout: float = 30.0) -> object:
    """Wait until ``condition()`` (a plain or a coroutine function) returns something true, and
    return it; ``AssertionError`` naming ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while True:
        found = condition()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        if loop.time() > give_up:
            raise AssertionError(f"not in {timeout:g} s: {what or 'the condition'}")
        await asyncio.sleep(0.02)
