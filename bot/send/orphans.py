"""A DM message the bot never learnt of (issue 31): it sent a new message (a prompt, a new round's
DM), Telegram showed it, and the answer with its id never came back: the bot was killed meanwhile,
or the request timed out. What is saved as shown is only what Telegram confirmed, so the bot (the
restarted one, or the worker that takes the table over) sends it again; the first copy keeps its
buttons, and no request can name it: once the turn has moved on they offer moves the engine
refuses.

So such a DM is unsure (``Orphans``, kept by table and person beside the courier): every DM of a
table taken as saved (:meth:`Orphans.adopted`), and one whose new message timed out
(:meth:`Orphans.lost`), until its next new message (what was cut off, wanted again). Then the few
ids between the DM's last known message and the new one, down from the new one
(:func:`bot.telegram_facts.ids_between`), lose their buttons (:func:`take_buttons`): a person's
message cannot be edited, the bot's without buttons is not modified, an id with no message is not
found, and each is left as it is; the first that had buttons ends the look. It costs requests only
then, at most ``PROBES`` a DM; a DM with nothing to send since is sure at once
(:meth:`Orphans.sure`), and a table gone from here (closed, or let go) leaves none
(:meth:`Orphans.forget`).

A press on such a message tells its id too: the handler takes its buttons away then
(``bot.handlers.table``), whether the press is taken or refused.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from telegram import Bot
from telegram.error import BadRequest

from bot import telegram_facts
from bot.send.messages import edit

log = logging.getLogger(__name__)
PROBES = 3  # ids looked at, at most, for a DM's message a crash left unknown
# What an id that is not such a message answers: a person's, the bot's with no buttons, none.
NOT_THE_ORPHAN = (
    telegram_facts.Failure.UNEDITABLE,
    telegram_facts.Failure.NOT_MODIFIED,
    telegram_facts.Failure.MESSAGE_GONE,
)


class Orphans:
    """The unsure DMs, by (table, person): each one's last message known then (None: none)."""

    def __init__(self) -> None:
        self.unsure: dict[tuple[int, int], int | None] = {}

    def adopted(self, table_id: int, dm_ids: Mapping[int, int], seated: Iterable[int]) -> None:
        """The table was taken as saved (at start-up, or from a lost worker): what its DMs last showed
        (``dm_ids``; those ``seated`` too, who may have none yet) may have been followed by a
        message whose id was never saved."""
        for person in {*dm_ids, *seated}:
            self.unsure[table_id, person] = dm_ids.get(person)

    def lost(self, table_id: int, person: int, known: int | None) -> None:
        """A new message to ``person``'s DM timed out (``known``: the DM's message before it): it may
        show all the same, and is sent again."""
        self.unsure.setdefault((table_id, person), known)

    def sure(self, table_id: int, person: int) -> None:
        """``person``'s DM shows what it should: nothing was cut off there."""
        self.unsure.pop((table_id, person), None)

    def suspects(self, table_id: int, person: int, anew: bool, sent: int | None) -> list[int]:
        """A delivery to ``person``'s DM is done (``anew``: it was wanted as a new message; ``sent``:
        the new message's id, if it went as one): if the DM is unsure and this is the new message
        that was cut off, wanted again, the ids where the one the bot never learnt of may be,
        nearest first (the DM is sure then). None otherwise."""
        if (table_id, person) not in self.unsure or not anew:  # (an edit: what was cut off is still to come)
            return []
        since = self.unsure.pop((table_id, person))
        # With no message known before, only the id right below the new one: what was cut off was
        # their first DM at this table, and the bot's other messages there are not to be touched.
        return telegram_facts.ids_between(since, sent, PROBES if since is not None else 1)

    def forget(self, table_id: int) -> None:
        """The table is gone from here (closed, or let go to another worker): none of its DMs is
        looked at any more."""
        for key in [key for key in self.unsure if key[0] == table_id]:
            del self.unsure[key]


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
