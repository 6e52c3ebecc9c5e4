"""Acting at a table, one path for every way of doing it: a button of the table message or of a DM,
``/join`` and ``/leave``, and the Mini App. The same refusals, the same ledger, the same table
message: each request is carried out under the chat's lock by :func:`act`."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.display.game_kinds import KINDS
from bot.display.i18n import language_of, t
from bot.display.views.common import clean_name, coins, name
from bot.model.callbacks import AUTO_READY, AUTOPILOT_OFF, CARDS, Press
from bot.model.live_table import LiveTable
from bot.tables.open_tables import SeatedElsewhere
from bot.tables.runtime import Runtime
from games.errors import RuleError
from games.stakes import MIN_BALANCE
from games.table import Leave, Ready
from storage import Person, SeatRefused

log = logging.getLogger(__name__)
CONFIRM_SECONDS = 5  # an escape is confirmed by a second press (or /leave) within this time


@dataclass(frozen=True)
class Actor:
    """Who acts, as Telegram names them: from a press or a command (``handlers.common.actor``) or
    the Mini App's signed initData alike, so acting needs nothing of python-telegram-bot's."""

    id: int
    name: str  # as stored and shown: see named()
    language_code: str | None = None  # their Telegram app's language, if it says

    @classmethod
    def named(
        cls,
        person_id: int,
        first_name: str,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = None,
    ) -> Actor:
        """The name a person is stored and shown under, cleaned of characters that could spoof it;
        their username, or their id, when nothing of their name is left."""
        full_name = f"{first_name} {last_name}" if last_name else first_name
        return cls(person_id, clean_name(full_name) or username or str(person_id), language_code)


async def ensure_person(runtime: Runtime, actor: Actor) -> tuple[Person, bool]:
    """The person (created with the starting grant on first sight) and whether they were just
    granted; their language is their Telegram app's until they choose one."""
    person, granted = await runtime.store.ensure_person(actor.id, actor.name)
    if person.language is None and actor.language_code:
        language = language_of(actor.language_code, runtime.settings.language)
        person = await runtime.preferences.set_person_language(actor.id, actor.name, language)
    runtime.dms.read(person)  # (another worker may have learnt of their DM)
    return person, granted


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


async def join(runtime: Runtime, live: LiveTable, actor: Actor) -> str:
    """Seat ``actor`` (the caller holds the chat's lock); ``Refused`` or ``RuleError`` when not possible.

    Their coins are read under the lock that decides where they sit, so no escape being saved
    elsewhere can leave them seated here with coins their wallet no longer holds."""

    async def balance() -> int:
        person, _ = await ensure_person(runtime, actor)
        if person.balance < MIN_BALANCE:
            raise Refused("join.poor", amount=coins(person.balance), min=coins(MIN_BALANCE))
        live.view.names[actor.id] = person.name
        return person.balance

    try:
        events = await runtime.tables.seat(live, actor.id, balance)
    except SeatedElsewhere:
        raise Refused("join.elsewhere") from None
    except SeatRefused as refused:  # their coins moved meanwhile (a refund, the daily bonus), or they
        # sat down at another worker's table: read again next time
        log.warning("person %s was not seated: %s", actor.id, refused)
        raise Refused("join.retry") from None
    await runtime.present(live, events)
    return "join.next_round" if live.in_round else "join.done"


async def leave(
    runtime: Runtime, live: LiveTable, person: int, confirm_key: str, *, by_reply: bool = False
) -> str:
    """Get up (the caller holds the chat's lock). Leaving during one's round is an escape: it needs
    a second request within ``CONFIRM_SECONDS``; the first raises ``Refused`` with the price.
    ``by_reply``: the price goes by a reply (``/leave``), not a popup shown at once. Returns the
    key of what to say."""
    price = live.engine.escape_cost(person)
    quote = (price, live.round_no)  # confirmed at the price they were told only
    if price is not None and not runtime.escapes.confirmed(
        live.table_id, person, CONFIRM_SECONDS, quote, by_reply
    ):
        raise Refused(f"{confirm_key}.{live.game}", amount=coins(price), seconds=CONFIRM_SECONDS)
    await runtime.perform(live, Leave(person))
    return "leave.done" if price is None else "leave.escaped"


async def auto_ready(runtime: Runtime, live: LiveTable, person: int) -> str:
    """Ready now and for every next round until they leave or time out (the caller holds the chat's
    lock); ``RuleError`` when they cannot be ready (not seated, a round under way). Returns the key
    of what to say."""
    chosen = person in live.view.auto_ready
    if not chosen:
        live.view.auto_ready.append(person)  # saved with the Ready below, or at once
    seat = live.engine.core.seat_of(person)
    try:
        if seat is None or not seat.ready or live.engine.core.everyone_ready():
            await runtime.perform(live, Ready(person, runtime.shuffle(live.game)))
        elif not chosen:  # ready already: no action to save it with
            await runtime.save_between_actions(live, view=True)
    except RuleError:
        if not chosen:
            live.view.auto_ready.remove(person)
        raise
    return "auto_ready.already" if chosen else "auto_ready.on"


async def back(runtime: Runtime, live: LiveTable, person: int) -> str:
    """Back from autopilot (托管, "我回来了"): ``person``'s turns wait for them again, and if it is
    their turn now they are asked (the caller holds the chat's lock). Returns the key of what to say."""
    if live.view.autopilot.pop(person, None) is None:
        return "autopilot.not_on"
    await runtime.save_between_actions(live, view=True)
    await runtime.present(live, [])
    return "autopilot.back"


async def act(
    runtime: Runtime,
    chat_id: int,
    press: Press,
    actor: Actor,
    language: str,
    confirm_key: str = "leave.confirm_press",
) -> tuple[str | None, bool]:
    """Carry out one press of ``actor`` at the table of ``chat_id``, under the chat's lock; what to
    answer it with (text, as an alert). ``Refused`` or ``RuleError`` when it cannot be done."""
    async with runtime.tables.lock(chat_id):
        live = runtime.tables.get(chat_id)
        if live is None or live.table_id != press.table_id:
            raise Refused("press.table_over")
        if press.action == AUTOPILOT_OFF:  # (from their DM of any round of this table)
            return t(language, await back(runtime, live, actor.id)), False
        if press.round_no != live.round_no:
            raise Refused("press.old_round")
        kind = KINDS[live.game]
        if press.action != CARDS and not live.asks(actor.id):
            await back(runtime, live, actor.id)  # any press of theirs ends 托管
        if press.action == CARDS:
            private = kind.private_hand(live, actor.id, language)
            return (private or t(language, "press.no_cards")), True
        if press.action == "join":
            return t(language, await join(runtime, live, actor), name=name(actor.name)), False
        elif press.action == "leave":
            await leave(runtime, live, actor.id, confirm_key)
        elif press.action == "ready":
            await runtime.perform(live, Ready(actor.id, runtime.shuffle(live.game)))
        elif press.action == AUTO_READY:
            return t(language, await auto_ready(runtime, live, actor.id)), False
        elif press.action in kind.moves:
            await runtime.perform(live, kind.moves[press.action](actor.id, press.arg))
            # The answer (a toast) confirms the move and shows their hand as it is now, unless the
            # next round has begun meanwhile (everyone ready for it): its cards come by DM.
            same_round = live.round_no == press.round_no
            return (kind.move_answer(live, actor.id, language) if same_round else None), False
        else:
            raise Refused("press.unknown")
    return None, False
