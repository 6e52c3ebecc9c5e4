"""A DM message the bot never learnt of (issue 31): it sent a new message (a prompt, a new round's
DM), Telegram showed it, and the answer with its id never came back: the bot was killed meanwhile,
or the request timed out. What is saved as shown is only what Telegram confirmed, so the bot (the
restarted one, or the worker that takes the table over) sends it again; the first copy keeps its
buttons, and no request can name it: once the turn has moved on they offer moves the engine
refuses.

So such a DM is unsure (``LiveTable.unsure``): every DM of a table taken as saved (:func:`adopted`),
and one whose new message timed out (:func:`lost`), until its next new message (what was cut off,
wanted again). Then the few ids between the DM's last known message and the new one, down from the
new one (:func:`bot.telegram_facts.ids_between`), lose their buttons (:func:`take_buttons`): a person's
message cannot be edited, the bot's without buttons is not modified, an id with no message is not
found, and each is left as it is; the first that had buttons ends the look. It costs requests only
then, at most ``PROBES`` a DM; a DM with nothing to send since is sure at once (:func:`sure`).

A press on such a message tells its id too: the handler takes its buttons away then
(``bot.handlers.table``), whether the press is taken or refused.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from telegram import Bot
from telegram.error import BadRequest

from bot import telegram_facts
from bot.send.messages import edit

if TYPE_CHECKING:
    from bot.model.live_table import LiveTable

log = logging.getLogger(__name__)
PROBES = 3  # ids looked at, at most, for a DM's message a crash left unknown
# What an id that is not such a message answers: a person's, the bot's with no buttons, none.
NOT_THE_ORPHAN = (
    telegram_facts.Failure.UNEDITABLE,
    telegram_facts.Failure.NOT_MODIFIED,
    telegram_facts.Failure.MESSAGE_GONE,
)


def adopted(live: LiveTable) -> None:
    """``live`` was taken as saved (at start-up, or from a lost worker): what its DMs last showed
    may have been followed by a message whose id was never saved."""
    for person in {*live.dm_ids, *live.seated()}:
        live.unsure[person] = live.dm_ids.get(person)


def lost(live: LiveTable, person: int) -> None:
    """A new message to ``person``'s DM timed out: it may show all the same, and is sent again."""
    live.unsure.setdefault(person, live.dm_ids.get(person))


def sure(live: LiveTable, person: int) -> None:
    """``person``'s DM shows what it should: nothing was cut off there."""
    live.unsure.pop(person, None)


def suspects(live: LiveTable, person: int, anew: bool, sent: int | None) -> list[int]:
    """A delivery to ``person``'s DM is done (``anew``: it was wanted as a new message; ``sent``:
    the new message's id, if it went as one): if the DM is unsure and this is the new message that
    was cut off, wanted again, the ids where the one the bot never learnt of may be, nearest first
    (the DM is sure then). None otherwise."""
    if person not in live.unsure or not anew:  # (an edit: what was cut off is still to come)
        return []
    since = live.unsure.pop(person)
    # With no message known before, only the id right below the new one: what was cut off was
    # their first DM at this table, and the bot's other messages there are not to be touched.
    return telegram_facts.ids_between(since, sent, PROBES if since is not None else 1)


async def take_buttons(bot: Bot, chat_id: int, message_id: int) -> bool:
    """Try to take the buttons of message ``message_id`` away: did it have some (it was the bot's)?
    A message that is not the bot's, has none, or is not there is left as it is."""
    try:
        await edit(bot, chat_id, message_id, None, None)
    except BadRequest as error:
        if telegram_facts.classify(error) in NOT_THE_ORPHAN:
            return False
        raise
    log.info("DM %s: message %s, which the bot never learnt of, lost its buttons", chat_id, message_id)
    return True
