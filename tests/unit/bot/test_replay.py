"""The replay builder (bot/display/replay.py): a round played on the real engines, kept as the bot
keeps it (the table before the round's first action, every action of the round, the deck from the
round's record), then watched again by each viewer: what each step shows, and what it hides."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.display.replay import replay_view, startapp_of
from bot.handlers.account import verify_payload
from bot.model.live_table import ViewState, state_of
from games import muxi, showhand
from games.events import DeckRevealed, RoundStarted
from games.fairness import Shuffle
from games.replay import action_from_plain, action_to_plain, rerun
from games.table import Cancel, Join, Leave, Ready, Timeout
from storage import RoundMoves, RoundResult, SavedRound
from tests.unit.games.muxi_helpers import rigged
from tests.unit.games.showhand_helpers import rigged as showhand_rigged

NAMES = {1: "阿强", 2: "小红", 3: "小明"}
STRINGS = {"round": "第 {round} 局"}


class Kept:
    """Plays a table and keeps its round as ``Tables._apply`` does (``_kept_move``)."""

    def __init__(self, engine, people, balance):
        self.engine = engine
        self.before = None
        self.actions = []
        self.record = None
        for person in people:
            self.apply(Join(person, balance))

    def apply(self, action):
        in_round, before = self.engine.core.shuffle is not None, state_of(self.engine, ViewState(names=NAMES))
        events = self.engine.apply(action)
        if any(isinstance(event, RoundStarted) for event in events):
            self.before = before
        if in_round or any(isinstance(event, RoundStarted) for event in events):
            self.actions.append(action_to_plain(action))
        for event in events:
            if isinstance(event, DeckRevealed):
                self.record = SavedRound(
                    id=1,
                    table_id=7,
                    chat_id=-100,
                    game="muxi" if isinstance(self.engine, muxi.MuxiTable) else "showhand",
                    round_no=event.round_no,
                    commitment=event.commitment,
                    deck=" ".join(card.token for card in event.deck),
                    salt=event.salt,
                    created_at=datetime.now(UTC),
                    results=(),
                )
        return events

    def watched_by(self, viewer, language="zh-hans"):
        assert self.record is not None, "the round is not over"
        moves = RoundMoves(before=self.before, actions=tuple(self.actions))
        return replay_view(self.record, moves, NAMES, viewer, language, STRINGS)


def seat_of(step, person):
    return next(seat for seat in step["seats"] if seat["person"] == person)


def kinds(replay):
    return [step["kind"] for step in replay["steps"]]


# -- muxi ---------------------------------------------------------------------------------------------
def muxi_round():
    """1 banks; 2 draws the 4H, 3 holds a tiangong (4C 5D: shown at the deal), 1 stands."""
    kept = Kept(muxi.MuxiTable.new(), [1, 2, 3], 5_000)
    shuffle = rigged([2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "4C 5D"}, "4H")
    for person in (1, 2, 3):
        kept.apply(Ready(person, shuffle))
    kept.apply(muxi.BeBanker(1))
    kept.apply(muxi.Draw(2))
    kept.apply(muxi.Stand(1))
    return kept


def test_muxi_steps_follow_the_round():
    replay = muxi_round().watched_by(2)
    assert replay["kept"] is True
    assert kinds(replay) == ["start", "move", "deal", "move", "move", "showdown", "results"]
    texts = [step["text"] for step in replay["steps"]]
    assert texts[1] == "庄家 阿强"
    assert texts[3] == "小红 ✅ 已补牌"
    assert texts[4] == "阿强 ✋ 不补"
    assert replay["verify"].endswith("/verify 7 1")
    assert replay["commitment"] == replay["commitment"].lower() and len(replay["commitment"]) == 64


def test_muxi_own_cards_seen_others_hidden_until_the_show_down():
    replay = muxi_round().watched_by(2)
    deal = replay["steps"][2]
    assert seat_of(deal, 2)["cards"] == ["2H", "3H"]  # the viewer's own
    assert seat_of(deal, 1)["cards"] == ["?", "?"]  # the banker's: face down
    assert seat_of(deal, 3)["cards"] == ["4C", "5D"]  # a natural, shown to the table at the deal
    drew = replay["steps"][3]
    assert seat_of(drew, 2)["cards"] == ["2H", "3H", "4H"]
    showdown = replay["steps"][5]
    assert seat_of(showdown, 1)["cards"] == ["2S", "3S"]  # shown at the show-down
    assert seat_of(showdown, 1)["banker"] is True
    assert replay["results"] is not None
    assert {line["person"] for line in replay["results"]["lines"]} == {1, 2, 3}


def test_muxi_a_spectator_sees_no_hidden_card_before_the_show_down():
    replay = muxi_round().watched_by(99)
    for step in replay["steps"][:5]:
        for one in step["seats"]:
            if one["person"] != 3:  # (3's natural was shown to everyone)
                assert set(one["cards"]) <= {"?"}, (step["kind"], one)
    drew = replay["steps"][3]
    assert seat_of(drew, 2)["cards"] == ["?", "?", "?"]  # a drawn card stays face down


def test_muxi_replay_matches_what_the_engine_showed_each_viewer():
    """At the end of each action of the draw, a step shows each viewer what ``seen_by`` did."""
    kept = Kept(muxi.MuxiTable.new(), [1, 2, 3], 5_000)
    shuffle = rigged([2, 3, 1], {1: "2S 3S", 2: "2H 3H", 3: "4C 5D"}, "4H")
    for person in (1, 2, 3):
        kept.apply(Ready(person, shuffle))
    kept.apply(muxi.BeBanker(1))
    seen = {viewer: kept.engine.seen_by(viewer) for viewer in (1, 2, 3, None)}
    kept.apply(muxi.Draw(2))
    kept.apply(muxi.Stand(1))
    for viewer in (1, 2, 3, None):
        deal = kept.watched_by(viewer or 0)["steps"][2]
        for hand in seen[viewer]:
            assert seat_of(deal, hand.person)["cards"] == ["?" if c is None else c.token for c in hand.cards]


# -- showhand -----------------------------------------------------------------------------------------
ACES = {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH"}


def showhand_game(hands=ACES):
    kept = Kept(showhand.ShowhandTable.new(), [1, 2], 2_000)
    shuffle = showhand_rigged([1, 2], 1, hands)
    for person in (1, 2):
        kept.apply(Ready(person, shuffle))
    return kept


def test_showhand_moves_are_told_as_the_table_tells_them_and_holes_shown_only_at_the_show_down():
    kept = showhand_game()
    engine = kept.engine
    base = engine.base
    kept.apply(showhand.Bet(engine.turn, base * 2))
    kept.apply(showhand.Raise(engine.turn, base * 4))
    kept.apply(showhand.Call(engine.turn))
    while engine.phase is showhand.Phase.BETTING:
        kept.apply(showhand.Check(engine.turn))
    replay = kept.watched_by(1)
    assert kinds(replay)[:3] == ["start", "deal", "move"]
    assert kinds(replay)[-2:] == ["showdown", "results"]
    assert [s["kind"] for s in replay["steps"] if s["kind"] == "card"] == ["card"] * 3
    raised = next(step for step in replay["steps"] if "加注" in step["text"])
    # the table's wording: a raise that is all they put in this betting round names one number
    assert raised["text"].endswith(" 加注 30") and "本轮到" not in raised["text"]
    deal = replay["steps"][1]
    assert seat_of(deal, 1)["cards"] == ["8S", "9H"]  # my hole card and my face-up one
    assert seat_of(deal, 2)["cards"] == ["?", "AH"]  # theirs: face down, face up
    before_showdown = replay["steps"][-3]
    assert seat_of(before_showdown, 2)["cards"][0] == "?"
    showdown = replay["steps"][-2]
    assert seat_of(showdown, 2)["cards"] == ["AD", "AH", "8D", "9C", "JH"]
    assert showdown["pot"] == sum(one["total"] for one in showdown["seats"])
    won = next(line for line in replay["results"]["lines"] if line["won"])
    assert won["person"] == 2


def test_showhand_a_folded_hole_card_stays_hidden_to_the_others():
    kept = showhand_game()
    engine = kept.engine
    folder = engine.turn
    kept.apply(showhand.Fold(folder))
    other = 1 if folder == 2 else 2
    for step in kept.watched_by(other)["steps"][1:]:  # (after the start, which deals nothing)
        assert seat_of(step, folder)["cards"][0] == "?"
    assert kept.watched_by(other)["steps"][-2]["text"].endswith("弃牌")
    for step in kept.watched_by(folder)["steps"][1:]:
        assert seat_of(step, folder)["cards"][0] != "?"  # their own, always
    assert kinds(kept.watched_by(other))[-1] == "results"
    assert "showdown" not in kinds(kept.watched_by(other))


def test_showhand_all_in_deals_the_remaining_cards_one_step_each():
    kept = showhand_game()
    engine = kept.engine
    while engine.card_no < 4:
        kept.apply(showhand.Check(engine.turn))
    kept.apply(showhand.AllIn(engine.turn))
    kept.apply(showhand.Call(engine.turn))  # the last two cards come with this call
    replay = kept.watched_by(1)
    steps = replay["steps"]
    call = max(i for i, step in enumerate(steps) if step["kind"] == "move")
    assert [step["kind"] for step in steps[call:]] == ["move", "card", "showdown", "results"]
    assert "梭哈" in steps[call - 1]["text"]
    assert len(seat_of(steps[call], 1)["cards"]) == 4  # the call: four cards each still
    assert len(seat_of(steps[call + 1], 1)["cards"]) == 5  # card 5, a step of its own
    assert seat_of(steps[call + 1], 2)["cards"][0] == "?"  # still face down before the show-down
    assert seat_of(steps[call + 2], 2)["cards"][0] == "AD"
    assert steps[call]["pot"] == 2 * engine.max_stake


def test_showhand_all_in_at_card_four_deals_card_five_only_after_the_call():
    """(Card 4 was dealt after a round of checks: its own step, before the all-in.)"""
    kept = showhand_game()
    engine = kept.engine
    while engine.card_no < 4:
        kept.apply(showhand.Check(engine.turn))
    kept.apply(showhand.AllIn(engine.turn))
    kept.apply(showhand.Call(engine.turn))
    texts = [step["text"] for step in kept.watched_by(2, "en")["steps"]]
    assert texts.index("🃏 Card 4 dealt") < texts.index("🃏 Card 5 dealt")
    assert any("all-in" in text for text in texts)


# -- keeping and reading back ------------------------------------------------------------------------
def test_actions_round_trip_and_the_first_is_kept_without_its_deck():
    shuffle = Shuffle(tuple(showhand_rigged([1, 2], 1, ACES).deck), "x")
    plain = action_to_plain(Ready(1, shuffle))
    assert plain == {"type": "Ready", "person": 1}  # the deck is the round's record's
    assert action_from_plain(plain, shuffle) == Ready(1, shuffle)
    for action in (showhand.Raise(2, 400), showhand.Fold(1), muxi.Draw(3), muxi.PassBanker(2)):
        assert action_from_plain(action_to_plain(action)) == action


def test_rerun_makes_the_same_events():
    kept = showhand_game()
    engine = kept.engine
    kept.apply(showhand.Fold(engine.turn))
    _, played = rerun("showhand", kept.before["engine"], kept.actions, kept.record.deck, kept.record.salt)
    assert any(isinstance(event, showhand.GameOver) for event in played[-1].events)


def test_a_round_played_before_replays_were_kept_shows_its_results_only():
    record = SavedRound(
        1,
        7,
        -100,
        "muxi",
        3,
        "ab" * 32,
        "AS",
        "salt",
        datetime.now(UTC),
        (RoundResult(2, 400, True, "tiangong"), RoundResult(1, -400, False, None)),
    )
    replay = replay_view(record, None, NAMES, 2, "en", STRINGS)
    assert replay["kept"] is False and replay["steps"] == []
    assert replay["strings"]["not_kept"].startswith("This round was played before replays")
    assert [(line["name"], line["net_text"]) for line in replay["results"]["lines"]] == [
        ("小红", "+400"),
        ("阿强", "−400"),
    ]
    assert replay["verify"].endswith("/verify 7 3")


def test_startapp_names_the_round_as_verify_does():
    assert startapp_of(12, 3) == "r12_3"


# -- the deadline, autopilot (托管) and escapes --------------------------------------------------------
def test_muxi_deadlines_are_told_who_passed_on_the_bank_and_who_forfeited():
    kept = Kept(muxi.MuxiTable.new(), [1, 2, 3], 5_000)
    shuffle = rigged([1, 2, 3], {1: "2S 3S", 2: "SJ 3H", 3: "2D 3D"})  # (3 banks: 1 is dealt first)
    for person in (1, 2, 3):
        kept.apply(Ready(person, shuffle))
    kept.apply(Timeout(kept.engine.core.timer))  # 1, asked first, lets the time run out
    kept.apply(muxi.PassBanker(2))
    kept.apply(muxi.BeBanker(3))
    kept.apply(muxi.Stand(1))
    kept.apply(Timeout(kept.engine.core.timer))  # 2 never draws: forfeits
    kept.apply(muxi.Stand(3))
    texts = [step["text"] for step in kept.watched_by(1)["steps"]]
    # (as on the table: whom a deadline acted for is on autopilot from then on, marked 🤖)
    assert texts[1:4] == ["阿强🤖 超时，算不当庄", "小红 不当庄", "庄家 小明"]
    assert "小红🤖 ⌛ 超时认输" in texts
    forfeited = next(step for step in kept.watched_by(1)["steps"] if step["text"] == "小红🤖 ⌛ 超时认输")
    assert seat_of(forfeited, 2)["cards"] == ["?", "?"]  # the joker stays face down to the others


def test_showhand_a_timeout_folds_as_the_table_told_it():
    kept = Kept(showhand.ShowhandTable.new(), [1, 2, 3], 2_000)
    shuffle = showhand_rigged([1, 2, 3], 1, {1: "8S 9H 10D QC KS", 2: "AD AH 8D 9C JH", 3: "KD KH 10C JC QD"})
    for person in (1, 2, 3):
        kept.apply(Ready(person, shuffle))
    engine = kept.engine
    late = engine.turn
    kept.apply(Timeout(engine.core.timer))
    kept.apply(showhand.Fold(engine.turn))  # the next folds too: the last one left takes the pot
    texts = [step["text"] for step in kept.watched_by(late)["steps"]]
    assert f"{NAMES[late]}🤖 超时弃牌" in texts  # (on autopilot from then on, as the table marks them)


def test_an_escape_is_a_step_and_its_cards_stay_face_down():
    kept = showhand_game()
    engine = kept.engine
    escaper = engine.turn
    kept.apply(Leave(escaper))
    replay = kept.watched_by(1 if escaper == 2 else 2)
    escaped = next(step for step in replay["steps"] if step["text"] == f"{NAMES[escaper]} 🏃 逃跑")
    assert seat_of(escaped, escaper)["cards"][0] == "?" and seat_of(escaped, escaper)["folded"] is True
    assert replay["steps"][-1]["kind"] == "results"


def test_a_round_the_table_was_cancelled_in_ends_with_its_reason():
    kept = showhand_game()
    kept.apply(Cancel())
    replay = kept.watched_by(1)
    assert replay["steps"][-1] == {**replay["steps"][-1], "kind": "end", "text": "管理员已结束本桌"}
    assert replay["results"] is None


def test_muxi_the_bankers_two_jokers_end_the_round_at_the_deal_and_are_shown():
    kept = Kept(muxi.MuxiTable.new(), [1, 2], 5_000)
    shuffle = rigged([2, 1], {1: "SJ BJ", 2: "2H 3H"})
    for person in (1, 2):
        kept.apply(Ready(person, shuffle))
    kept.apply(muxi.BeBanker(1))
    replay = kept.watched_by(2)
    assert [step["kind"] for step in replay["steps"]] == ["start", "move", "deal", "showdown", "results"]
    assert seat_of(replay["steps"][2], 1)["cards"] == ["?", "?"]
    assert seat_of(replay["steps"][3], 1)["cards"] == ["SJ", "BJ"]


def test_muxi_a_player_who_escapes_keeps_their_cards_face_down():
    kept = Kept(muxi.MuxiTable.new(), [1, 2], 5_000)
    for person in (1, 2):
        kept.apply(Ready(person, rigged([2, 1], {1: "2S 3S", 2: "2H 3H"})))
    kept.apply(muxi.BeBanker(1))
    kept.apply(Leave(2))
    replay = kept.watched_by(1)
    assert [step["text"] for step in replay["steps"]][-2] == "小红 🏃 逃跑"
    assert "showdown" not in kinds(replay)
    assert all(seat_of(step, 2)["cards"] in ([], ["?", "?"]) for step in replay["steps"])


def test_a_verify_deep_link_names_its_round():
    assert verify_payload("v12_3") == (12, 3)
    for other in ("t12", "v12", "v12_", "v_3", "v1_²", "v12_3_4", ""):
        assert verify_payload(other) is None, other
