"""Both views (the chat's and the Mini App's) go through the game kinds and ask the engine: who
is awaited, what a viewer may see, why a show-down went as it did; a timed-out fold is one saved
move of the round, read in one place, and a table saved by an older bot reads the same."""

from __future__ import annotations

import json

import pytest

from bot.display.game_kinds import KINDS
from bot.display.i18n import t
from bot.display.views import acted
from bot.display.views.common import Rendering
from bot.display.views.rules import rules_text
from bot.model import callbacks
from bot.model.live_table import Acted, LiveTable, Turn, ViewState, view_from_plain
from bot.model.shown import Shown
from bot.web.miniapp.view import HIDDEN, SPECTATOR, table_view, viewer_of
from games import muxi, showhand
from games.codec import to_plain
from games.showhand import Timeout
from tests.unit.games.muxi_helpers import choose_banker
from tests.unit.games.muxi_helpers import rigged as rigged_muxi
from tests.unit.games.muxi_helpers import seat as seat_muxi
from tests.unit.games.showhand_helpers import rigged as rigged_showhand
from tests.unit.games.showhand_helpers import seat as seat_showhand

SCREEN = Rendering("en", when=lambda moment: "21:05", bot_username="paiju_bot")
HANDS = {1: "8D 9C 9H 9S 8S", 2: "AD AS 10D JC QC", 3: "8C KS KH QD KC"}


def live_of(game: str, engine, *, seen: bool = True) -> LiveTable:
    """The table, its round's message shown in the group already (``seen``) or still on its way."""
    live = LiveTable(7, -100, game, engine, ViewState(names={1: "Ann", 2: "Bob", 3: "Cy"}), saved={})
    if seen:
        live.shown["table"] = Shown("text", "buttons", round_no=live.round_no if live.in_round else 0)
    return live


def note(live: LiveTable, events) -> None:
    kind = KINDS[live.game]
    for event in events:
        kind.note_event(live, event)
        if (found := kind.round_results(live, event)) is not None:
            live.view.results, live.view.results_round = found, live.round_no


def showhand_live() -> LiveTable:
    table, _ = seat_showhand([1, 2, 3], 2_000, rigged_showhand([1, 2, 3], 1, HANDS))
    return live_of("showhand", table)


def muxi_live() -> LiveTable:
    # 2 holds a natural (shown at once), 3 a lone joker (must draw: told as waiting).
    table, _ = seat_muxi([1, 2, 3], 5_000, rigged_muxi([2, 3, 1], {1: "3H 4C", 2: "4S 5H", 3: "BJ 3D"}))
    choose_banker(table, 1)
    return live_of("muxi", table)


def test_the_mini_app_deals_nobody_a_card_before_the_group_has_seen_the_round():
    """The round's table message (its commitment) still on its way to the group: a player's page
    shows the table as a spectator's, with no deadline running; once it is seen, their own cards."""
    table, _ = seat_muxi([1, 2, 3], 5_000, rigged_muxi([2, 3, 1], {1: "3H 4C", 2: "4S 5H", 3: "BJ 3D"}))
    choose_banker(table, 1)
    live = live_of("muxi", table, seen=False)
    live.turn = Turn(live.engine.core.timer, deadline=100.0)
    waiting = table_view(live, 3, "en", 0.0)
    assert waiting["deadline"] is None and waiting["me"] == 3 and waiting["dealing"]
    assert "发牌中" in table_view(live, 3, "zh-hans", 0.0)["strings"]["dealing"]
    assert {seat["person"]: seat["cards"] for seat in waiting["seats"]}[3] == [HIDDEN, HIDDEN]
    live.shown["table"] = Shown("text", "buttons", round_no=live.round_no)
    dealt = table_view(live, 3, "en", 0.0)
    assert dealt["deadline"] == 100.0 and not dealt["dealing"] and not dealt["no_dm"]
    live.view.dm_failed.append(3)
    assert table_view(live, 3, "en", 0.0)["no_dm"] and not table_view(live, 2, "en", 0.0)["no_dm"]
    assert {seat["person"]: seat["cards"] for seat in dealt["seats"]}[3] == ["BJ", "3D"]


# -- what people did, as saved ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move", "paid", "timed_out"),
    [
        ("draw", "draw", 0, False),
        ("call:100", "call", 100, False),
        ("timeout", "", 0, True),
        ("timeout_fold:0", "fold", 0, True),  # as older bots saved a fold the clock made
    ],
)
def test_a_last_move_saved_by_an_older_bot_reads_back(text, move, paid, timed_out):
    view = view_from_plain({"names": {"2": "Bob"}, "acted": {"2": text}})
    assert view.moves == [Acted(2, move, paid, timed_out=timed_out)]
    assert acted.acted(view, 2) == Acted(2, move, paid, timed_out=timed_out)


def test_the_round_s_moves_are_saved_in_order_and_the_clock_s_fold_is_told_as_a_timeout():
    live = showhand_live()
    events = live.engine.apply(Timeout(live.engine.timer))
    note(live, events)
    saved = view_from_plain(json.loads(json.dumps(to_plain(live.view))))
    assert saved.moves == live.view.moves
    assert saved.moves[-1] == Acted(2, "fold", 0, 10, timed_out=True)  # (10: the ante they had put in)
    assert acted.folded_on_timeout(saved, 2)
    assert "timed out" in KINDS["showhand"].table_text(live, SCREEN).lower()
    seat = next(seat for seat in table_view(live, 2, "en", 0.0)["seats"] if seat["person"] == 2)
    assert seat["status"] == t("en", "showhand.timed_out")


def test_a_table_saved_by_an_older_bot_still_shows_a_timed_out_fold():
    live = showhand_live()
    note(live, live.engine.apply(Timeout(live.engine.timer)))
    fresh = live_of("showhand", showhand.ShowhandTable.from_dict(live.engine.to_dict()))
    old = {key: value for key, value in to_plain(live.view).items() if key != "moves"}
    fresh.view = view_from_plain(old | {"acted": {"2": "timeout_fold:0"}})  # as read from an older database
    assert KINDS["showhand"].table_text(fresh, SCREEN) == KINDS["showhand"].table_text(live, SCREEN)
    dm = KINDS["showhand"].dm(fresh, 2, SCREEN, "Group")
    assert dm is not None and "Time ran out" in dm[0]


def test_a_raise_names_what_it_puts_in_and_the_total_it_reaches_in_this_betting_round():
    """Issue 49, point 1: the round's total counts from the round's opening (the ante, then where the
    last round left everyone), taken from the events in order even when one batch spans rounds."""
    table, events = seat_showhand([1, 2], 2_000, rigged_showhand([1, 2], 1, HANDS))
    live = live_of("showhand", table)
    note(live, events)
    base, first = table.base, table.turn
    assert first is not None
    second = 3 - first
    # Round 1: a bet and a call, in one batch with the next round's opening.
    batch = table.apply(showhand.Bet(first, 3 * base)) + table.apply(showhand.Call(second))
    note(live, batch)
    assert live.view.opening == 3 * base
    # Round 2: a bet, a raise on it, a raise back.
    lead = table.turn
    assert lead is not None
    other = 3 - lead
    for action in (
        showhand.Bet(lead, 5 * base),
        showhand.Raise(other, 7 * base),
        showhand.Raise(lead, 9 * base),
    ):
        note(live, table.apply(action))
    bet, raised, reraised = live.view.moves[-3:]
    assert (bet.paid, bet.round_total) == (2 * base, 2 * base)
    assert (raised.paid, raised.total, raised.round_total) == (4 * base, 7 * base, 4 * base)
    assert (reraised.paid, reraised.total, reraised.round_total) == (4 * base, 9 * base, 6 * base)
    told = KINDS["showhand"].table_text(live, SCREEN)
    assert f"raises {4 * base} (to {6 * base} this round)" in told, told
    # A move saved by an older bot (no round total) still reads: the game's total stands in.
    saved = to_plain(live.view)
    assert isinstance(saved, dict) and isinstance(saved["moves"], list)
    for move in saved["moves"]:
        assert isinstance(move, dict)
        move.pop("round_total")
    saved.pop("opening")
    old = view_from_plain(json.loads(json.dumps(saved)))
    assert old.opening == 0 and old.moves[-1] == Acted(lead, "raise", 4 * base, 9 * base)


# -- who is awaited, who holds cards ---------------------------------------------------------------------


def test_acting_and_private_people_come_from_the_engine():
    live = muxi_live()
    assert KINDS["muxi"].acting(live) == list(live.engine.awaited()) == [3]  # 2 stands on a natural
    assert KINDS["muxi"].private_people(live) == [2, 3, 1]
    live = showhand_live()
    assert KINDS["showhand"].acting(live) == [2] and KINDS["showhand"].private_people(live) == [1, 2, 3]


# -- the Mini App, through the kinds ---------------------------------------------------------------------


@pytest.mark.parametrize("make", [muxi_live, showhand_live])
def test_the_mini_app_sends_only_the_viewer_s_own_hidden_cards(make):
    live = make()
    for viewer in (1, 2, 3, SPECTATOR):
        view = table_view(live, viewer_of(live, viewer), "en", 0.0)
        wire = json.dumps(view)
        for seat in view["seats"]:
            if seat["person"] != viewer and not (live.game == "muxi" and seat["person"] == 2):
                assert seat["cards"] and HIDDEN in seat["cards"], seat
        assert '"salt"' not in wire and "deck" not in view


def test_the_mini_app_tells_a_forced_draw_as_waiting_and_shows_a_natural():
    live = muxi_live()
    seats = {seat["person"]: seat for seat in table_view(live, SPECTATOR, "en", 0.0)["seats"]}
    assert seats[1]["banker"] and seats[1]["cards"] == [HIDDEN, HIDDEN]
    assert seats[2]["cards"] == ["4S", "5H"] and seats[2]["hand"]
    assert seats[3]["cards"] == [HIDDEN, HIDDEN] and seats[3]["turn"]
    assert seats[3]["status"] == t("en", "muxi.status.waiting")  # not "must draw": the joker stays secret
    own = {seat["person"]: seat for seat in table_view(live, 3, "en", 0.0)["seats"]}
    assert own[3]["cards"] == ["BJ", "3D"]
    assert {action["action"] for action in table_view(live, 3, "en", 0.0)["actions"]} == {"draw", "leave"}


def test_a_show_down_s_results_name_the_winner_s_edge_from_the_engine():
    live = showhand_live()
    engine = live.engine
    while engine.phase is showhand.Phase.BETTING:
        note(live, engine.apply(showhand.Check(engine.turn)))
    text = KINDS["showhand"].table_text(live, SCREEN)
    assert "Full house beats Three of a kind" in text, text
    lines = table_view(live, SPECTATOR, "en", 0.0)["results"]["lines"]
    assert {line["person"]: line["hole"] for line in lines} == {1: True, 2: True, 3: True}


def test_a_muxi_round_ended_by_an_escape_shows_no_hand():
    live = muxi_live()
    note(live, live.engine.apply(muxi.Leave(1)))  # the banker escapes
    assert live.view.end_reason == "banker_escaped"
    for line in table_view(live, SPECTATOR, "en", 0.0)["results"]["lines"]:
        assert line["cards"] == [] and line["net_text"]


# -- buttons and rules -------------------------------------------------------------------------------


def test_every_engine_move_has_one_button_code_and_the_codes_never_change():
    assert {callbacks.muxi_code(move).value for move in muxi.Move} == {
        "join", "leave", "ready", "banker", "pass", "draw", "stand"
    }  # fmt: skip
    assert {callbacks.showhand_code(move).value for move in showhand.Move} == {
        "join", "leave", "ready", "check", "bet", "call", "raise", "allin", "fold"
    }  # fmt: skip
    assert set(KINDS["muxi"].moves) == {"banker", "pass", "draw", "stand"}
    assert set(KINDS["showhand"].moves) == {"check", "bet", "call", "raise", "allin", "fold"}
    assert KINDS["showhand"].moves["raise"](1, "300") == showhand.Raise(1, 300)


@pytest.mark.parametrize("game", ["muxi", "showhand"])
def test_rules_list_each_game_s_hands(game):
    text = rules_text(game, "en")
    assert len(text.splitlines()) >= 10
