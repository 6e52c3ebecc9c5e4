"""Muxi tables, scenario by scenario (RULES.md 1.5, 1.6)."""

import json

import pytest

from games import errors
from games.cards import DECK_54, format_cards
from games.events import (
    ESCROW,
    HOUSE,
    DeadlinePassed,
    Dealt,
    DeckRevealed,
    Left,
    RoundStarted,
    TableClosed,
    Unseated,
)
from games.fairness import Shuffle, verify
from games.muxi import (
    BankerAsked,
    BeBanker,
    Cancel,
    Credit,
    Draw,
    HandShown,
    Join,
    Kind,
    Leave,
    Move,
    MuxiTable,
    PassBanker,
    Phase,
    Ready,
    RoundOver,
    Stand,
    Status,
    Timeout,
)
from games.stakes import pro_rata
from tests.unit.games.muxi_helpers import balances, choose_banker, flows, of_type, rigged, seat

FOUR = [1, 2, 3, 4]
ORDER_BANKER_1 = [2, 3, 4, 1]


def four_with_banker_1(hands, draws="", balance=5_000):
    table, _ = seat(FOUR, balance, rigged(ORDER_BANKER_1, hands, draws))
    events = choose_banker(table, 1)
    return table, events


def test_a_round_from_join_to_showdown():
    table, events = seat([1, 2], 5_000, rigged([2, 1], {1: "3H 4H", 2: "5S 6H"}, "7S 8H"))
    started = of_type(events, RoundStarted)[0]
    assert (started.round_no, started.base) == (1, 100)
    assert of_type(events, BankerAsked) == [BankerAsked(1)]
    events = table.apply(BeBanker(1))
    assert of_type(events, Dealt) == [
        Dealt(2, tuple(rigged([2], {2: "5S 6H"}).deck[:2])),
        Dealt(1, events[2].cards),
    ]
    assert table.pending() == (2,) and table.legal_actions(2) == (Move.DRAW, Move.STAND, Move.LEAVE)
    events = table.apply(Draw(2))  # 5 6 7: a straight
    assert table.phase is Phase.BANKER_DRAW and table.legal_actions(1)[:2] == (Move.DRAW, Move.STAND)
    events = table.apply(Draw(1))  # 3 4 8 of hearts: a 5-point flush
    over = of_type(events, RoundOver)[0]
    assert over.reason == "showdown"
    results = {result.person: result for result in over.results}
    assert results[2].kind is Kind.STRAIGHT and results[1].kind is Kind.FLUSH
    assert (results[2].net, results[1].net) == (400, -400)
    assert balances(table) == {1: 4_600, 2: 5_400}
    reveal = of_type(events, DeckRevealed)[0]
    assert verify(format_cards(reveal.deck), reveal.salt, started.commitment)
    assert table.phase is Phase.LOBBY and table.legal_actions(1) == (Move.READY, Move.LEAVE)


def test_the_seeds_banker_escape_example():
    """4 people, base 10, the banker escapes: banker −500, players +100 each, house +200."""
    table, _ = four_with_banker_1({1: "2S 3S", 2: "2H 3H", 3: "2D 3D", 4: "2C 3C"}, balance=1_000)
    assert table.state.base == 10
    events = table.apply(Leave(1))
    assert flows(events) == {1: -500, 2: 100, 3: 100, 4: 100, HOUSE: 200}
    assert of_type(events, RoundOver)[0].reason == "banker_escaped"
    assert Left(1, escaped=True) in events and table.core.seat_of(1) is None


def test_a_player_escapes_then_the_banker():
    """The seed: the first escaper's 10× goes to the house when the banker escapes too."""
    table, _ = four_with_banker_1({1: "2S 3S", 2: "2H 3H", 3: "2D 3D", 4: "2C 3C"}, balance=1_000)
    events = table.apply(Leave(2))
    assert flows(events) == {2: -100, ESCROW: 100}
    assert table.core.escrow_total == 100 and table.phase is Phase.DRAW
    events = table.apply(Leave(1))
    assert flows(events) == {1: -500, 3: 100, 4: 100, HOUSE: 400, ESCROW: -100}
    assert table.core.escrow_total == 0


def test_an_escaped_players_penalty_is_shared_at_the_showdown():
    table, _ = four_with_banker_1({1: "KS QS", 2: "AH 2H", 3: "AD 2C", 4: "AC 3D"}, balance=1_000)
    table.apply(Leave(3))
    events = table.apply(Stand(2)) + table.apply(Stand(4)) + table.apply(Stand(1))
    # banker muxi loses to 3 points double (2×) and 4 points normal (1×); escrow 100 -> 80 / 20
    assert flows(events) == {ESCROW: -100, 1: 80 - 20 - 10, HOUSE: 20, 2: 20, 4: 10}
    results = {r.person: r for r in of_type(events, RoundOver)[0].results}
    assert results[3].status is Status.ESCAPED and results[3].net == -100  # paid on leaving


def test_the_round_ends_when_every_player_escaped():
    table, _ = seat([1, 2], 1_000, rigged([2, 1], {1: "2S 3S", 2: "2H 3H"}))
    choose_banker(table, 1)
    events = table.apply(Leave(2))
    assert flows(events) == {2: -100, 1: 80, HOUSE: 20}
    assert of_type(events, RoundOver)[0].reason == "players_escaped"
    assert TableClosed("empty") not in events and table.phase is Phase.LOBBY


def test_a_lone_joker_must_draw_and_forfeits_on_timeout():
    table, events = four_with_banker_1({1: "5S 2H", 2: "BJ 3H", 3: "2D 3C", 4: "AC 3D"})
    assert table.legal_actions(2) == (Move.DRAW, Move.LEAVE)
    with pytest.raises(errors.MustDraw, match=r"RULES\.md 1\.2"):
        table.apply(Stand(2))
    table.apply(Stand(3))
    timer = table.core.timer
    events = table.apply(Timeout(timer))
    assert DeadlinePassed(timer, (2, 4)) in events
    assert table.hand_of(2).status is Status.FORFEIT and table.hand_of(4).status is Status.STOOD
    events = table.apply(Stand(1))  # banker 7 points normal
    # the forfeit pays base × the banker's multiplier whatever the hands
    assert flows(events) == {2: -100, 3: -100, 4: -100, 1: 300}


def test_a_forfeit_against_a_muxi_banker_pays_once_the_base():
    table, _ = four_with_banker_1({1: "KS QH", 2: "SJ 3H", 3: "2D 3C", 4: "AC 3D"})
    table.apply(Stand(3))
    table.apply(Stand(4))
    events = table.apply(Timeout(table.core.timer)) + table.apply(Stand(1))
    assert flows(events) == {2: -100, 3: 100, 4: 100, 1: -100}


def test_the_banker_forfeits_a_forced_draw():
    table, _ = four_with_banker_1({1: "BJ QH", 2: "9S 5S", 3: "2D 3C", 4: "KC QD"})
    for person in (2, 3, 4):
        table.apply(Stand(person))
    assert table.legal_actions(1) == (Move.DRAW, Move.LEAVE)
    events = table.apply(Timeout(table.core.timer))
    # the banker loses to everyone: 4-point double 2×, 5-point normal 1×, muxi 1×
    assert flows(events) == {1: -400, 2: 200, 3: 100, 4: 100}


def test_tiangong_is_shown_and_stands_by_itself():
    table, events = four_with_banker_1({1: "2S 3H", 2: "9S KH", 3: "4D 4C", 4: "AC 3D"})
    shown = of_type(events, HandShown)
    assert [(h.person, h.kind, h.points) for h in shown] == [
        (2, Kind.TIANGONG, 9),
        (3, Kind.DOUBLE_TIANGONG, 8),
    ]
    assert table.pending() == (4,) and table.legal_actions(2) == (Move.LEAVE,)
    with pytest.raises(errors.CannotDraw):
        table.apply(Draw(2))


def test_a_players_invincible_is_shown_and_the_bankers_settles_at_once():
    table, events = four_with_banker_1({1: "2S 3H", 2: "BJ SJ", 3: "4D 3C", 4: "AC 3D"})
    assert HandShown(2, tuple(table.hand_of(2).cards), Kind.INVINCIBLE, 0) in events
    assert table.hand_of(2).status is Status.NATURAL and table.pending() == (3, 4)
    table, events = four_with_banker_1({1: "BJ SJ", 2: "9S 9H", 3: "4D 3C", 4: "AC 3D"})
    assert flows(events) == {2: -1_000, 3: -1_000, 4: -1_000, 1: 3_000}
    assert of_type(events, RoundOver)[0].reason == "banker_invincible" and table.phase is Phase.LOBBY


def test_a_natural_banker_stands_and_the_round_goes_to_the_showdown():
    table, _ = four_with_banker_1({1: "9S KH", 2: "2S 3H", 3: "4D 3C", 4: "AC 3D"})
    table.apply(Stand(2))
    table.apply(Stand(3))
    events = table.apply(Draw(4))
    assert of_type(events, RoundOver), "no banker turn for a tiangong banker"


def test_nobody_wants_to_be_banker_and_the_table_closes():
    table, _ = seat([1, 2, 3])
    table.apply(PassBanker(1))
    events = table.apply(Timeout(table.core.timer))  # 2 does not answer: a pass
    assert DeadlinePassed(events[0].timer, (2,)) in events
    events = table.apply(PassBanker(3))
    assert TableClosed("no_banker") in events and of_type(events, DeckRevealed)
    assert table.closed and table.legal_actions(1) == ()
    with pytest.raises(errors.TableIsClosed):
        table.apply(Join(9, 5_000))


def test_the_banker_choice_rotates_after_each_round():
    table, _ = seat([1, 2, 3])
    choose_banker(table, 2)
    while table.phase is not Phase.LOBBY:
        table.apply(Timeout(table.core.timer))
    events = []
    for person in (1, 2, 3):
        events = table.apply(Ready(person, Shuffle(DECK_54, "s")))
    assert of_type(events, BankerAsked) == [BankerAsked(3)]
    table.apply(PassBanker(3))
    assert table.asked_person() == 1


def test_leaving_during_the_banker_choice_is_free():
    table, _ = seat([1, 2, 3])
    events = table.apply(Leave(1))  # the person being asked
    assert not flows(events) and of_type(events, BankerAsked) == [BankerAsked(2)]
    events = table.apply(Leave(3))
    assert table.phase is Phase.LOBBY and of_type(events, DeckRevealed)


def test_refusals_name_their_rule_and_change_nothing():
    table, _ = four_with_banker_1({1: "2S 3H", 2: "2D 5H", 3: "4D 3C", 4: "AC 3D"})
    before = table.to_dict()
    cases = [
        (Draw(1), errors.NotYourTurn),
        (Stand(9), errors.NotSeated),
        (BeBanker(2), errors.WrongPhase),
        (Ready(2, Shuffle(DECK_54, "s")), errors.WrongPhase),
        (Timeout(table.core.timer - 1), errors.StaleTimer),
        (Join(2, 5_000), errors.AlreadySeated),
        (Join(5, 999), errors.NotEnoughCoins),
    ]
    for action, error in cases:
        with pytest.raises(error, match=r"RULES\.md \d"):
            table.apply(action)
        assert table.to_dict() == before
    table.apply(Stand(2))
    with pytest.raises(errors.AlreadyDecided):
        table.apply(Draw(2))
    table.apply(Join(5, 5_000))
    with pytest.raises(errors.TableFull):
        table.apply(Join(6, 5_000))
    with pytest.raises(errors.NotInRound):
        table.apply(Draw(5))


def test_someone_who_joins_during_a_round_plays_the_next():
    table, _ = seat([1, 2], 5_000, rigged([2, 1], {1: "2S 3H", 2: "2D 5H"}))
    choose_banker(table, 1)
    table.apply(Join(3, 5_000))
    assert table.legal_actions(3) == (Move.LEAVE,)
    events = table.apply(Leave(3))
    assert events == [Left(3)]


def test_people_under_1000_are_unseated_after_the_round():
    table, _ = seat([1, 2], {1: 5_000, 2: 1_005}, rigged([2, 1], {1: "9S 9H", 2: "2D 5H"}))
    choose_banker(table, 1)
    events = table.apply(Stand(2))
    assert Unseated(2, 985) in events and table.core.seat_of(2) is None
    assert table.phase is Phase.LOBBY


def test_the_lobby_expires():
    table = MuxiTable.new(lobby_seconds=60)
    events = table.apply(Join(1, 5_000))
    assert events[-1].seconds == 60
    events = table.apply(Timeout(events[-1].timer))
    assert TableClosed("lobby_expired") in events and table.closed


def test_cancel_returns_the_escrow():
    table, _ = four_with_banker_1({1: "2S 3H", 2: "2D 5H", 3: "4D 3C", 4: "AC 3D"})
    table.apply(Leave(2))
    events = table.apply(Cancel())
    assert flows(events) == {ESCROW: -1_000, 2: 1_000}
    assert TableClosed("cancelled") in events and of_type(events, DeckRevealed)


def test_a_saved_table_carries_on_exactly():
    table, _ = four_with_banker_1({1: "2S 3H", 2: "2D 5H", 3: "4D 3C", 4: "AC 3D"}, draws="9C 9D")
    table.apply(Draw(2))
    saved = json.loads(json.dumps(table.to_dict()))
    again = MuxiTable.from_dict(saved)
    assert again.to_dict() == table.to_dict()
    for person in (3, 4, 1):
        assert again.apply(Stand(person)) == table.apply(Stand(person))


def test_pro_rata_shares_are_rounded_down_and_the_remainder_goes_first():
    assert pro_rata(100, [30, 40]) == [30, 40]
    assert pro_rata(10, [10, 10, 10]) == [4, 3, 3]
    assert pro_rata(7, [20, 50]) == [2, 5]
    assert pro_rata(0, [5]) == [0]


def test_a_credit_from_outside_keeps_the_tables_balance_exact():
    table, _ = seat([1, 2], 1_000)
    table.apply(Credit(1, 2_000))
    assert balances(table) == {1: 3_000, 2: 1_000}
    with pytest.raises(errors.NotSeated):
        table.apply(Credit(9, 10))
    with pytest.raises(ValueError):
        table.apply(Credit(1, 0))
