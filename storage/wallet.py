"""Coins: turning movements into ledger legs and balance changes, grants, the daily bonus.

Storage functions (``storage/sql.py``); those that write run inside the write transaction that
``Store`` opens around them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from enum import Enum
from typing import Any
from zoneinfo import ZoneInfo

from games.events import ESCROW, HOUSE, Paid
from storage.errors import IdempotencyConflict, InsufficientFunds, UnknownPerson
from storage.models import MINT, DailyClaim, LedgerEntry
from storage.sql import Query, Violation, first, many, marks, rows
from storage.timeutil import from_db_required

Account = int | str
NAMED_ACCOUNTS = (MINT, HOUSE, ESCROW)
GRANT = "grant"
DAILY = "daily"
GRANT_REASONS = (GRANT, DAILY)


@dataclass(frozen=True, slots=True)
class Leg:
    """One ledger row to write: ``delta`` for ``account``; ``entry`` is shared with the other leg."""

    account: Account
    delta: int
    counterparty: Account
    reason: str
    entry: str

    @property
    def key(self) -> str:
        return f"{self.entry}:{account_text(self.account)}"


def account_text(account: Account) -> str:
    """How an account is written in keys and the ``counterparty`` column: the id, or its name."""
    if isinstance(account, bool):
        raise ValueError(f"not an account: {account!r}")
    if isinstance(account, int):
        return str(account)
    if account in NAMED_ACCOUNTS:
        return account
    raise ValueError(f"not an account: {account!r}")


def parse_account(text: str) -> Account:
    return text if text in NAMED_ACCOUNTS else int(text)


def movement_legs(payer: Account, payee: Account, amount: int, reason: str, entry: str) -> tuple[Leg, Leg]:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError(f"amount must be a positive int, not {amount!r}")
    if account_text(payer) == account_text(payee):
        raise ValueError(f"{payer!r} cannot pay itself")
    return (
        Leg(payer, -amount, payee, reason, entry),
        Leg(payee, amount, payer, reason, entry),
    )


def reason_text(reason: object) -> str:
    return str(reason.value) if isinstance(reason, Enum) else str(reason)


def action_legs(table_id: int, round_no: int, action_seq: int, payments: Sequence[Paid]) -> list[Leg]:
    """Legs of one engine action; key ``<table_id>:<round_no>:<action_seq>:<index>:<account>``."""
    legs: list[Leg] = []
    for index, paid in enumerate(payments):
        for account in (paid.payer, paid.payee):
            if isinstance(account, str) and account == MINT:
                raise ValueError("the engine cannot move coins of the mint")
        entry = f"{table_id}:{round_no}:{action_seq}:{index}"
        legs.extend(movement_legs(paid.payer, paid.payee, paid.amount, reason_text(paid.reason), entry))
    return legs


def booked_deltas(legs: Sequence[Leg]) -> Query[dict[str, int]]:
    """The already-booked ``idem_key -> delta`` among the legs' keys."""
    keys = [leg.key for leg in legs]
    found: dict[str, int] = {}
    for start in range(0, len(keys), 500):  # stay far below the databases' bound-parameter limits
        chunk = keys[start : start + 500]
        booked = yield from rows(
            f"SELECT idem_key, delta FROM ledger WHERE idem_key IN ({marks(len(chunk))})", chunk
        )
        found.update({row[0]: row[1] for row in booked})
    return found


def is_replay(legs: Sequence[Leg]) -> Query[bool]:
    """True when every leg is booked already with the same amount; raise on a partial overlap."""
    if not legs:
        return False
    found = yield from booked_deltas(legs)
    if not found:
        return False
    if len(found) == len(legs) and all(found[leg.key] == leg.delta for leg in legs):
        return True
    raise IdempotencyConflict(
        f"{len(found)} of {len(legs)} keys of this batch are booked already"
        " (or with other amounts): not a replay of the same batch"
    )


def book(
    legs: Sequence[Leg],
    *,
    now_text: str,
    table_id: int | None = None,
    round_no: int | None = None,
) -> Query[None]:
    """Write the legs and move the balances by each account's net change.

    Balances move once per account by the batch's net, so only the end result has to be >= 0
    (the legs of one action are one atomic step). People are checked first for a clear error; the
    ``CHECK (balance >= 0)`` constraints stay the last word. No legs: no statement at all.
    """
    if not legs:
        return
    net: dict[Account, int] = defaultdict(int)
    for leg in legs:
        net[leg.account] += leg.delta
    people = [a for a in net if isinstance(a, int)]
    named = [a for a in net if isinstance(a, str)]
    balances = yield from _balances(people, named)
    for account, delta in net.items():
        if account not in balances:
            raise UnknownPerson(int(account))
        if delta < 0 and account != MINT and account != HOUSE and balances[account] + delta < 0:
            raise InsufficientFunds(account, balances[account], delta)
    yield from many(
        "INSERT INTO ledger (person_id, account, delta, reason, counterparty, entry, idem_key,"
        " table_id, round_no, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                leg.account if isinstance(leg.account, int) else None,
                leg.account if isinstance(leg.account, str) else None,
                leg.delta,
                leg.reason,
                account_text(leg.counterparty),
                leg.entry,
                leg.key,
                table_id,
                round_no,
                now_text,
            )
            for leg in legs
        ],
    )
    # In one order (people by id, then the named accounts by name): two transactions moving the
    # same balances at once on PostgreSQL wait for each other, never in a cycle.
    person_changes = sorted((a, d) for a, d in net.items() if d != 0 and isinstance(a, int))
    named_changes = sorted((a, d) for a, d in net.items() if d != 0 and isinstance(a, str))
    try:
        if person_changes:
            yield from many(
                "UPDATE people SET balance = balance + ? WHERE id = ?", [(d, a) for a, d in person_changes]
            )
        if named_changes:
            yield from many(
                "UPDATE accounts SET balance = balance + ? WHERE name = ?", [(d, a) for a, d in named_changes]
            )
    except Violation as exc:
        # Only reachable if the balances read above were wrong: the CHECK constraints are the last word.
        bounded = [a for a in net if a not in (MINT, HOUSE)]
        worst = min(bounded, key=lambda a: balances[a] + net[a])
        raise InsufficientFunds(worst, balances[worst], net[worst]) from exc


def _balances(people: Sequence[int], named: Sequence[str]) -> Query[dict[Account, int]]:
    found: dict[Account, int] = {}
    if people:
        held = yield from rows(f"SELECT id, balance FROM people WHERE id IN ({marks(len(people))})", people)
        found.update({row[0]: row[1] for row in held})
    if named:
        held = yield from rows(
            f"SELECT name, balance FROM accounts WHERE name IN ({marks(len(named))})", named
        )
        found.update({row[0]: row[1] for row in held})
    return found


def grant_start(person_id: int, amount: int, now_text: str) -> Query[None]:
    """The starting grant of a new person, paid by the mint (key ``grant:<person>:<account>``)."""
    if amount > 0:
        yield from book(
            movement_legs(MINT, person_id, amount, GRANT, f"grant:{person_id}"), now_text=now_text
        )


def daily_window(moment: datetime, zone: ZoneInfo) -> tuple[date, datetime]:
    """The calendar day of ``moment`` in ``zone`` and when the next one starts (aware, in ``zone``)."""
    day = moment.astimezone(zone).date()
    return day, datetime.combine(day + timedelta(days=1), time(0), tzinfo=zone)


def claim_daily(
    person_id: int, amount: int, moment: datetime, zone: ZoneInfo, now_text: str
) -> Query[DailyClaim]:
    """Pay the daily bonus once per calendar day; the key ``daily:<person>:<day>`` makes it once."""
    day, next_start = daily_window(moment, zone)
    row = yield from first("SELECT balance FROM people WHERE id = ?", (person_id,))
    if row is None:
        raise UnknownPerson(person_id)
    legs = movement_legs(MINT, person_id, amount, DAILY, f"daily:{person_id}:{day.isoformat()}")
    if (yield from booked_deltas(legs[1:])):
        return DailyClaim(False, 0, row[0], day, next_start)
    yield from book(legs, now_text=now_text)
    return DailyClaim(True, amount, row[0] + amount, day, next_start)


def ledger_of(person_id: int, limit: int) -> Query[list[LedgerEntry]]:
    """A person's last ``limit`` ledger rows, newest first."""
    found = yield from rows(
        "SELECT id, person_id, delta, reason, counterparty, table_id, round_no, idem_key, created_at"
        " FROM ledger WHERE person_id = ? ORDER BY id DESC LIMIT ?",
        (person_id, limit),
    )
    return [_entry(row) for row in found]


def _entry(row: Any) -> LedgerEntry:
    return LedgerEntry(
        id=row["id"],
        account=row["person_id"],
        delta=row["delta"],
        reason=row["reason"],
        counterparty=parse_account(row["counterparty"]),
        table_id=row["table_id"],
        round_no=row["round_no"],
        key=row["idem_key"],
        created_at=from_db_required(row["created_at"]),
    )
