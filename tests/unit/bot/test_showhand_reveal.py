"""Which showhand actions deal cards with nobody left to bet (an all-in everyone answered), read from
the real engine's events: those the table reveals one card at a time (issue 49, point 4)."""

from bot.display.views.showhand_reveal import run_out
from games.showhand import AllIn, Bet, Call, Check, Fold
from tests.unit.games.test_showhand_table import check_round, three


def test_an_all_in_answered_after_card_four_runs_out_card_five():
    table, _ = three()
    check_round(table)
    assert run_out(check_round(table)) is None, "card 4 dealt with betting after it"
    assert run_out(table.apply(AllIn(table.turn))) is None
    assert run_out(table.apply(Call(table.turn))) is None, "one still to answer"
    assert run_out(table.apply(Call(table.turn))) == 4, "everyone answered: four cards each, then 5"


def test_a_plain_bet_to_the_most_answered_runs_out_too():
    table, _ = three()
    check_round(table)
    check_round(table)
    table.apply(Bet(table.turn, 1_000))
    table.apply(Call(table.turn))
    assert run_out(table.apply(Fold(table.turn))) == 4


def test_a_show_down_after_the_last_betting_or_a_fold_out_deals_nothing_more():
    table, _ = three()
    for _ in range(3):
        check_round(table)
    assert run_out(check_round(table)) is None, "the show-down after card 5's betting"
    table, _ = three()
    table.apply(Check(table.turn))
    table.apply(Bet(table.turn, 30))
    assert run_out(table.apply(Fold(table.turn)) + table.apply(Fold(table.turn))) is None
