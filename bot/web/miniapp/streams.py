"""How many live-update streams may be open, and the tickets that open them.

Each open page holds one connection, so one open file, for as long as it is open. A person may
have ``PER_PERSON`` pages open, a table ``PER_TABLE`` and the bot ``total``: at most
``STREAMS_MAX``, and never so many that the process nears its limit of open files
(``RLIMIT_NOFILE``, read at start): ``RESERVED_FILES`` stay for everything else (the connections
to Telegram, the webhook's, the database, the log). Past a cap the page is refused with a
Retry-After, not queued.

A stream is opened with a ticket, not with the initData: an ``EventSource`` cannot send headers,
and a URL ends up in access logs. A ticket is got with the initData in a header (``POST
api/ticket``), is good for ``TICKET_SECONDS``, for one person's one table, once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from bot.web.open_files import KEPT_FOR_THE_BOT, open_files_limit

log = logging.getLogger(__name__)

PER_PERSON = 4  # pages one person may have open at once (a phone, a desktop, a reload or two)
PER_TABLE = 300  # pages open on one table
STREAMS_MAX = 2000  # pages open in all, whatever the limit of open files
# Open files kept for all but the streams: the bot's own, and connections for other requests (the
# webhook's posts, pages loading, tickets) within the HTTP server's cap (bot/web/open_files.py).
RESERVED_FILES = KEPT_FOR_THE_BOT + 192
TICKET_SECONDS = 30.0  # a ticket's life: the page uses it at once
TICKETS_MAX = 10_000  # tickets not yet used, in all
LIFETIME = 600.0  # seconds a stream stays open: then the page opens another (and is asked again who it is)
WRITE_TIMEOUT = 10.0  # seconds a page may take to take an event before its stream is closed
RETRY_AFTER = 30  # seconds a refused page is told to wait
FEW = 100  # open pages in all below which the operator is told at start


@dataclass(frozen=True)
class StreamLimits:
    per_person: int = PER_PERSON
    per_table: int = PER_TABLE
    total: int = STREAMS_MAX

    @classmethod
    def for_this_process(cls) -> StreamLimits:
        files = open_files_limit()
        total = STREAMS_MAX if files is None else max(0, min(STREAMS_MAX, files - RESERVED_FILES))
        if total < FEW:
            log.warning(
                "the open-file limit (%s) leaves room for %d Mini App pages at once: raise it (README)",
                files,
                total,
            )
        return cls(total=total)


class Full(Exception):
    """A page refused: ``per_person`` (429) or the table's or the bot's streams are full (503)."""

    def __init__(self, why: str, status: int) -> None:
        super().__init__(why)
        self.why, self.status = why, status


@dataclass(frozen=True)
class Ticket:
    person: int
    table: int
    language: str
    until: float


# A ticket's code: a random nonce (token_urlsafe(12): 16 characters), then 16 characters of an HMAC of
# the nonce and its table under a key every worker of the bot has (made from its token): any worker
# tells a ticket one of them gave from a made-up one without asking anybody.
NONCE_BYTES, NONCE_LENGTH, TAG_LENGTH = 12, 16, 16
TICKET_SHAPE = re.compile(r"^[A-Za-z0-9_-]{32}$", re.ASCII)


class Tickets:
    """The tickets given and not yet used (each used once, in time, for its person's table)."""

    def __init__(self, clock: Callable[[], float], token: str) -> None:
        self.clock = clock
        self.key = hashlib.sha256(b"paiju: Mini App tickets\n" + token.encode()).digest()
        self.given: dict[str, Ticket] = {}
        self.mine: dict[int, list[str]] = {}  # person -> the codes given them (some used or old)

    def signed(self, code: str, table: int) -> bool:
        """Was ``code`` given for ``table`` by a worker of this bot (this one or another)?"""
        if not TICKET_SHAPE.fullmatch(code):
            return False
        return hmac.compare_digest(code[NONCE_LENGTH:], self._tag(code[:NONCE_LENGTH], table))

    def _tag(self, nonce: str, table: int) -> str:
        digest = hmac.new(self.key, f"{nonce}:{table}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode()[:TAG_LENGTH]

    def give(self, person: int, table: int, language: str) -> str:
        now = self.clock()
        if len(self.given) >= TICKETS_MAX:
            self.given = {code: ticket for code, ticket in self.given.items() if ticket.until >= now}
            self.mine = {}
            for code, ticket in self.given.items():
                self.mine.setdefault(ticket.person, []).append(code)
        mine = [code for code in self.mine.get(person, ()) if self._good(code, now)]
        if len(mine) >= PER_PERSON:
            raise Full("tickets of one person", 429)
        if len(self.given) >= TICKETS_MAX:
            raise Full("tickets", 503)
        nonce = secrets.token_urlsafe(NONCE_BYTES)
        code = nonce + self._tag(nonce, table)
        self.given[code] = Ticket(person, table, language, now + TICKET_SECONDS)
        self.mine[person] = [*mine, code]
        return code

    def _good(self, code: str, now: float) -> bool:
        ticket = self.given.get(code)
        if ticket is not None and ticket.until < now:
            del self.given[code]
            return False
        return ticket is not None

    def use(self, code: str, table: int) -> Ticket | None:
        """The ticket ``code`` for ``table``, if it was given, is in time, and was not used yet."""
        ticket = self.given.pop(code, None)
        if ticket is not None:
            codes = self.mine.get(ticket.person, [])
            if code in codes:
                codes.remove(code)
            if not codes:
                self.mine.pop(ticket.person, None)
        if ticket is None or ticket.table != table or ticket.until < self.clock():
            return None
        return ticket
