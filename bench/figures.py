"""The figures of benchmarks 5 and 6, computed after a run from what the emulator recorded and what
the simulated people saw (``bench.crowd.Seen``). Every time is the emulator's clock.

- **press → answer**: from the moment ``getUpdates`` handed the press to the bot to the moment the
  emulator received its ``answerCallbackQuery`` (too late or not). A press never answered by the end
  of the run counts with the time it waited until then (its true latency is longer).
- **turn start → prompt visible**: the turn starts when the bot was handed the press that made it
  someone's turn (the state change itself is not visible to the emulator; the bot learns of it
  then): for a muxi banker question the press that started the round (the last 开始 / 继续 pressed);
  for a muxi player's draw the banker's 当庄; for the muxi banker's own draw the last player's draw
  or stand; in showhand the previous action (anyone's, the person's own when it closed a betting
  round and they speak first on the next; or the round's start). The prompt is visible
  at the first message the person can see that asks them to act: their DM with their buttons, or
  the table message naming them. Turns in rounds where a deadline fired are left out (their start
  was the deadline, which the emulator cannot see), and so is a banker question passed on.
- **table lag**: from the moment the bot was handed a move (accepted) to the first version of the
  table message that no longer asks that move of its player (shows it made); a move the table
  never showed by the end counts with the time until then.
- **timeouts**: ⌛ forfeits in a muxi round's results, folds in a showhand game's results (the
  people never fold), banker questions passed on (they always accept): deadlines that fired on
  someone who would have pressed, had they been shown their prompt in time.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bench.crowd import PressRecord, Seen
from bench.people import TableSpec
from faketg.limits import group_peaks
from faketg.world import Request, World


@dataclass(frozen=True)
class Span:
    start: float
    end: float

    def __contains__(self, moment: float | None) -> bool:
        return moment is not None and self.start <= moment < self.end

    @property
    def minutes(self) -> float:
        return (self.end - self.start) / 60


BANKER_QUESTION = "muxi banker question"
PLAYERS_DRAW = "muxi players' draw"
BANKERS_DRAW = "muxi banker's draw"
SHOWHAND_TURN = "showhand turn"
PROMPT_KINDS = (BANKER_QUESTION, PLAYERS_DRAW, BANKERS_DRAW, SHOWHAND_TURN)


@dataclass
class Spread:
    """Samples of a latency in seconds. A sample still waiting when the run ended is *censored*: its
    true value is larger than the one kept, so a percentile at or above a censored sample's rank is
    only a lower bound (shown with ≥, and never counted as meeting a target)."""

    values: list[float] = field(default_factory=list)
    cut: list[bool] = field(default_factory=list)

    @classmethod
    def merged(cls, spreads: Iterable[Spread]) -> Spread:
        whole = cls()
        for spread in spreads:
            whole.values.extend(spread.values)
            whole.cut.extend(spread.cut)
        return whole

    def add(self, value: float, censored: bool = False) -> None:
        self.values.append(value)
        self.cut.append(censored)

    @property
    def censored(self) -> int:
        return sum(self.cut)

    def at(self, share: float) -> tuple[float, bool]:
        """The ``share`` percentile in ms (nearest rank), and whether it is only a lower bound."""
        if not self.values:
            return 0.0, False
        ordered = sorted(zip(self.values, self.cut, strict=True))
        rank = min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))
        bound = any(censored for _, censored in ordered[: rank + 1])
        return ordered[rank][0] * 1000, bound

    def ms(self, share: float) -> float:
        return self.at(share)[0]

    def below(self, share: float, limit_ms: float) -> bool:
        """Is the percentile known to be under ``limit_ms``?"""
        value, bound = self.at(share)
        return bool(self.values) and not bound and value < limit_ms

    def show(self, share: float) -> str:
        value, bound = self.at(share)
        return ("≥ " if bound else "") + _ms(value)

    def text(self) -> str:
        if not self.values:
            return "no samples"
        cut = f"; {self.censored:,} still waiting at the end" if self.censored else ""
        return f"{self.show(0.5)} / {self.show(0.99)} (n = {len(self.values):,}{cut})"


def _ms(value: float) -> str:
    return f"{value:,.0f} ms" if value >= 10 else f"{value:,.1f} ms"


class Figures:
    """Everything measured in one run, for any span of it."""

    def __init__(self, world: World, seen: Seen, specs: list[TableSpec], end: float) -> None:
        self.world, self.seen, self.specs, self.end = world, seen, specs, end
        self._accepted = [r for r in seen.presses if not r.refused and not r.too_old]
        self._ready: dict[tuple[int, int], list[float]] = {}  # (table, lobby round) -> Readys handed out
        self._banker: dict[tuple[int, int], PressRecord] = {}
        self._moves: dict[tuple[int, int], list[PressRecord]] = {}
        for record in self._accepted:
            if record.handed is None:
                continue
            key = (record.table, record.round_no)
            if record.action == "ready":
                self._ready.setdefault(key, []).append(record.handed)
            elif record.action == "banker":
                self._banker[key] = record
            elif record.move:
                self._moves.setdefault(key, []).append(record)
        for moves in self._moves.values():
            moves.sort(key=lambda record: record.handed or 0.0)
        self._timed_out = {(timeout.table, timeout.round_no) for timeout in seen.timeouts}
        # Who was asked to bank first in each round, as the table showed it, else as the first banker
        # question anyone saw (a busy group's table may skip that phase: its DM prompts do not).
        self._first_asked: dict[tuple[int, int], int] = {}
        for sample in sorted(seen.prompts, key=lambda sample: sample.visible):
            if sample.action == "banker":
                self._first_asked.setdefault((sample.table, sample.round_no), sample.person)
        for key, asked in seen.asked.items():
            if asked:
                self._first_asked[key] = asked[0]

    def presses(self, span: Span, tables: Iterable[int] | None = None) -> list[PressRecord]:
        chosen = None if tables is None else set(tables)
        return [
            r
            for r in self.seen.presses
            if (r.handed if r.handed is not None else r.made) in span
            and (chosen is None or r.table in chosen)
        ]

    def answers(self, span: Span, tables: Iterable[int] | None = None) -> Spread:
        spread = Spread()
        for record in self.presses(span, tables):
            start = record.handed if record.handed is not None else record.made
            if record.answered is not None:
                spread.add(record.answered - start)
            else:
                spread.add(self.end - start, censored=True)
        return spread

    def too_old(self, span: Span, tables: Iterable[int] | None = None) -> int:
        return sum(record.too_old for record in self.presses(span, tables))

    def refused(self, span: Span, tables: Iterable[int] | None = None) -> int:
        return sum(record.refused for record in self.presses(span, tables))

    def prompts(self, span: Span, tables: Iterable[int] | None = None) -> tuple[Spread, int]:
        """Turn start → prompt visible; and how many prompts had no start to measure from."""
        by_kind, unmeasured = self.prompts_by_kind(span, tables)
        return Spread.merged(by_kind.values()), unmeasured

    def prompts_by_kind(
        self, span: Span, tables: Iterable[int] | None = None
    ) -> tuple[dict[str, Spread], int]:
        """Turn start → prompt visible for each kind of prompt (``PROMPT_KINDS``); and how many
        prompts had no start to measure from."""
        chosen = None if tables is None else set(tables)
        by_kind: dict[str, Spread] = {}
        unmeasured = 0
        for sample in self.seen.prompts:
            if sample.visible not in span or (chosen is not None and sample.table not in chosen):
                continue
            kind, start = self._turn_start(
                sample.table, sample.person, sample.round_no, sample.action, sample.visible
            )
            if start is None or start > sample.visible:
                unmeasured += 1
                continue
            by_kind.setdefault(kind, Spread()).add(sample.visible - start)
        return {kind: by_kind[kind] for kind in PROMPT_KINDS if kind in by_kind}, unmeasured

    def _turn_start(
        self, table: int, person: int, round_no: int, action: str, visible: float
    ) -> tuple[str, float | None]:
        """The kind of a prompt, and when its turn started (None: not measurable)."""
        game = self.specs[table].game
        if action == "banker":
            kind = BANKER_QUESTION
        elif game != "muxi":
            kind = SHOWHAND_TURN
        else:
            banker = self._banker.get((table, round_no))
            kind = BANKERS_DRAW if banker is not None and banker.person == person else PLAYERS_DRAW
        if (table, round_no) in self._timed_out:
            return kind, None
        if kind == BANKER_QUESTION:
            first = self._first_asked.get((table, round_no)) == person
            return kind, self._started(table, round_no, visible) if first else None
        moves = [m for m in self._moves.get((table, round_no), []) if (m.handed or 0.0) < visible]
        if game == "muxi":
            banker = self._banker.get((table, round_no))
            if banker is None:
                return kind, None
            if kind == PLAYERS_DRAW:
                return kind, banker.handed
            players = [m.handed for m in moves if m.person != person]
            return kind, max(players) if players else None
        # Anyone's: their own, when it closed a betting round and they speak first on the next.
        before = [m.handed for m in moves if m.handed is not None]
        return kind, max(before) if before else self._started(table, round_no, visible)

    def _started(self, table: int, round_no: int, visible: float) -> float | None:
        """When the round began: the last Ready pressed before its first prompt showed (those
        pressed later joined a round already under way)."""
        return max((at for at in self._ready.get((table, round_no - 1), []) if at <= visible), default=None)

    def table_lag(self, span: Span, tables: Iterable[int] | None = None) -> Spread:
        chosen = None if tables is None else set(tables)
        spread = Spread()
        times = {table: [v.at for v in versions] for table, versions in self.seen.versions.items()}
        for record in self._accepted:
            if not record.move or record.handed not in span:
                continue
            if chosen is not None and record.table not in chosen:
                continue
            versions = self.seen.versions.get(record.table, [])
            start = bisect.bisect_left(times.get(record.table, []), record.handed)
            for version in versions[start:]:
                if record.action == "banker":
                    shown = version.round_no != record.round_no or version.phase != "ask"
                else:
                    shown = not version.asks_move_of(record.person, record.round_no)
                if shown:
                    spread.add(version.at - record.handed)
                    break
            else:
                spread.add(self.end - record.handed, censored=True)
        return spread

    def rounds(self, span: Span, tables: Iterable[int] | None = None) -> dict[str, int]:
        chosen = None if tables is None else set(tables)
        counts: dict[str, int] = {}
        for end in self.seen.rounds:
            if end.at in span and (chosen is None or end.table in chosen):
                counts[end.game] = counts.get(end.game, 0) + 1
        return counts

    def timeouts(self, span: Span, tables: Iterable[int] | None = None) -> dict[str, int]:
        chosen = None if tables is None else set(tables)
        counts: dict[str, int] = {}
        for timeout in self.seen.timeouts:
            if timeout.at in span and (chosen is None or timeout.table in chosen):
                counts[timeout.kind] = counts.get(timeout.kind, 0) + 1
        return counts

    def too_many(self, span: Span, chats: Iterable[int] | None = None) -> int:
        """429s the bot was answered."""
        return sum(self.too_many_by_method(span, chats).values())

    def too_many_by_method(self, span: Span, chats: Iterable[int] | None = None) -> Counter[str]:
        """429s the bot was answered, by the method refused."""
        chosen = None if chats is None else set(chats)
        return Counter(
            request.method
            for request in self.world.requests
            if request.error == 429 and request.at in span and (chosen is None or request.chat_id in chosen)
        )

    def requests(self, span: Span, *, exclude: frozenset[str] = frozenset({"getUpdates"})) -> int:
        return sum(
            1 for request in self.world.requests if request.at in span and request.method not in exclude
        )

    def game_of(self) -> Callable[[Request], str | None]:
        """Which game's table a request was about: by its chat (the group, or a player's DM), or
        for a callback answer by the press it answers."""
        games: dict[int, str] = {}
        for spec in self.specs:
            games[spec.chat_id] = spec.game
            for person in spec.people:
                games[person] = spec.game
        queries = {record.query_id: self.specs[record.table].game for record in self.seen.presses}

        def game_of(request: Request) -> str | None:
            if request.method == "answerCallbackQuery":
                return queries.get(str(request.params.get("callback_query_id")))
            return games.get(request.chat_id) if request.chat_id is not None else None

        return game_of

    def group_peak(self, chats: Iterable[int] | None = None) -> int:
        peaks = group_peaks(self.world.requests, self.world.chats)
        if chats is not None:
            chosen = set(chats)
            peaks = {chat: peak for chat, peak in peaks.items() if chat in chosen}
        return max(peaks.values(), default=0)
