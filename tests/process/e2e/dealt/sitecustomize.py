"""Imported by Python at start-up in a bot process that ``tests.process.e2e.buttons.DealtBot`` starts with
this folder first on PYTHONPATH: ``python -m bot`` then runs as it is, except that every shuffle
deals the deck order in ``PAIJU_TEST_DECK`` (card codes, as ``games.cards.format_cards`` writes
them), so a test's round is the same at every run. ``python -m bot`` has no seed of its own (the
sandbox has ``--seed``, but it runs its own fake Telegram): this is the one hook the tests need."""

from __future__ import annotations

import os
import random

# Taken out of the environment: a process the bot would start would otherwise deal these cards too.
_ORDER = os.environ.pop("PAIJU_TEST_DECK", "")

if _ORDER:
    import bot.app
    from games.cards import Card, parse_cards

    class _Dealt(random.Random):
        """Every deck shuffled into the one chosen order (the salt still comes from the seed)."""

        def __init__(self, order: list[Card]) -> None:
            super().__init__(31)
            self.order = order

        def shuffle(self, x: list[Card]) -> None:  # type: ignore[override]
            assert sorted(map(str, x)) == sorted(map(str, self.order)), "the chosen order is not this deck"
            x[:] = self.order

    _build = bot.app.build_application

    def _dealing(settings, **options):  # type: ignore[no-untyped-def]
        options.setdefault("rng", _Dealt(parse_cards(_ORDER)))
        return _build(settings, **options)

    bot.app.build_application = _dealing
