"""``python -m bench.reference_bot``: a minimal muxi bot, the reference of benchmark 5 (issue 27).

It plays the same muxi turns as the real bot — the banker question, everyone's draw at once, the
banker's draw, the settlement, then the lobby where everyone presses 继续 for the next round — with
the same table message, DMs and buttons the simulated people (``bench.crowd``) read: the catalog's
texts (``bot.display.i18n``), the bot's callback data (``bot.model.callbacks``) and the pure engine
(``games.muxi``); nothing else of the bot. Coins are kept in memory, turns time out after 30 s.
Only ``/newgame muxi`` opens a table (anything else is ignored).

What it is for is its sending discipline, the simplest one that keeps Telegram's limits:

- **per chat**: a group at most 20 requests in any 60 s, a private chat at most 3 in any 3.2 s (never
  more than Telegram's burst of 3 then one a second); one request at a time per chat;
- **across chats**: with ``PAIJU_BOT_REQUESTS_PER_SECOND`` set, at most that many in any second;
  ``answerCallbackQuery`` is sent at once, never counted, never waiting;
- **only the latest state** of each message is sent: one table message per table and one DM per
  person per table, each edited; a change while its request waits replaces what waits;
- **prompts first**: a state that asks someone something it did not ask before (a new turn, the
  banker question, 继续 after the results) goes before informational ones, first come first served
  within each; an informational state leaves the last 5 of a group's 20 a minute and the last fifth
  of the bot-wide budget to prompts.

Every window counts a request from when it starts until its answer came plus the window's length:
Telegram counted it somewhere in between, so no window of Telegram's can hold more than allowed.
Settings as for ``python -m bot``: ``TELEGRAM_BOT_TOKEN``, ``PAIJU_BOT_API_URL``,
``PAIJU_BOT_REQUESTS_PER_SECOND``, ``PAIJU_START_GRANT``, ``PAIJU_TURN_SECONDS``,
``PAIJU_LOBBY_SECONDS`` (``PAIJU_DB`` is ignored).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import random
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass, field

import aiohttp

from bot.display.i18n import t
from bot.display.views.muxi import hand_label
from bot.model import callbacks
from games.cards import DECK_54, Card
from games.errors import RuleError
from games.events import TableClosed, TimerStarted, Unseated
from games.muxi import (
    BeBanker,
    Draw,
    Join,
    MuxiTable,
    PassBanker,
    PersonResult,
    Phase,
    Ready,
    RoundOver,
    Shuffle,
    Stand,
    Status,
    Timeout,
    evaluate,
)

log = logging.getLogger("reference_bot")
LANGUAGE = "zh-hans"
GROUP, PRIVATE = (20, 60.0), (3, 3.2)  # (requests, in any seconds)
GROUP_KEEP = 5  # places of a group's window an informational state leaves to prompts
Markup = dict[str, list[list[dict[str, str]]]] | None
Asks = frozenset[tuple[object, ...]]  # what a state asks of whom: a new one makes it a prompt


class ApiError(Exception):
    def __init__(self, code: int, description: str, parameters: dict[str, object]) -> None:
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


class Api:
    def __init__(self, session: aiohttp.ClientSession, base_url: str, token: str) -> None:
        self.session, self.url = session, f"{base_url.rstrip('/')}/bot{token}/"

    async def call(self, method: str, params: dict[str, object]) -> object:
        async with self.session.post(self.url + method, json=params) as response:
            body = await response.json(content_type=None)
        if body.get("ok"):
            return body.get("result")
        raise ApiError(
            int(body.get("error_code") or 0), str(body.get("description")), body.get("parameters") or {}
        )


# -- the sending discipline ---------------------------------------------------------------------------
class Window:
    """At most ``count`` requests in any ``seconds``, a request counting from its start until
    ``seconds`` after its answer."""

    def __init__(self, count: int, seconds: float) -> None:
        self.count, self.seconds = count, seconds
        self.ends: deque[float] = deque()  # when the answers came
        self.flying = 0

    def wait(self, now: float, keep: int = 0) -> float:
        """Seconds until one more may start leaving ``keep`` places (inf: when one in flight lands)."""
        while self.ends and self.ends[0] <= now - self.seconds:
            self.ends.popleft()
        over = len(self.ends) + self.flying + 1 + keep - self.count
        if over <= 0:
            return 0.0
        return self.ends[over - 1] + self.seconds - now if over <= len(self.ends) else math.inf


@dataclass(eq=False)
class Parcel:
    """One message: what Telegram shows (or will, once the request in flight lands) and what waits."""

    chat_id: int
    private: bool
    message_id: int | None = None
    shown: tuple[str, Markup] | None = None
    asks: Asks = frozenset()
    wanted: tuple[str, Markup, Asks] | None = None


class Outbox:
    def __init__(self, api: Api, per_second: int) -> None:
        self.api = api
        self.everything = Window(per_second, 1.0) if per_second else None
        self.keep = per_second // 5
        self.prompts: dict[Parcel, None] = {}  # waiting, in the order they became prompts
        self.others: dict[Parcel, None] = {}  # waiting, in the order they began to wait
        self.chats: dict[int, Window] = {}
        self.busy: set[int] = set()  # chats with a request in flight
        self.held: dict[int, float] = {}  # chat -> until when Telegram asked us to wait (429)
        self.wake = asyncio.Event()

    def want(self, parcel: Parcel, text: str, markup: Markup, asks: Asks) -> None:
        """``parcel`` should show this now: it waits (replacing what waited), or nothing is to send."""
        if (text, markup) == parcel.shown:
            parcel.wanted = None
            self.prompts.pop(parcel, None)
            self.others.pop(parcel, None)
            return
        queue, other = (self.others, self.prompts) if asks <= parcel.asks else (self.prompts, self.others)
        other.pop(parcel, None)
        queue.setdefault(parcel, None)  # one already waiting keeps its place
        parcel.wanted = (text, markup, asks)
        self.wake.set()

    def _window(self, parcel: Parcel) -> Window:
        window = self.chats.get(parcel.chat_id)
        if window is None:
            window = self.chats[parcel.chat_id] = Window(*(PRIVATE if parcel.private else GROUP))
        return window

    def _pick(self, now: float) -> tuple[Parcel | None, float]:
        """The next parcel that may go now, prompts first; else how long until one might."""
        if self.everything and (wait := self.everything.wait(now)) > 0:
            return None, wait
        soonest = math.inf
        for queue, prompt in ((self.prompts, True), (self.others, False)):
            if not prompt and self.everything and (wait := self.everything.wait(now, self.keep)) > 0:
                return None, min(soonest, wait)
            for parcel in queue:
                if parcel.chat_id in self.busy:
                    continue
                keep = 0 if prompt or parcel.private else GROUP_KEEP
                wait = max(self._window(parcel).wait(now, keep), self.held.get(parcel.chat_id, 0.0) - now)
                if wait <= 0:
                    return parcel, 0.0
                soonest = min(soonest, wait)
        return None, soonest

    async def run(self) -> None:
        while True:
            parcel, wait = self._pick(time.monotonic())
            if parcel is not None:
                self._start(parcel)
                continue
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), min(wait, 1.0))

    def _start(self, parcel: Parcel) -> None:
        assert parcel.wanted is not None
        self.prompts.pop(parcel, None)
        self.others.pop(parcel, None)
        before, payload = (parcel.shown, parcel.asks), parcel.wanted
        parcel.shown, parcel.asks, parcel.wanted = payload[:2], payload[2], None
        windows = [self._window(parcel), *([self.everything] if self.everything else [])]
        for window in windows:
            window.flying += 1
        self.busy.add(parcel.chat_id)
        asyncio.get_running_loop().create_task(self._send(parcel, payload, before, windows))

    async def _send(
        self,
        parcel: Parcel,
        payload: tuple[str, Markup, Asks],
        before: tuple[tuple[str, Markup] | None, Asks],
        windows: list[Window],
    ) -> None:
        text, markup, _ = payload
        params: dict[str, object] = {"chat_id": parcel.chat_id, "text": text}
        if markup:
            params["reply_markup"] = markup
        if parcel.message_id is not None:
            params["message_id"] = parcel.message_id
        failed = 0.0
        try:
            result = await self.api.call(
                "editMessageText" if "message_id" in params else "sendMessage", params
            )
            if parcel.message_id is None and isinstance(result, dict):
                parcel.message_id = int(result["message_id"])
        except ApiError as error:  # 429: again after retry_after; anything else: given up
            if "not modified" not in error.description:
                log.warning("%s refused: %s", parcel.chat_id, error.description)
            if error.code == 429:
                failed = float(str(error.parameters.get("retry_after") or 1))
        except (aiohttp.ClientError, TimeoutError) as error:
            log.warning("%s failed: %r", parcel.chat_id, error)
            failed = 1.0
        finally:
            now = time.monotonic()
            for window in windows:
                window.flying -= 1
                window.ends.append(now)
            self.busy.discard(parcel.chat_id)
            self.wake.set()
        if failed:  # Telegram shows what it showed before: want again what is wanted now
            self.held[parcel.chat_id] = now + failed
            parcel.shown, parcel.asks = before
            self.want(parcel, *(parcel.wanted or payload))


# -- the game -----------------------------------------------------------------------------------------
def signed(amount: int) -> str:
    return f"+{amount:,}" if amount > 0 else f"−{-amount:,}" if amount < 0 else "0"


def cards_text(cards: tuple[Card | None, ...] | list[Card]) -> str:
    return " ".join(card.display() if card is not None else "🂠" for card in cards)


def judged(cards: list[Card]) -> str:
    try:
        hand = evaluate(cards)
    except ValueError:  # a lone joker still to draw
        return t(LANGUAGE, "muxi.must_draw_short")
    return hand_label(hand.kind, hand.points, LANGUAGE)


DID = {Status.DREW: "muxi.did.draw", Status.STOOD: "muxi.did.stand", Status.NATURAL: "muxi.did.natural"}
DID |= {
    Status.FORFEIT: "muxi.did.forfeit",
    Status.WAITING: "muxi.did.banker",
    Status.FORCED: "muxi.did.banker",
}


@dataclass(eq=False)
class Table:
    table_id: int
    title: str
    engine: MuxiTable
    board: Parcel
    names: dict[int, str] = field(default_factory=dict)
    dms: dict[int, Parcel] = field(default_factory=dict)
    results: tuple[PersonResult, ...] = ()
    results_round: int = 0
    timer: asyncio.TimerHandle | None = None
    closed_reason: str = "cancelled"

    def keyboard(self, *actions: tuple[str, str]) -> Markup:
        round_no = self.engine.core.round_no
        return {
            "inline_keyboard": [
                [
                    {
                        "text": t(LANGUAGE, key),
                        "callback_data": callbacks.encode("muxi", self.table_id, round_no, a),
                    }
                    for key, a in actions
                ]
            ]
        }

    def name(self, person: int) -> str:
        return self.names.get(person, str(person))

    def board_view(self, turn: str) -> tuple[str, Markup, Asks]:
        """The table message: the lobby (with the last round's results), the banker question, the draw."""
        engine, round_no = self.engine, self.engine.core.round_no
        title = t(LANGUAGE, "muxi.title")
        header = t(LANGUAGE, "muxi.header.round", title=title, round=round_no, base=engine.state.base)
        if engine.phase is Phase.CLOSED:
            reason = t(LANGUAGE, f"closed.{self.closed_reason}")
            return t(LANGUAGE, "lobby.closed", title=title, reason=reason), None, frozenset()
        if engine.phase is Phase.LOBBY:
            lines, asks = [], set()
            if round_no and self.results_round == round_no:
                lines.append(t(LANGUAGE, "muxi.header.results", title=title, round=round_no))
                for result in sorted(self.results, key=lambda line: not line.is_banker):
                    lines.append(self.result_line(result))
                lines.append(t(LANGUAGE, "round.verify", table=self.table_id, round=round_no))
            else:
                lines.append(t(LANGUAGE, "lobby.title", title=title))
            for number, seat in enumerate(engine.core.seats, 1):
                mark = t(LANGUAGE, "lobby.ready" if seat.ready else "lobby.not_ready")
                lines.append(t(LANGUAGE, "lobby.seat", n=number, name=self.name(seat.person), mark=mark))
                if not seat.ready:
                    asks.add((round_no, "ready", seat.person))
            hint = "lobby.hint_next" if round_no else "lobby.hint"
            lines.append(t(LANGUAGE, hint, low=2, high=5, min="1,000"))
            start = "button.continue" if round_no else "button.ready"
            return "\n".join(lines), self.keyboard(("button.join", "join"), (start, "ready")), frozenset(asks)
        if engine.phase is Phase.BANKER:
            asked = engine.asked_person() or 0
            lines = [header]
            for number, person in enumerate(engine.state.participants, 1):
                mark = "👉" if person == asked else ""
                lines.append(t(LANGUAGE, "lobby.seat", n=number, name=self.name(person), mark=mark).rstrip())
            lines.append(t(LANGUAGE, "muxi.banker_ask", name=self.name(asked), deadline=turn))
            markup = self.keyboard(("button.banker", "banker"), ("button.pass", "pass"))
            return "\n".join(lines), markup, frozenset({(round_no, "banker", asked)})
        banker = engine.state.banker or 0
        lines = [header, t(LANGUAGE, "muxi.banker", name=self.name(banker))]
        players = [hand for hand in engine.seen_by(None) if not hand.is_banker]
        for number, hand in enumerate(players, 1):
            if hand.shown:
                shown = [card for card in hand.cards if card is not None]
                status = t(LANGUAGE, "muxi.status.shown", hand=f"{cards_text(shown)} {judged(shown)}")
            elif hand.status is Status.NATURAL:
                status = t(LANGUAGE, "muxi.status.stands")
            else:
                status = t(LANGUAGE, f"muxi.status.{hand.status.value}")
            lines.append(
                t(LANGUAGE, "muxi.player_line", n=number, name=self.name(hand.person), status=status)
            )
        if engine.phase is Phase.DRAW:
            lines.append(t(LANGUAGE, "muxi.draw_prompt", deadline=turn))
        else:
            lines.append(t(LANGUAGE, "muxi.banker_prompt", name=self.name(banker), deadline=turn))
        markup = self.keyboard(("button.draw", "draw"), ("button.stand", "stand"))
        return "\n".join(lines), markup, frozenset((round_no, "move", p) for p in engine.awaited())

    def result_line(self, result: PersonResult) -> str:
        role = t(LANGUAGE, "muxi.role.banker") if result.is_banker else ""
        if result.status in (Status.ESCAPED, Status.FORFEIT):
            hand = t(LANGUAGE, f"muxi.status.{result.status.value}")
        else:
            hand = hand_label(result.kind, result.points, LANGUAGE)
        name, cards, net = self.name(result.person), cards_text(result.cards), signed(result.net)
        return t(LANGUAGE, "muxi.result_line", role=role, name=name, cards=cards, hand=hand, net=net)

    def dm_view(self, person: int, turn: str, wallet: int) -> tuple[str, Markup, Asks] | None:
        """A person's DM: the banker question, their cards (with their buttons on their turn), their
        result; None: leave it as it is."""
        engine, round_no = self.engine, self.engine.core.round_no
        title = t(LANGUAGE, "muxi.dm", title=t(LANGUAGE, "muxi.title"), chat=self.title, round=round_no)
        if engine.phase is Phase.BANKER:
            if engine.asked_person() == person:
                markup = self.keyboard(("button.banker", "banker"), ("button.pass", "pass"))
                text = f"{title}\n{t(LANGUAGE, 'muxi.dm_banker_ask', deadline=turn)}"
                return text, markup, frozenset({(round_no, "banker")})
            return (
                (f"{title}\n{t(LANGUAGE, 'muxi.did.pass')}", None, frozenset())
                if engine.declined_bank(person)
                else None
            )
        if engine.phase is Phase.LOBBY:
            result = next((line for line in self.results if line.person == person), None)
            if result is None or self.results_round != round_no:
                return None
            label = hand_label(result.kind, result.points, LANGUAGE)
            mine = t(LANGUAGE, "muxi.your_cards", cards=cards_text(result.cards), hand=label)
            over = t(LANGUAGE, "dm.result", net=signed(result.net), balance=f"{wallet:,}")
            return f"{title}\n{mine}\n{over}", None, frozenset()
        hand = engine.hand_of(person)
        if hand is None or engine.phase is Phase.CLOSED:
            return None
        mine = t(LANGUAGE, "muxi.your_cards", cards=cards_text(hand.cards), hand=judged(hand.cards))
        moves = [move for move in engine.legal_actions(person) if move.value in ("draw", "stand")]
        if moves:
            question = "muxi.dm_choose" if len(moves) == 2 else "muxi.dm_must_draw"
            markup = self.keyboard(*((f"button.{move.value}", move.value) for move in moves))
            text = f"{title}\n{mine}\n{t(LANGUAGE, question, deadline=turn)}"
            return text, markup, frozenset({(round_no, "move")})
        did = DID.get(hand.status)
        return f"{title}\n{mine}" + (f"\n{t(LANGUAGE, did)}" if did else ""), None, frozenset()


class ReferenceBot:
    def __init__(self, api: Api, outbox: Outbox, grant: int, turn_seconds: int, lobby_seconds: int) -> None:
        self.api, self.outbox, self.grant = api, outbox, grant
        self.turn_seconds, self.lobby_seconds = turn_seconds, lobby_seconds
        self.turn = t(LANGUAGE, "time.seconds", n=turn_seconds)
        self.tables: dict[int, Table] = {}
        self.open: dict[int, Table] = {}  # group chat -> its table
        self.wallets: dict[int, int] = {}
        self.rng = random.SystemRandom()
        self.tasks: set[asyncio.Task[object]] = set()

    async def poll(self) -> None:
        offset = 0
        while True:
            params = {"offset": offset, "timeout": 25, "allowed_updates": ["message", "callback_query"]}
            try:
                updates = await self.api.call("getUpdates", params)
            except (ApiError, aiohttp.ClientError, TimeoutError) as error:
                log.warning("getUpdates: %r", error)
                await asyncio.sleep(1)
                continue
            for update in updates if isinstance(updates, list) else []:
                offset = max(offset, int(update["update_id"]) + 1)
                try:
                    if "callback_query" in update:
                        self.pressed(update["callback_query"])
                    elif "message" in update:
                        self.said(update["message"])
                except Exception:
                    log.exception("update %s", update.get("update_id"))

    def said(self, message: dict) -> None:
        chat, words = message["chat"], str(message.get("text") or "").split()
        if chat["type"] == "private" or words[:1] != ["/newgame"] or words[1:2] != ["muxi"]:
            return
        if chat["id"] in self.open or "from" not in message:
            return
        table_id = len(self.tables) + 1
        engine = MuxiTable.new(turn_seconds=self.turn_seconds, lobby_seconds=self.lobby_seconds)
        table = Table(table_id, str(chat.get("title") or ""), engine, Parcel(chat["id"], private=False))
        self.tables[table_id] = self.open[chat["id"]] = table
        self.act(table, message["from"], lambda person: Join(person, self.wallets.get(person, self.grant)))

    def pressed(self, query: dict) -> None:
        press = callbacks.decode(query.get("data"))
        table = self.tables.get(press.table_id) if press is not None and press.game == "muxi" else None
        if press is None or table is None:
            return self.answer(query, "press.unknown")
        if table.engine.closed:
            return self.answer(query, "press.table_over")
        if press.round_no != table.engine.core.round_no:
            return self.answer(query, "press.old_round")
        moves = {
            "join": lambda person: Join(person, self.wallets.get(person, self.grant)),
            "ready": lambda person: Ready(person, Shuffle.new(DECK_54, self.rng)),
            "banker": BeBanker,
            "pass": PassBanker,
            "draw": Draw,
            "stand": Stand,
        }
        if press.action not in moves:
            return self.answer(query, "press.unknown")
        refused = self.act(table, query["from"], moves[press.action])
        self.answer(query, f"error.{refused.code}" if refused else None)

    def answer(self, query: dict, key: str | None) -> None:
        params: dict[str, object] = {"callback_query_id": query["id"]}
        if key:
            params["text"] = t(LANGUAGE, key)
        self.spawn(self.api.call("answerCallbackQuery", params))

    def spawn(self, work: object) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[object]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("answer failed: %r", task.exception())

    def act(self, table: Table, user: dict, action: object) -> RuleError | None:
        person = int(user["id"])
        table.names[person] = str(user.get("first_name") or person)
        try:
            events = table.engine.apply(action(person))
        except RuleError as error:
            return error
        self.happened(table, events)
        return None

    def deadline(self, table: Table, timer: int) -> None:
        if not table.engine.closed and table.engine.core.timer == timer:
            self.happened(table, table.engine.apply(Timeout(timer)))

    def happened(self, table: Table, events: list[object]) -> None:
        loop = asyncio.get_running_loop()
        for event in events:
            if isinstance(event, TimerStarted):
                if table.timer is not None:
                    table.timer.cancel()
                table.timer = loop.call_later(event.seconds, self.deadline, table, event.timer)
            elif isinstance(event, RoundOver):
                table.results, table.results_round = event.results, event.round_no
                self.wallets.update({seat.person: seat.balance for seat in table.engine.core.seats})
            elif isinstance(event, Unseated):
                self.wallets[event.person] = event.balance
            elif isinstance(event, TableClosed):
                table.closed_reason = event.reason
                if table.timer is not None:
                    table.timer.cancel()
                self.open.pop(table.board.chat_id, None)
        self.outbox.want(table.board, *table.board_view(self.turn))
        people = {seat.person for seat in table.engine.core.seats} | set(table.engine.card_holders())
        people |= {line.person for line in table.results}
        for person in sorted(people):
            view = table.dm_view(person, self.turn, self.wallets.get(person, self.grant))
            if view is not None:
                parcel = table.dms.setdefault(person, Parcel(person, private=True))
                self.outbox.want(parcel, *view)


async def serve() -> None:
    env = os.environ
    token = env.get("TELEGRAM_BOT_TOKEN", "")
    if not token:
        raise SystemExit("TELEGRAM_BOT_TOKEN is not set")
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        api = Api(session, env.get("PAIJU_BOT_API_URL") or "https://api.telegram.org", token)
        outbox = Outbox(api, int(env.get("PAIJU_BOT_REQUESTS_PER_SECOND") or 0))
        bot = ReferenceBot(
            api,
            outbox,
            grant=int(env.get("PAIJU_START_GRANT") or 10_000),
            turn_seconds=int(env.get("PAIJU_TURN_SECONDS") or 30),
            lobby_seconds=int(env.get("PAIJU_LOBBY_SECONDS") or 300),
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, stop.set)
        tasks = [loop.create_task(outbox.run()), loop.create_task(bot.poll())]
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
