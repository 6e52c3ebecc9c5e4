"""Whether a person is a member of a table's group, asked of Telegram (``getChatMember``) at a
bounded cost, whatever the web asks.

Anyone with a Telegram account can sign an initData for a table (the link is public), so the
question is asked for strangers too. Each answer, yes or no, is kept a while (``KEEP_MEMBER``,
``KEEP_REFUSED``); questions for the same person and chat asked at once wait for one call; a
person may cause at most ``CHECKS_PER_PERSON`` calls a minute and everyone together ``IN_ALL`` a minute
and ``AT_ONCE`` at a time. Past that the answer is ``Busy`` (the page is told to try again later),
not a wait in a queue. The calls go through their own ``telegram.Bot`` with a small pool of
connections (``checking_bot``), so no flood of them can hold up the game's own requests.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from telegram import Bot
from telegram.constants import ChatMemberStatus
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.send.aiohttp_request import AiohttpRequest, env_proxy
from bot.settings import Settings

KEEP_MEMBER = 300.0  # seconds a "member" is believed
KEEP_REFUSED = 60.0  # seconds a "not a member" is believed (one who just joined waits this long at most)
STALE_MEMBER = 1800.0  # seconds a "member" is still believed while the budget is spent (a flood)
CHECKS_PER_PERSON = 6  # calls a minute one person may cause
IN_ALL = 300  # calls a minute everyone together may cause
AT_ONCE = 4  # calls in flight at once: the checking bot's connections
UNANSWERED = 5  # seconds to wait when Telegram did not answer
REMEMBERED = 50_000  # answers kept at most (the oldest forgotten first; IN_ALL keeps them far fewer)
TIDY_AT = 1024  # answers or budgets kept before the old ones are looked for
MEMBERS = frozenset(
    {
        ChatMemberStatus.MEMBER,
        ChatMemberStatus.ADMINISTRATOR,
        ChatMemberStatus.OWNER,
        ChatMemberStatus.RESTRICTED,
    }
)


class Busy(Exception):
    """Too many questions to Telegram lately (from this person, or in all): ask again later."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"membership checks are busy: retry after {retry_after} s")
        self.retry_after = retry_after


class Window:
    """At most ``limit`` events in any ``seconds``: the times of the last ones."""

    def __init__(self, limit: int, seconds: float = 60.0) -> None:
        self.limit, self.seconds = limit, seconds
        self.times: deque[float] = deque()

    def _forget(self, now: float) -> None:
        while self.times and now - self.times[0] >= self.seconds:
            self.times.popleft()

    def full(self, now: float) -> bool:
        self._forget(now)
        return len(self.times) >= self.limit

    def empty(self, now: float) -> bool:
        self._forget(now)
        return not self.times

    def retry_after(self, now: float) -> int:
        return max(1, int(self.seconds - (now - self.times[0])) + 1) if self.times else 1

    def add(self, now: float) -> None:
        self.times.append(now)


class Members:
    """The answers, the calls in flight and the budgets. ``bot()`` is the bot that asks."""

    def __init__(self, bot: Callable[[], Bot], clock: Callable[[], float]) -> None:
        self.bot, self.clock = bot, clock
        self.known: dict[tuple[int, int], tuple[bool, float]] = {}  # (chat, person) -> (member, when)
        self.asking: dict[tuple[int, int], asyncio.Task[bool]] = {}
        self.people: dict[int, Window] = {}
        self.everyone = Window(IN_ALL)
        self.tidy_people_at = self.tidy_known_at = TIDY_AT  # sizes at which the idle and old go
        self.calls = 0  # made since start (the tests and the bench read it)

    async def is_member(self, chat: int, person: int) -> bool:
        """``person`` is in ``chat`` (as Telegram said lately); ``Busy`` when it may not be asked now."""
        key, now = (chat, person), self.clock()
        known = self.known.get(key)
        if known is not None and now - known[1] < (KEEP_MEMBER if known[0] else KEEP_REFUSED):
            return known[0]
        asking = self.asking.get(key)
        if asking is None:
            try:
                self._budget(person, now)
            except Busy:  # a flood spent the budget: a member seen lately is still one
                if known is not None and known[0] and now - known[1] < STALE_MEMBER:
                    return True
                raise
            asking = asyncio.get_running_loop().create_task(self._ask(chat, person))
            self.asking[key] = asking
            asking.add_done_callback(lambda done: self._asked(key, done))
        return await asyncio.shield(asking)  # one page going away does not cancel the others' answer

    def _asked(self, key: tuple[int, int], done: asyncio.Task[bool]) -> None:
        self.asking.pop(key, None)
        if not done.cancelled():
            done.exception()  # (told to whoever awaited it; none may be left)

    def _budget(self, person: int, now: float) -> None:
        """Count one question for ``person``, or ``Busy`` (a window is kept only for one who asked)."""
        mine = self.people.get(person)
        if mine is not None and mine.full(now):
            raise Busy(mine.retry_after(now))
        if self.everyone.full(now):
            raise Busy(self.everyone.retry_after(now))
        if len(self.asking) >= AT_ONCE:
            raise Busy(1)
        if mine is None:
            if len(self.people) >= self.tidy_people_at:  # (amortized: next at twice the size left)
                self.people = {p: w for p, w in self.people.items() if not w.empty(now)}
                self.tidy_people_at = max(TIDY_AT, 2 * len(self.people))
            mine = self.people[person] = Window(CHECKS_PER_PERSON)
        mine.add(now)
        self.everyone.add(now)

    async def _ask(self, chat: int, person: int) -> bool:
        self.calls += 1
        try:
            member = await self.bot().get_chat_member(chat, person)
        except (BadRequest, Forbidden):  # no such person in the chat, or the bot is no longer in it
            answer = False
        except TelegramError:  # no answer (a timeout, a 429, Telegram failing): not remembered
            raise Busy(UNANSWERED) from None
        else:
            answer = member.status in MEMBERS
        self._remember((chat, person), answer)
        return answer

    def _remember(self, key: tuple[int, int], answer: bool) -> None:
        now = self.clock()
        if len(self.known) >= self.tidy_known_at:
            self.known = {key: answer for key, answer in self.known.items() if _worth_keeping(answer, now)}
            while len(self.known) >= REMEMBERED:  # still full of fresh answers: the oldest go
                del self.known[next(iter(self.known))]
            self.tidy_known_at = min(REMEMBERED, max(TIDY_AT, 2 * len(self.known)))
        self.known.pop(key, None)  # (re-inserted: the dict stays oldest first)
        self.known[key] = (answer, now)


def _worth_keeping(answer: tuple[bool, float], now: float) -> bool:
    member, at = answer
    return now - at < (STALE_MEMBER if member else KEEP_REFUSED)


def checking_bot(settings: Settings) -> Bot:
    """A bot of its own for the membership checks: the same token and server, ``AT_ONCE``
    connections that the game's requests never wait for (``bot.app`` builds the game's pool)."""
    base = (settings.base_url or "https://api.telegram.org").rstrip("/")
    request = AiohttpRequest(connection_pool_size=AT_ONCE, pool_timeout=1.0, proxy=env_proxy(base))
    return Bot(
        settings.token,
        base_url=f"{base}/bot",
        base_file_url=f"{base}/file/bot",
        request=request,
        get_updates_request=request,  # never used: without it PTB would make an httpx one
    )
