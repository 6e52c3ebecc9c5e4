"""A finished round's replay (回放), step by step, as one viewer may see it (pure: no I/O).

The round is played again (``games.replay.rerun``: the engine re-run from the table as saved before
the round's first action, with its kept actions and its revealed deck), and its events are cut
into the steps a person would have watched: the start (base, antes), the deal, each move, each new
card, the show-down and the results. Each step carries the seats as the viewer may see them, by
the engines' rule (``seen_by``): a card dealt face down (``Dealt``, private) is its owner's alone;
a card dealt face up, a muxi natural shown at the deal and the hands a show-down showed are
everyone's. Moves are told in the table's own words (``showhand.told.*``, muxi's statuses), the
results as the Mini App shows them (``GameKind.app_result_line``: cards only as the table message
showed them).

A round played before its actions were kept has no steps (``kept`` False): the page says so and
shows its results and its commitment all the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from bot.display.game_kinds import KINDS
from bot.display.i18n import t
from bot.display.views import showhand as showhand_view
from bot.display.views.acted import folded_as
from bot.display.views.app import ResultLineJSON, ResultsJSON, SeatJSON, seat, tokens
from bot.display.views.common import coins, name, replay_startapp, signed, verify_link
from bot.display.views.muxi import judged_label
from bot.display.views.showdown import beats, hand_name
from bot.model.live_table import Engine, LiveTable, view_from_plain
from games import muxi, showhand
from games.cards import Card
from games.events import ESCROW, DeadlinePassed, Dealt, Left, Paid, RoundStarted, TableClosed
from games.replay import Played, rerun
from storage import RoundMoves, SavedRound

__all__ = ["REPLAY_STRINGS", "ReplayJSON", "StepJSON", "replay_view", "startapp_of"]

# The replay page's own words, sent with it in the viewer's language (with the Mini App's).
REPLAY_STRINGS = (
    "replay.title",
    "replay.play",
    "replay.pause",
    "replay.previous",
    "replay.next",
    "replay.step",
    "replay.not_kept",
    "replay.commitment",
)
_BETS = (showhand.BetMade, showhand.Checked, showhand.Called, showhand.Raised, showhand.WentAllIn)


class StepJSON(TypedDict):
    """One step: what happened (``kind``: start, deal, move, card, showdown, results, end), told in
    one line, and the table as the viewer may see it then (``base``: the round's; ``pot``:
    showhand's)."""

    kind: str
    text: str
    base: int
    pot: int | None
    seats: list[SeatJSON]


class ReplayJSON(TypedDict):
    table: int
    round: int
    game: str
    title: str
    kept: bool  # its actions were kept (False: a round played before replays were)
    steps: list[StepJSON]
    results: ResultsJSON | None
    commitment: str
    verify: str  # where its deck and salt are shown: 🔓 … /verify <table> <round>
    verify_link: str | None  # the bot's deep link that shows them (None: the bot's name unknown)
    me: int
    language: str
    strings: dict[str, str]


startapp_of = replay_startapp  # the start parameter that opens a round's replay: ``r<table>_<round>``


def replay_view(
    record: SavedRound,
    moves: RoundMoves | None,
    names: Mapping[int, str],
    viewer: int,
    language: str,
    page_strings: Mapping[str, str],
    bot_username: str | None = None,
) -> ReplayJSON:
    """Round ``record`` as ``viewer`` may watch it again (``moves``: its kept actions, None for a
    round played before they were; ``names``: as the table knows its people)."""
    steps: list[StepJSON] = []
    results: ResultsJSON | None = None
    if moves is not None:
        steps, results = _steps(record, moves, names, viewer, language)
    if results is None:
        results = _saved_results(record, names)
    strings = dict(page_strings) | {key.removeprefix("replay."): t(language, key) for key in REPLAY_STRINGS}
    strings["results"] = t(language, "replay.results")  # (the table's page says 上局结果: the last round's)
    return {
        "table": record.table_id,
        "round": record.round_no,
        "game": record.game,
        "title": t(language, f"{record.game}.title"),
        "kept": moves is not None,
        "steps": steps,
        "results": results,
        "commitment": record.commitment,
        "verify": t(language, "round.verify", table=record.table_id, round=record.round_no),
        "verify_link": verify_link(bot_username, record.table_id, record.round_no) if bot_username else None,
        "me": viewer,
        "language": language,
        "strings": strings,
    }


def _steps(
    record: SavedRound, moves: RoundMoves, names: Mapping[int, str], viewer: int, language: str
) -> tuple[list[StepJSON], ResultsJSON | None]:
    kind = KINDS[record.game]
    view = view_from_plain(moves.before["view"])
    view.names = {**view.names, **names}
    view.moves, view.results, view.autopilot = [], [], dict(view.autopilot)
    engine = kind.load(moves.before["engine"])
    live = LiveTable(record.table_id, record.chat_id, record.game, engine, view, saved=dict(moves.before))
    steps = _Steps(live, viewer, language)
    rerun(record.game, moves.before["engine"], moves.actions, record.deck, record.salt, steps.played)
    steps.flush()
    return steps.steps, steps.results


def _saved_results(record: SavedRound, names: Mapping[int, str]) -> ResultsJSON | None:
    """A round's results as its record keeps them (no cards: a round with no kept actions)."""
    if not record.results:
        return None
    lines: list[ResultLineJSON] = [
        {
            "person": result.person_id,
            "name": names.get(result.person_id, str(result.person_id)),
            "cards": [],
            "hand": "",
            "net": result.net,
            "net_text": signed(result.net),
            "banker": False,
            "won": result.won,
            "balance": None,
            "hole": False,
        }
        for result in record.results
    ]
    return {"round": record.round_no, "reason": "", "lines": lines}


@dataclass
class _Hand:
    """A person's part in the round: every card (the viewer sees those ``public`` and their own)."""

    person: int
    cards: list[Card] = field(default_factory=list)
    public: list[bool] = field(default_factory=list)
    total: int = 0  # showhand: what they put in
    folded: bool = False
    status: str = ""  # the line under their cards, as the table shows it
    banker: bool = False

    def deal(self, cards: tuple[Card, ...], public: bool) -> None:
        self.cards += cards
        self.public += [public] * len(cards)

    def show(self) -> None:
        self.public = [True] * len(self.cards)


class _Steps:
    """Cuts the re-run round's events into steps, for one viewer: a step opens with the event that
    starts it (a move, a card) and is drawn when the next one opens, or its action ends."""

    def __init__(self, live: LiveTable, viewer: int, language: str) -> None:
        self.live, self.viewer, self.language = live, viewer, language
        self.kind = KINDS[live.game]
        self.showhand = live.game == "showhand"
        self.hands: dict[int, _Hand] = {}
        self.lead: int | None = None
        self.base = self.stake = 0
        self.open: tuple[str, str] | None = None
        self.steps: list[StepJSON] = []
        self.results: ResultsJSON | None = None

    def hand(self, person: int) -> _Hand:
        return self.hands.setdefault(person, _Hand(person))

    def who(self, person: int) -> str:
        return name(self.live.name(person))

    def say(self, key: str, **values: object) -> str:
        return t(self.language, key, **values)

    # -- steps ------------------------------------------------------------------------------------
    def begin(self, kind: str, text: str = "") -> None:
        self.flush()
        self.open = (kind, text)

    def flush(self) -> None:
        if self.open is None:
            return
        kind, text = self.open
        self.open = None
        if kind == "start":
            text = self.start_text()
        seats = [self.seat_of(hand) for hand in self.hands.values()]
        if not self.showhand:  # the banker first, as the Mini App's table has it
            seats.sort(key=lambda one: not one["banker"])
        pot = sum(hand.total for hand in self.hands.values()) if self.showhand else None
        self.steps.append({"kind": kind, "text": text, "base": self.base, "pot": pot, "seats": seats})

    def start_text(self) -> str:
        title, round_no = self.say(f"{self.live.game}.title"), self.live.round_no
        if self.showhand:
            base, stake = coins(self.base), coins(self.stake)
            return self.say("showhand.header", title=title, round=round_no, base=base, stake=stake)
        return self.say("muxi.header.round", title=title, round=round_no, base=self.base)

    def seat_of(self, hand: _Hand) -> SeatJSON:
        one = seat(self.live, hand.person, self.viewer)
        one.pop("score", None)  # (the table's running score: not this round's)
        one["balance"] = None
        seen = [
            card if shown or hand.person == self.viewer else None
            for card, shown in zip(hand.cards, hand.public, strict=True)
        ]
        one["cards"] = tokens(seen)
        one["banker"], one["lead"], one["status"] = hand.banker, hand.person == self.lead, hand.status
        if self.showhand:
            one["hole"], one["total"], one["folded"] = bool(hand.cards), hand.total, hand.folded
            if len(seen) == 5 and None not in seen:
                one["hand"] = hand_name(showhand.evaluate(list(hand.cards)), self.language)
        elif seen and None not in seen:
            one["hand"] = judged_label(list(hand.cards), self.language)
        return one

    # -- one action -------------------------------------------------------------------------------
    def played(self, engine: Engine, played: Played) -> None:
        self.live.engine = engine
        if isinstance(played.action, muxi.PassBanker):
            self.begin("move", self.say("replay.muxi.pass", name=self.who(played.action.person)))
        for event in played.events:
            self.note(event)
            self.tell(event)
        if isinstance(engine, muxi.MuxiTable) and engine.phase in (muxi.Phase.DRAW, muxi.Phase.BANKER_DRAW):
            for seen in engine.seen_by(None):  # what the table may know of each choice
                self.hand(seen.person).status = self.muxi_status(seen)
        self.flush()

    def note(self, event: Any) -> None:
        """What the table's view remembers of the event (its moves, its results), as the bot's does."""
        view = self.live.view
        if isinstance(event, RoundStarted):
            view.moves = []
        self.kind.note_event(self.live, event)
        if (found := self.kind.round_results(self.live, event)) is not None:
            view.results, view.results_round = found, self.live.round_no
            lines = [self.kind.app_result_line(self.live, line, self.language) for line in found]
            lines.sort(key=lambda line: not line["banker"])
            self.results = {"round": self.live.round_no, "reason": view.end_reason, "lines": lines}

    def tell(self, event: Any) -> None:
        """The step ``event`` opens, or what it changes in the one open."""
        if isinstance(event, RoundStarted):
            self.base = event.base
            self.begin("start")
            for person in self.people():
                self.hand(person)
        elif isinstance(event, showhand.Stakes):
            self.base, self.stake = event.base, event.max_stake
        elif isinstance(event, showhand.LeadChanged):
            self.lead = event.person
        elif isinstance(event, Paid):
            if self.showhand and event.payee == ESCROW and isinstance(event.payer, int):
                self.hand(event.payer).total += event.amount
        elif isinstance(event, Dealt):
            if not any(hand.cards for hand in self.hands.values()):
                self.begin("deal", self.say("replay.deal"))
            self.hand(event.person).deal(event.cards, public=False)
        elif isinstance(event, muxi.HandShown):
            self.hand(event.person).show()
        elif isinstance(event, showhand.CardsDealt):
            if event.card_no > 2:  # (the second card is the deal's)
                self.begin("card", self.say("replay.card", n=event.card_no))
            for face_up in event.cards:
                self.hand(face_up.person).deal((face_up.card,), public=True)
        else:
            self.tell_move(event)

    def tell_move(self, event: Any) -> None:
        if isinstance(event, muxi.BankerChosen):
            self.hand(event.person).banker = True
            self.begin("move", self.say("muxi.banker", name=self.who(event.person)))
        elif isinstance(event, muxi.Decided):
            key = "muxi.status.drew" if event.drew else "muxi.status.stood"
            self.hand(event.person).status = self.say(key)
            self.begin("move", f"{self.who(event.person)} {self.say(key)}")
        elif isinstance(event, DeadlinePassed) and not self.showhand and self.live.round_no:
            self.begin("move", " · ".join(self.muxi_timed_out(person) for person in event.people))
        elif isinstance(event, (*_BETS, showhand.Folded)):
            if isinstance(event, showhand.Folded):
                hand = self.hand(event.person)
                hand.folded = True
                hand.status = self.say(f"showhand.{folded_as(self.live.view, event.person)}")
            self.begin("move", showhand_view.told(self.live, self.live.view.moves[-1], self.language))
        elif isinstance(event, Left) and event.escaped and event.person in self.hands:
            hand = self.hand(event.person)
            hand.folded, hand.status = True, self.say("muxi.status.escaped")
            self.begin("move", f"{self.who(event.person)} {hand.status}")
        elif isinstance(event, showhand.ShowDown):
            judged = showhand.verdict(
                showhand.evaluate([shown.hole, *shown.face_up]) for shown in event.hands
            )
            text = beats(judged.winner, judged.runner_up, self.language) if judged else ""
            self.begin("showdown", text or self.say("replay.showdown"))  # (drawn before they show)
            for shown in event.hands:
                self.hand(shown.person).show()
        elif isinstance(event, muxi.RoundOver):
            self.muxi_over(event)
        elif isinstance(event, showhand.GameOver):
            self.over()
        elif isinstance(event, TableClosed) and self.results is None:
            self.begin("end", self.say(f"closed.{event.reason}"))

    def people(self) -> list[int]:
        """Who plays the round, as the engine has them when it starts."""
        engine = self.live.engine
        if isinstance(engine, muxi.MuxiTable):
            return list(engine.state.participants)
        return [player.person for player in engine.state.players]

    # -- muxi -------------------------------------------------------------------------------------
    def muxi_status(self, seen: muxi.SeenHand) -> str:
        """As the Mini App's table says it (``muxi_app._hand_seat``): a shown natural says nothing."""
        if seen.status is muxi.Status.NATURAL:
            return self.say("muxi.status.stands") if seen.is_banker else ""
        return self.say(f"muxi.status.{seen.status.value}")

    def muxi_timed_out(self, person: int) -> str:
        """Who the deadline acted for: not asked to bank in time, or a choice not made (a lone joker,
        which must draw, forfeits: RULES.md 1.5.5)."""
        cards = self.hand(person).cards
        if not cards:
            return self.say("replay.muxi.timeout_banker", name=self.who(person))
        forced = len(cards) == 2 and sum(card.is_joker for card in cards) == 1
        return f"{self.who(person)} {self.say('muxi.status.forfeit' if forced else 'replay.muxi.timeout')}"

    def muxi_over(self, event: muxi.RoundOver) -> None:
        if event.reason.shown_down:
            self.begin("showdown", self.say("replay.showdown"))  # (the last move drawn before they show)
        for result in event.results:  # every card as it ended (drawn ones included)
            hand = self.hand(result.person)
            if len(result.cards) > len(hand.cards):
                hand.deal(result.cards[len(hand.cards) :], public=False)
            if result.status in (muxi.Status.FORFEIT, muxi.Status.ESCAPED):
                hand.status = self.say(f"muxi.status.{result.status.value}")
        if event.reason.shown_down:
            for result in event.results:
                if result.status is not muxi.Status.ESCAPED:
                    self.hand(result.person).show()
        self.over()

    def over(self) -> None:
        title = self.say(f"{self.live.game}.title")
        self.begin(
            "results", self.say(f"{self.live.game}.header.results", title=title, round=self.live.round_no)
        )
