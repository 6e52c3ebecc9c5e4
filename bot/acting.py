"""Acting at a table, one path for every way of doing it: a button of the table message or of a DM,
``/join`` and ``/leave``, and the Mini App. The same refusals, the same ledger, the same table
message: each request is carried out under the chat's lock by :func:`act`."""

from __future__ import annotations

import logging

from telegram import User

from bot.callbacks import Press
from bot.handlers.common import Context, display_name, person_of, runtime_of
from bot.i18n import t
from bot.kinds import KINDS
from bot.live import LiveTable
from bot.service import SeatedElsewhere
from bot.views.common import coins, name
from games.errors import RuleError
from games.stakes import MIN_BALANCE
from games.table import Leave, Ready
from storage import SeatRefused

log = logging.getLogger(__name__)
CONFIRM_SECONDS = 5  # an escape is confirmed by a second press (or /leave) within this time


class Refused(Exception):
    """A request the bot turns down before the engine sees it; ``key`` is the catalog message."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(key)
        self.key, self.values = key, values


def refusal_text(language: str, error: Exception) -> str:
    if isinstance(error, Refused):
        return t(language, error.key, **error.values)
    assert isinstance(error, RuleError)
    return t(language, f"error.{error.code}")


async def join(context: Context, live: LiveTable, user: User) -> str:
    """Seat ``user`` (the caller holds the chat's lock); ``Refused`` or ``RuleError`` when not possible.

    Their coins are read under the lock that decides where they sit, so no escape being saved
    elsewhere can leave them seated here with coins their wallet no longer holds."""
    runtime = runtime_of(context)

    async def balance() -> int:
        person, _ = await person_of(context, user)
        if person.balance < MIN_BALANCE:
            raise Refused("join.poor", amount=coins(person.balance), min=coins(MIN_BALANCE))
        live.view.names[user.id] = person.name
        return person.balance

    try:
        events = await runtime.tables.seat(live, user.id, balance)
    except SeatedElsewhere:
        raise Refused("join.elsewhere") from None
    except SeatRefused:  # their coins moved meanwhile (a refund, the daily bonus): read again next time
        log.warning("person %s was not seated at table %s: their coins moved", user.id, live.table_id)
        raise Refused("join.retry") from None
    await runtime.present(live, events)
    return "join.next_round" if live.in_round else "join.done"


async def leave(
    context: Context, live: LiveTable, user: User, confirm_key: str, *, by_reply: bool = False
) -> str:
    """Get up (the caller holds the chat's lock). Leaving during one's round is an escape: it needs
    a second request within ``CONFIRM_SECONDS``; the first raises ``Refused`` with the price.
    ``by_reply``: the price goes by a reply (``/leave``), not a popup shown at once. Returns the
    key of what to say."""
    runtime = runtime_of(context)
    price = live.engine.escape_cost(user.id)
    quote = (price, live.round_no)  # confirmed at the price they were told only
    if price is not None and not runtime.confirmed_escape(
        live.table_id, user.id, CONFIRM_SECONDS, quote, by_reply
    ):
        raise Refused(f"{confirm_key}.{live.game}", amount=coins(price), seconds=CONFIRM_SECONDS)
    await runtime.perform(live, Leave(user.id))
    return "leave.done" if price is None else "leave.escaped"


async def act(
    context: Context,
    chat_id: int,
    found: Press,
    user: User,
    language: str,
    confirm_key: str = "leave.confirm_press",
) -> tuple[str | None, bool]:
    """Carry out one press of ``user`` at the table of ``chat_id``, under the chat's lock; what to
    answer it with (text, as an alert). ``Refused`` or ``RuleError`` when it cannot be done."""
    runtime = runtime_of(context)
    async with runtime.tables.lock(chat_id):
        live = runtime.tables.get(chat_id)
        if live is None or live.table_id != found.table_id:
            raise Refused("press.table_over")
        if found.round_no != live.round_no:
            raise Refused("press.old_round")
        if found.action == "cards":
            private = KINDS[live.game].private_hand(live, user.id, language)
            return (private or t(language, "press.no_cards")), True
        if found.action == "join":
            return t(language, await join(context, live, user), name=name(display_name(user))), False
        elif found.action == "leave":
            await leave(context, live, user, confirm_key)
        elif found.action == "ready":
            await runtime.perform(live, Ready(user.id, runtime.shuffle(live.game)))
        elif found.action in KINDS[live.game].moves:
            await runtime.perform(live, KINDS[live.game].moves[found.action](user.id, found.arg))
            # the presser's own result in the answer (a toast): their hand as it is now
            return KINDS[live.game].private_hand(live, user.id, language), False
        else:
            raise Refused("press.unknown")
    return None, False
