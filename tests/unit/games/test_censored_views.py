"""What the engines tell a view instead of the view working it out: who is awaited, what each
viewer may see (PokerKit's censored hole cards), whether a round was shown down, and why a
show-down went as it did (RULES.md 1.5, 2.1, 2.4, 2.5)."""

import pytest

import games
from games import muxi, showhand
from games.cards import parse_cards
from games.muxi import BankerChosen, BeBanker, MuxiTable, PassBanker, RoundEnd, Stand, Status
from games.showhand import (
    Check,
    DecidedBy,
    EndReason,
    FoldedOnTimeout,
    GameOver,
    ShowDown,
    Timeout,
    decided_by,
    evaluate,
    verdict,
)
from games.table import Table
from tests.unit.games.muxi_helpers import choose_banker, of_type, rigged, seat
from tests.unit.games.showhand_helpers import play
from tests.unit.games.showhand_helpers import rigged as rigged_showhand
from tests.unit.games.showhand_helpers import seat as seat_showhand

# -- muxi -------------------------------------------------------------------------------------------


def test_muxi_awaits_the_person_asked_then_the_players_then_the_banker():
    # Banker 3: the deal goes 1, 2, then the banker.
    table, _ = seat([1, 2, 3], 5_000, rigged([1, 2, 3], {1: "3H 4C", 2: "5S 6H", 3: "2C 3D"}))
    assert table.awaited() == (table.asked_person(),) == (1,)
    table.apply(PassBanker(1))
    assert table.awaited() == (2,) and table.declined_bank(1) and not table.declined_bank(2)
    table.apply(PassBanker(2))
    assert of_type(table.apply(BeBanker(3)), BankerChosen) == [BankerChosen(3)]
    assert table.declined_bank(2) and not table.declined_bank(3)
    assert table.awaited() == (1, 2) and table.card_holders() == (1, 2, 3)
    table.apply(Stand(1))
    assert table.awaited() == (2,)
    table.apply(Stand(2))
    assert table.awaited() == (3,)  # the banker, once the players have chosen
    table.apply(Stand(3))
    assert table.awaited() == () and table.card_holders() == ()


def test_muxi_each_viewer_sees_their_own_cards_and_the_shown_naturals_only():
    # 2 holds a natural (9 points: shown at once), 3 a lone joker (must draw: looks like waiting).
    table, _ = seat([1, 2, 3], 5_000, rigged([2, 3, 1], {1: "3H 4C", 2: "4S 5H", 3: "BJ 3D"}))
    choose_banker(table, 1)
    spectator = {hand.person: hand for hand in table.seen_by(None)}
    assert spectator[1].is_banker and spectator[1].cards == (None, None)
    assert spectator[2].shown and spectator[2].cards == tuple(parse_cards("4S 5H"))
    assert spectator[3].cards == (None, None) and spectator[3].status is Status.WAITING
    assert table.hand_of(3).status is Status.FORCED  # the engine knows; the view is not told
    own = {hand.person: hand for hand in table.seen_by(3)}
    assert own[3].cards == tuple(parse_cards("BJ 3D")) and own[1].cards == (None, None)
    assert [hand.person for hand in table.seen_by(1)][-1] == 1  # the banker's hand comes last


def test_muxi_round_ends_say_whether_the_hands_were_shown():
    assert RoundEnd.SHOWDOWN.shown_down and RoundEnd.BANKER_INVINCIBLE.shown_down
    assert not RoundEnd.BANKER_ESCAPED.shown_down and not RoundEnd.PLAYERS_ESCAPED.shown_down
    assert RoundEnd("showdown") is RoundEnd.SHOWDOWN  # read back from a saved string


# -- showhand ---------------------------------------------------------------------------------------

HANDS = {1: "8D 9C 9H 9S 8S", 2: "AD AS 10D JC QC", 3: "8C KS KH QD KC"}


def three():
    return seat_showhand([1, 2, 3], 2_000, rigged_showhand([1, 2, 3], 1, HANDS))


def test_showhand_awaits_whoever_speaks_and_hides_every_other_face_down_card():
    table, _ = three()
    assert table.awaited() == (table.turn,) == (2,) and table.card_holders() == (1, 2, 3)
    for viewer in (None, 1, 2, 3, 99):
        for seen in table.seen_by(viewer):
            assert seen.has_hole and seen.face_up == tuple(table.player(seen.person).face_up)
            assert seen.hole == (table.player(seen.person).hole if seen.person == viewer else None)


def test_a_timeout_fold_is_its_own_event_and_still_a_fold():
    table, _ = three()
    events = table.apply(Timeout(table.timer))
    folded = of_type(events, FoldedOnTimeout)
    assert folded == [FoldedOnTimeout(2, 0, 10)]


def test_the_show_down_names_the_runner_up_and_what_decided():
    table, _ = three()
    while table.phase.value == "betting":
        events = play(table, Check(table.turn))
    show = of_type(events, ShowDown)[0]
    assert (show.winner, show.runner_up, show.decided_by) == (1, 3, DecidedBy.CATEGORY)
    over = of_type(events, GameOver)[0]
    assert over.reason.shown_down and not EndReason.LAST_STANDING.shown_down
    assert not EndReason.ESCAPE.shown_down


@pytest.mark.parametrize(
    ("winner", "runner_up", "why"),
    [
        ("AS KS QS JS 10S", "AH AD AC AS KH", DecidedBy.CATEGORY),
        ("AH KH QH JH 9H", "KS QS JS 9S 8S", DecidedBy.LEAD_RANK),  # flushes: the highest card
        ("AS KH QD JC 9H", "AH KS QS JS 9S", DecidedBy.LEAD_SUIT),  # both ace high: A♠ > A♥
        ("KS KH 9C 9D 8H", "KC KD 8S 8C AH", DecidedBy.LOW_PAIR),  # kings, then nines over eights
        ("KS KH 9C 9D 8H", "KC KD 9S 9H AH", DecidedBy.LEAD_SUIT),  # the same pairs: K♠ > K♣
        ("QS QH QC 8D 8H", "JS JH JC AD AH", DecidedBy.LEAD_RANK),  # full houses: the three
        ("10S 10H AC KD 8H", "10C 10D AH KS QH", DecidedBy.LEAD_SUIT),  # one pair: its best suit
    ],
)
def test_what_decided_between_two_hands(winner, runner_up, why):
    win, lose = evaluate(parse_cards(winner)), evaluate(parse_cards(runner_up))
    assert decided_by(win, lose) is why
    judged = verdict([lose, win])
    assert judged is not None and (judged.winner, judged.runner_up, judged.decided_by) == (win, lose, why)
    with pytest.raises(ValueError, match="stronger"):
        decided_by(lose, win)


def test_a_verdict_needs_two_hands():
    assert verdict([evaluate(parse_cards("AS KH QD JC 9H"))]) is None


def test_the_unions_name_every_action_and_event_of_either_game():
    assert BeBanker in games.Action.__args__ and Check in games.Action.__args__
    assert ShowDown in games.Event.__args__ and BankerChosen in games.Event.__args__
    assert Table[muxi.MuxiAction, muxi.MuxiEvent] in MuxiTable.__orig_bases__
    assert Table[showhand.ShowhandAction, showhand.ShowhandEvent] in showhand.ShowhandTable.__orig_bases__
