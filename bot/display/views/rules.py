"""/rules: each game's hands, best first, with what they pay — short lines for a phone screen."""

from __future__ import annotations

from collections.abc import Callable

from bot.display.i18n import t
from games.muxi import Kind
from games.showhand import Category

# Hands whose name already says what they pay (八倍 同花顺, Flush ×3): no "×" after them.
NAMED_PAYS = frozenset({Kind.STRAIGHT_FLUSH, Kind.THREE_OF_A_KIND, Kind.STRAIGHT, Kind.FLUSH, Kind.DOUBLE})


def _pays(kind: Kind) -> str:
    if kind in NAMED_PAYS:
        return ""
    return " —" if kind is Kind.MUXI else f" ×{kind.multiplier}"


def _muxi_hands(language: str) -> list[str]:
    return [
        t(
            language,
            "rules.muxi.hand",
            kind=t(language, f"muxi.kind.{kind}"),
            what=t(language, f"rules.muxi.what.{kind}"),
            pays=_pays(kind),
        )
        for kind in Kind
    ]


def _showhand_hands(language: str) -> list[str]:
    return [
        t(
            language,
            "rules.showhand.hand",
            n=number,
            kind=t(language, f"showhand.category.{category}"),
            what=t(language, f"rules.showhand.what.{category}"),
        )
        for number, category in enumerate(Category, 1)
    ]


#: Each game's hands, best first, in the engine's order.
HANDS: dict[str, Callable[[str], list[str]]] = {"muxi": _muxi_hands, "showhand": _showhand_hands}


def rules_text(game: str, language: str) -> str:
    hands = HANDS[game](language)
    return "\n".join([t(language, f"rules.{game}.title"), *hands, t(language, f"rules.{game}.play")])
