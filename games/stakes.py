"""Stakes shared by both games: the minimum to sit and the base that follows the coins (RULES.md 1.4, 2.3)."""

from __future__ import annotations

from collections.abc import Iterable

MIN_BALANCE = 1_000
_BASE_STEPS = ((4_000_000, 100_000), (400_000, 10_000), (40_000, 1_000), (4_000, 100), (1_000, 10))


def base_for_balance(balance: int) -> int | None:
    """The base (底注) for a balance, per RULES.md 1.4; None below 1,000 (too few coins to sit)."""
    for floor, base in _BASE_STEPS:
        if balance >= floor:
            return base
    return None


def base_for_table(balances: Iterable[int]) -> int:
    """A round's base: read from the lowest balance among the seated people (RULES.md 1.4, DECIDED)."""
    base = base_for_balance(min(balances))
    if base is None:
        raise ValueError("everyone seated must hold at least 1,000 coins (RULES.md 1.4)")
    return base


def pro_rata(available: int, owed: list[int]) -> list[int]:
    """Share ``available`` coins among debts in proportion to each (rounded down), when short.

    Paid in full when there is enough. Otherwise the remainder of the rounding goes to the earliest
    debts first, never past what each is owed (RULES.md 1.6, DECIDED).
    """
    total = sum(owed)
    if available >= total:
        return list(owed)
    shares = [debt * available // total for debt in owed]
    remainder = available - sum(shares)
    for index, debt in enumerate(owed):
        extra = min(remainder, debt - shares[index])
        shares[index] += extra
        remainder -= extra
    return shares
