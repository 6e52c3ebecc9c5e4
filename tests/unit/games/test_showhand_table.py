"""Showhand tables, scenario by scenario (RULES.md 2.2 to 2.5), with rigged decks.

The helpers at the top are shared with ``test_showhand_table_properties``.
"""

import json

import pytest

from games import errors
from games.cards import DECK_28, DECK_54, format_cards, parse_cards
from games.events import (
    ESCROW,
    DeadlinePassed,
    Dealt,
    DeckRevealed,
    Left,
    Paid,
    PayReason,
    Readied,
    RoundStarted,
    TableClosed,
    TimerStarted,
    Unseated,
)
from games.fairness import Shuffle, verify
from games.showhand import errors as showhand_errors
from games.showhand.betting import (
    AllIn,
    Bet,
    Call,
    Check,
    Fold,
    Move,
    Option,
    Raise,
    Spot,
    max_stake,
    round_caps,
)
from games.showhand.events import (
    BetMade,
    BettingRoundOver,
    BettingRoundStarted,
    Called,
    CardsDealt,
    Checked,
    EndReason,
    FaceUp,
    Folded,
    FoldedOnTimeout,
    GameOver,
    LeadChanged,
    LeadReason,
    Raised,
    ShowDown,
    Stakes,
    TurnOf,
    WentAllIn,
)
from games.showhand.hands import Category
from games.showhand.table import Phase, ShowhandTable
from games.table import Cancel, Join, Leave, Ready, Timeout
from tests.unit.games.showhand_helpers import balances, flows, of_type, play, refused, rigged, seat, totals

# Leads: card 2 -> 2 (A♠), card 3 -> 3 (pair of K), card 4 -> 1 (three 9s), card 5 -> 3 (three K).
# Show-down: 1 full house (9s over 8s) > 3 three kings > 2 a pair of aces.
HANDS = {1: "8D 9C 9H 9S 8S", 2: "AD AS 10D JC QC", 3: "8C KS KH QD KC"}
SEATS = [1, 2, 3]


def three():
    """People 1, 2, 3 with 2,000 each (B = 10, M = 1,000), dealt ``HANDS``."""
    return seat(SEATS, 2_000, rigged(SEATS, 1, HANDS))


def check_round(table):
    """Everyone checks once: the betting round after the current card ends."""
    card_no, events = table.card_no, []
    while table.phase is Phase.BETTING and table.card_no == card_no:
        events += table.apply(Check(table.turn))
    return events


# -- the deal and the lead -------------------------------------------------------------------------


def test_a_game_starts_with_stakes_lead_antes_and_two_cards():
    table = ShowhandTable.new()
    for person in SEATS:
        table.apply(Join(person, 2_000))
    shuffle = rigged(SEATS, 1, HANDS)
    events = table.apply(Ready(3, shuffle)) + table.apply(Ready(2, shuffle))
    assert table.phase is Phase.LOBBY and table.legal_actions(1) == (Option(Move.READY), Option(Move.LEAVE))
    events = table.apply(Ready(1, shuffle))
    assert events[0] == Readied(1)
    assert events[1] == RoundStarted(1, shuffle.commitment, 10)
    assert events[2] == Stakes(10, 1_000, (250, 500, 1_000, 1_000))
    assert events[3] == LeadChanged(1, LeadReason.FIRST_JOINED)  # the first to join, whoever pressed last
    assert events[4:7] == [Paid(p, ESCROW, 10, PayReason.ANTE) for p in SEATS]
    assert events[7:10] == [Dealt(p, (parse_cards(HANDS[p])[0],)) for p in SEATS]
    assert events[10] == CardsDealt(2, tuple(FaceUp(p, parse_cards(HANDS[p])[1]) for p in SEATS))
    assert events[11] == LeadChanged(2, LeadReason.BEST_FACE_UP)  # A♠
    assert events[12] == BettingRoundStarted(2, 250)
    assert events[13] == TurnOf(2, table.legal_actions(2)[:-1])
    assert isinstance(events[14], TimerStarted) and events[14].seconds == 30 and len(events) == 15
    assert (table.phase, table.card_no, table.lead, table.turn, table.pot) == (Phase.BETTING, 2, 2, 2, 30)
    assert (table.base, table.max_stake, table.cap, table.game_no) == (10, 1_000, 250, 1)
    assert balances(table) == dict.fromkeys(SEATS, 1_990) and totals(table) == dict.fromkeys(SEATS, 10)
    assert [str(c) for c in table.player(2).face_up] == ["AS"] and str(table.player(2).hole) == "AD"


def test_the_lead_after_every_card_deals_and_speaks_first():
    table, _ = three()
    events = check_round(table)  # 2, 3, 1 check
    assert of_type(events, Checked) == [Checked(2, 0, 10), Checked(3, 0, 10), Checked(1, 0, 10)]
    assert BettingRoundOver(2, 30) in events
    assert of_type(events, CardsDealt)[0].cards == (
        FaceUp(2, parse_cards("10D")[0]),
        FaceUp(3, parse_cards("KH")[0]),
        FaceUp(1, parse_cards("9H")[0]),
    )  # dealt from the lead, 2
    assert of_type(events, LeadChanged) == [LeadChanged(3, LeadReason.BEST_FACE_UP)]  # K K > 9 9
    assert table.turn == 3 and table.cap == 500
    events = check_round(table)
    assert [d.person for d in of_type(events, CardsDealt)[0].cards] == [3, 1, 2]
    assert of_type(events, LeadChanged) == [LeadChanged(1, LeadReason.BEST_FACE_UP)]  # 9 9 9
    assert table.turn == 1 and table.cap == 1_000
    events = check_round(table)
    assert of_type(events, LeadChanged) == [LeadChanged(3, LeadReason.BEST_FACE_UP)]  # K K K
    assert table.turn == 3 and table.card_no == 5


def test_show_down_the_best_hand_takes_the_pot():
    table, events = three()
    start = of_type(events, RoundStarted)[0]
    for _ in range(3):
        check_round(table)
    events = play(table, Bet(3, 60), Call(1), Fold(2))
    show = of_type(events, ShowDown)[0]
    assert show.winner == 1 and [hand.person for hand in show.hands] == [3, 1]  # from the lead
    assert [hand.category for hand in show.hands] == [Category.THREE_OF_A_KIND, Category.FULL_HOUSE]
    assert format_cards(show.hands[1].face_up) == "9C 9H 9S 8S" and str(show.hands[1].hole) == "8D"
    assert Paid(ESCROW, 1, 130, PayReason.POT) in events
    assert flows(events) == {3: -50, 1: 80, ESCROW: -30}
    over = of_type(events, GameOver)[0]
    assert (over.game_no, over.reason, over.winner, over.pot) == (1, EndReason.SHOWDOWN, 1, 130)
    results = {r.person: r for r in over.results}
    assert (results[1].net, results[2].net, results[3].net) == (70, -10, -60)
    assert results[1].category is Category.FULL_HOUSE and results[3].hole is not None
    assert results[2].folded and results[2].hole is None and results[2].category is None
    reveal = of_type(events, DeckRevealed)[0]
    assert verify(format_cards(reveal.deck), reveal.salt, start.commitment)
    assert balances(table) == {1: 2_070, 2: 1_990, 3: 1_940}
    assert table.phase is Phase.LOBBY and table.pot == 0 and table.players == ()


# -- betting ---------------------------------------------------------------------------------------


def test_bet_raise_call_and_fold():
    hands = {1: "8D 9C", 2: "AD AS 10D JC QC", 3: "8C KS KH QD KC"}
    table, _ = seat(SEATS, 2_000, rigged(SEATS, 1, hands))
    assert table.legal_actions(2)[:-1] == (
        Option(Move.CHECK, 10, 0),
        Option(Move.BET, 20, 10),
        Option(Move.BET, 30, 20),
        Option(Move.BET, 250, 240),
        Option(Move.FOLD, 10, 0),
    )
    assert table.legal_actions(3) == (Option(Move.LEAVE),)  # not 3's turn
    events = table.apply(Bet(2, 40))
    assert events[:2] == [Paid(2, ESCROW, 30, PayReason.BET), BetMade(2, 30, 40)]
    assert events[2] == TurnOf(3, table.legal_actions(3)[:-1])
    assert table.legal_actions(3)[:-1] == (
        Option(Move.CALL, 40, 30),
        Option(Move.RAISE, 50, 40),
        Option(Move.RAISE, 60, 50),
        Option(Move.RAISE, 250, 240),
        Option(Move.FOLD, 10, 0),
    )
    events = table.apply(Raise(3, 100))
    assert of_type(events, Raised) == [Raised(3, 90, 100)] and table.turn == 1
    events = table.apply(Fold(1))
    assert of_type(events, Folded) == [Folded(1, 0, 10)] and table.turn == 2  # 2 faces the raise
    refused(table, Call(2, 40), showhand_errors.StakeChanged)  # a "call 40" button from before the raise
    events = table.apply(Call(2, 100))
    assert of_type(events, Called) == [Called(2, 60, 100)]
    assert BettingRoundOver(2, 210) in events and table.card_no == 3
    assert of_type(events, CardsDealt)[0].cards == (
        FaceUp(2, parse_cards("10D")[0]),
        FaceUp(3, parse_cards("KH")[0]),
    )  # the folded get no more cards
    assert table.turn == 3 and totals(table) == {1: 10, 2: 100, 3: 100} and table.pot == 210
    refused(table, Check(1), showhand_errors.AlreadyFolded)


def test_a_bettor_speaks_again_after_a_later_bet():
    table, _ = three()
    play(table, Check(2), Bet(3, 20), Call(1))
    assert table.turn == 2 and table.card_no == 2  # 2 checked first, now faces 3's bet
    events = table.apply(Call(2))
    assert BettingRoundOver(2, 60) in events and table.card_no == 3


def test_every_refusal_names_its_rule_and_changes_nothing():
    table, _ = three()
    assert refused(table, Check(3), errors.NotYourTurn).rule
    refused(table, Call(2), showhand_errors.NothingToCall)
    refused(table, Raise(2, 30), showhand_errors.NothingToRaise)
    assert refused(table, Bet(2, 260), showhand_errors.CannotRaisePastCap).rule == "2.4"
    assert refused(table, Bet(2, 25), showhand_errors.BadAmount).rule == "2.4"
    refused(table, Bet(2, 10), showhand_errors.BadAmount)  # adds nothing
    refused(table, Bet(2, 0), showhand_errors.BadAmount)
    assert refused(table, AllIn(2), showhand_errors.AllInNotYet).rule == "2.4"
    table.apply(Bet(2, 100))
    refused(table, Check(3), showhand_errors.CannotCheck)
    refused(table, Bet(3, 200), showhand_errors.CannotBet)
    refused(table, Raise(3, 105), showhand_errors.BadAmount)
    refused(table, Raise(3, 100), showhand_errors.BadAmount)  # a raise adds at least B
    error = refused(table, Raise(3, 260), showhand_errors.CannotRaisePastCap)
    assert (error.code, error.rule) == ("past_cap", "2.4") and "RULES.md 2.4" in str(error)
    table.apply(Raise(3, 250))  # to the cap
    refused(table, Raise(1, 260), showhand_errors.CannotRaisePastCap)  # the cap is reached
    assert table.legal_actions(1)[:-1] == (Option(Move.CALL, 250, 240), Option(Move.FOLD, 10, 0))
    refused(table, Ready(1, Shuffle(DECK_28, "y")), errors.WrongPhase)
    table.apply(Join(4, 5_000))
    refused(table, Check(4), errors.NotInRound)
    refused(table, Check(5), errors.NotSeated)
    refused(table, Timeout(table.timer - 1), errors.StaleTimer)


def test_all_in_only_after_card_four_then_the_rest_is_dealt_without_betting():
    table, _ = three()
    for _ in (2, 3):
        assert Move.ALL_IN not in {o.move for o in table.legal_actions(table.turn)}
        refused(table, AllIn(table.turn), showhand_errors.AllInNotYet)
        check_round(table)
    assert table.card_no == 4 and table.turn == 1
    options = table.legal_actions(1)[:-1]
    assert options == (
        Option(Move.CHECK, 10, 0),
        Option(Move.BET, 20, 10),
        Option(Move.BET, 30, 20),
        Option(Move.ALL_IN, 1_000, 990),  # bet to the cap (M) is the all-in button
        Option(Move.FOLD, 10, 0),
    )
    events = table.apply(AllIn(1))
    assert of_type(events, WentAllIn) == [WentAllIn(1, 990, 1_000)]
    assert table.legal_actions(2)[:-1] == (Option(Move.CALL, 1_000, 990), Option(Move.FOLD, 10, 0))
    refused(table, AllIn(2), showhand_errors.CannotRaisePastCap)
    refused(table, Raise(2, 1_010), showhand_errors.CannotRaisePastCap)
    table.apply(Call(2))
    events = table.apply(Call(3))
    assert of_type(events, CardsDealt)[0].card_no == 5
    assert not of_type(events, BettingRoundStarted) and not of_type(events, TurnOf)
    assert of_type(events, ShowDown)[0].winner == 1
    assert Paid(ESCROW, 1, 3_000, PayReason.POT) in events
    assert balances(table) == {1: 4_000, 2: 1_000, 3: 1_000}


def test_everyone_at_m_by_a_plain_bet_also_skips_the_last_betting():
    table, _ = three()
    check_round(table)
    check_round(table)
    events = play(table, Bet(1, 1_000), Call(2))  # a bet to M is the same as all-in
    assert of_type(events, BetMade) == [BetMade(1, 990, 1_000)]
    events = table.apply(Fold(3))
    assert of_type(events, CardsDealt)[0].card_no == 5 and not of_type(events, TurnOf)
    assert of_type(events, GameOver)[0].winner == 1


def test_all_in_on_the_fifth_card_goes_straight_to_the_show_down():
    table, _ = three()
    for _ in range(3):
        check_round(table)
    events = play(table, AllIn(3), Fold(1), Call(2))
    assert of_type(events, ShowDown)[0].winner == 3  # three kings beat a pair of aces
    assert Paid(ESCROW, 3, 2_010, PayReason.POT) in events


# -- endings ---------------------------------------------------------------------------------------


def test_the_last_one_standing_takes_the_pot_without_showing():
    table, _ = three()
    events = play(table, Bet(2, 30), Fold(3), Fold(1))
    assert not of_type(events, ShowDown)
    over = of_type(events, GameOver)[0]
    assert (over.reason, over.winner, over.pot) == (EndReason.LAST_STANDING, 2, 50)
    assert all(result.hole is None for result in over.results)
    assert flows(events) == {ESCROW: -30, 2: 30}  # bets 20 more, takes the 50
    assert balances(table) == {1: 1_990, 2: 2_020, 3: 1_990}


def test_a_timeout_folds_and_only_timeouts_end_the_game():
    table, _ = three()
    timer = table.timer
    events = table.apply(Timeout(timer))
    assert events[:2] == [DeadlinePassed(timer, (2,)), FoldedOnTimeout(2, 0, 10)] and table.turn == 3
    refused(table, Timeout(timer), errors.StaleTimer)
    events = table.apply(Timeout(table.timer))
    assert of_type(events, GameOver)[0].reason is EndReason.LAST_STANDING
    assert of_type(events, GameOver)[0].winner == 1 and table.phase is Phase.LOBBY


def test_an_escape_ends_the_game_and_the_lead_takes_the_pot():
    table, _ = three()
    table.apply(Bet(2, 40))
    events = table.apply(Leave(1))  # 1 escapes; 2 leads
    assert events[0] == Left(1, escaped=True)
    assert flows(events) == {ESCROW: -60, 2: 60}
    over = of_type(events, GameOver)[0]
    assert (over.reason, over.winner) == (EndReason.ESCAPE, 2)
    assert {r.person: r.escaped for r in over.results} == {1: True, 2: False, 3: False}
    assert table.core.seat_of(1) is None and balances(table) == {2: 2_020, 3: 1_990}


def test_when_the_lead_escapes_the_best_face_up_cards_take_the_pot():
    table, _ = three()
    events = table.apply(Leave(2))  # the lead (A♠) escapes: K♠ beats 9♣
    assert of_type(events, GameOver)[0].winner == 3 and flows(events) == {ESCROW: -30, 3: 30}


def test_when_the_lead_has_folded_the_best_face_up_cards_take_the_pot():
    table, _ = three()
    events = play(table, Fold(2), Check(3), Leave(1))
    assert of_type(events, GameOver)[0].winner == 3


def test_leaving_after_folding_is_not_an_escape():
    table, _ = three()
    events = play(table, Fold(2), Leave(2))
    assert events[-1] == Left(2) and table.phase is Phase.BETTING and table.pot == 30
    events = play(table, Check(3), Check(1))
    assert of_type(events, CardsDealt)[0].card_no == 3 and table.player(2).folded


def test_leaving_the_lobby_is_free():
    table = ShowhandTable.new()
    play(table, Join(1, 2_000), Join(2, 2_000))
    events = table.apply(Leave(2))
    assert events[0] == Left(2) and not flows(events) and isinstance(events[1], TimerStarted)
    events = table.apply(Leave(1))
    assert events == [Left(1), TableClosed("empty")] and table.closed
    refused(table, Join(1, 2_000), errors.TableIsClosed)


def test_cancel_gives_the_escrow_back():
    table, _ = three()
    play(table, Bet(2, 40), Raise(3, 100))
    events = table.apply(Cancel())
    assert flows(events) == {ESCROW: -150, 1: 10, 2: 40, 3: 100}
    assert all(p.reason is PayReason.REFUND for p in of_type(events, Paid))
    assert of_type(events, DeckRevealed) and events[-1] == TableClosed("cancelled")
    assert balances(table) == dict.fromkeys(SEATS, 2_000) and table.legal_actions(1) == ()


def test_people_under_1000_are_unseated_after_a_game():
    table, _ = seat(SEATS, {1: 1_000, 2: 1_005, 3: 5_000}, rigged(SEATS, 1, HANDS))
    assert (table.base, table.max_stake) == (10, 1_000)
    events = play(table, Fold(2), Fold(3))
    assert of_type(events, Unseated) == [Unseated(2, 995)]
    assert balances(table) == {1: 1_020, 3: 4_990} and table.phase is Phase.LOBBY


def test_the_next_game_is_led_by_the_last_winner():
    table, _ = three()
    events = play(table, Fold(2), Bet(3, 20), Fold(1))
    assert of_type(events, GameOver)[0].winner == 3
    shuffle = Shuffle(DECK_28, "next")
    events = play(table, Ready(1, shuffle), Ready(2, shuffle), Ready(3, shuffle))
    assert LeadChanged(3, LeadReason.LAST_WINNER) in events and table.game_no == 2
    assert [d.person for d in of_type(events, Dealt)] == [3, 1, 2]  # dealt from the lead
    assert of_type(events, Paid) == [Paid(p, ESCROW, 10, PayReason.ANTE) for p in (3, 1, 2)]


def test_a_later_lead_deals_from_the_winner_and_skips_a_departed_winner():
    table, _ = seat([1, 2, 3, 4], 2_000, Shuffle(DECK_28, "x"))
    while table.phase is Phase.BETTING:
        events = table.apply(Fold(table.turn))
    winner = of_type(events, GameOver)[0].winner
    shuffle = Shuffle(DECK_28, "y")
    events = play(table, *[Ready(p, shuffle) for p in (1, 2, 3, 4)])
    assert LeadChanged(winner, LeadReason.LAST_WINNER) in events
    order = [d.person for d in of_type(events, Dealt)]
    assert order[0] == winner and sorted(order) == [1, 2, 3, 4]
    while table.phase is Phase.BETTING:
        events = table.apply(Fold(table.turn))
    winner = of_type(events, GameOver)[0].winner
    table.apply(Leave(winner))
    after = {1: 2, 2: 3, 3: 4, 4: 1}[winner]
    events = play(table, *[Ready(p, shuffle) for p in (1, 2, 3, 4) if p != winner])
    assert LeadChanged(after, LeadReason.NEXT_SEAT) in events


# -- the lobby and saving --------------------------------------------------------------------------


def test_the_lobby_rules():
    table = ShowhandTable.new()
    assert table.legal_actions(1) == (Option(Move.JOIN),)
    play(table, *[Join(p, 2_000) for p in (1, 2, 3, 4)])
    refused(table, Join(5, 2_000), errors.TableFull)
    refused(table, Join(1, 2_000), errors.AlreadySeated)
    refused(table, Check(1), errors.WrongPhase)
    with pytest.raises(ValueError):
        table.apply(Ready(1, Shuffle(DECK_54, "x")))
    shuffle = Shuffle(DECK_28, "x")
    play(table, Ready(1, shuffle), Ready(2, shuffle), Ready(3, shuffle))
    refused(table, Ready(1, shuffle), errors.AlreadyReady)
    table.apply(Leave(4))  # now everyone seated is ready, but nobody pressed last
    assert Option(Move.READY) in table.legal_actions(1)
    events = table.apply(Ready(1, shuffle))  # pressing again starts the game
    assert of_type(events, RoundStarted) and table.phase is Phase.BETTING


def test_a_lobby_that_expires_closes_the_table():
    table = ShowhandTable.new()
    table.apply(Join(1, 2_000))
    events = table.apply(Timeout(table.timer))
    assert events == [DeadlinePassed(1, (1,)), TableClosed("lobby_expired")] and table.closed


def test_someone_seated_during_a_game_waits_for_the_next():
    table, _ = three()
    table.apply(Join(4, 5_000))
    assert table.legal_actions(4) == (Option(Move.LEAVE),) and table.player(4) is None
    while table.phase is Phase.BETTING:
        table.apply(Fold(table.turn))
    shuffle = Shuffle(DECK_28, "z")
    events = play(table, *[Ready(p, shuffle) for p in (1, 2, 3, 4)])
    assert len(of_type(events, Dealt)) == 4


def test_a_table_saved_mid_betting_comes_back_exactly():
    table, _ = three()
    play(table, Check(2), Bet(3, 50))
    saved = json.loads(json.dumps(table.to_dict()))
    copy = ShowhandTable.from_dict(saved)
    assert copy.to_dict() == table.to_dict() and copy.version == table.version
    assert copy.legal_actions(1) == table.legal_actions(1) and copy.timer == table.timer
    actions = [Raise(1, 100), Call(2), Call(3), Check(3), Check(1), Check(2)]
    assert play(copy, *actions) == play(table, *actions)
    assert copy.to_dict() == table.to_dict()


# -- stakes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lowest", "base", "stake", "caps"),
    [
        (1_000, 10, 1_000, (250, 500, 1_000, 1_000)),
        (1_234, 10, 1_000, (250, 500, 1_000, 1_000)),  # 100 × B
        (4_550, 100, 4_500, (1_100, 2_200, 4_500, 4_500)),  # rounded down to multiples of B
        (12_345, 100, 10_000, (2_500, 5_000, 10_000, 10_000)),
        (57_000, 1_000, 57_000, (14_000, 28_000, 57_000, 57_000)),
    ],
)
def test_the_stakes_of_rules_2_3(lowest, base, stake, caps):
    _, events = seat([1, 2], {1: lowest, 2: 10_000_000})
    assert of_type(events, Stakes) == [Stakes(base, stake, caps)]
    assert max_stake([lowest, 10_000_000], base) == stake and round_caps(stake, base) == caps


def test_the_spot_offers_no_duplicates_and_only_what_it_accepts():
    spot = Spot(base=10, stake=1_000, card_no=2, opening=240, largest=240, own=240)
    assert spot.options() == (
        Option(Move.CHECK, 240),
        Option(Move.BET, 250, 10),  # B, 2B and the cap coincide
        Option(Move.FOLD, 240),
    )
    assert spot.new_total(Bet(1, 250)) == 250
