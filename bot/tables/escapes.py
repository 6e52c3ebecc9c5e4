"""An escape (leaving a round under way, at its price) is asked for twice: the second request,
soon after the price reached them, confirms it."""

from __future__ import annotations

from collections.abc import Callable, Hashable


class Escapes:
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        # (table, person): when the price of an escape reached them (None: its reply is still to be
        # sent), and the price
        self._asked: dict[tuple[int, int], tuple[float | None, Hashable]] = {}

    def confirmed(
        self, table_id: int, person: int, within: float, quote: Hashable, by_reply: bool = False
    ) -> bool:
        """True the second time within ``within`` seconds of the price reaching them, at the same
        ``quote`` (the price they were told, in that round: a bet in between asks again), else the
        request is remembered (the first of two). A price still on its way by a reply
        (``price_by_reply``) is not answered yet: a ``/leave`` again (``by_reply``) waits for it; a
        press, whose popup shows the price at once, is the first of two itself."""
        now = self.clock()
        first = self._asked.get((table_id, person))
        if first is not None and first[1] == quote:
            if first[0] is None and by_reply:
                return False
            if first[0] is None:
                self._asked[(table_id, person)] = (now, quote)
                return False
            if now - first[0] <= within:
                del self._asked[(table_id, person)]
                return True
        if len(self._asked) > 1_000:
            self._asked = {
                key: asked
                for key, asked in self._asked.items()
                if asked[0] is None or now - asked[0] <= within
            }
        self._asked[(table_id, person)] = (now, quote)  # (a press's popup shows the price at once)
        return False

    def price_by_reply(self, table_id: int, person: int) -> Callable[[], None]:
        """The price of the escape just asked goes by a reply (``/leave``): the confirmation window
        starts when it has reached them, when the returned callback is called."""
        asked = self._asked.get((table_id, person))
        if asked is not None:
            self._asked[(table_id, person)] = (None, asked[1])

        def seen() -> None:
            waiting = self._asked.get((table_id, person))
            if waiting is not None and waiting[0] is None and asked is not None and waiting[1] == asked[1]:
                self._asked[(table_id, person)] = (self.clock(), waiting[1])

        return seen
