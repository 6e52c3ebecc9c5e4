"""What the Mini App sends each person (bot/web/miniapp/view.py): never a hidden card of another
person, never the deck or its salt, on the serialized JSON (what goes on the wire)."""

import json

from bot.web.miniapp.view import HIDDEN, page_strings, table_view
from faketg.harness import GROUP, PEOPLE
from games import muxi, showhand
from storage.jsontext import compact_json
from tests.component.decks import stack

SPECTATOR = 6


def wire(bot, viewer):
    live = bot.runtime.tables.get(GROUP)
    return json.dumps(table_view(live, viewer, "zh-hans", 0.0), ensure_ascii=False)


def hidden_cards(live):
    """Each person's cards nobody else may see now."""
    engine = live.engine
    if isinstance(engine, muxi.MuxiTable):
        shown = {
            hand.person
            for hand in engine.state.hands
            if hand.status is muxi.Status.NATURAL and hand.person != engine.state.banker
        }
        return {hand.person: list(hand.cards) for hand in engine.state.hands if hand.person not in shown}
    return {player.person: [player.hole] for player in engine.players if player.hole is not None}


def assert_no_leak(bot):
    live = bot.runtime.tables.get(GROUP)
    hidden = hidden_cards(live)
    public: set[str] = set()
    shuffle = live.engine.core.shuffle
    dealt = live.engine.core.dealt
    for viewer in [*PEOPLE, SPECTATOR]:
        text = wire(bot, viewer)
        if shuffle is not None:
            assert shuffle.salt not in text, "the salt stays on the server"
            rest = [card.token for card in shuffle.deck[dealt:]]
            assert '"deck"' not in text and " ".join(rest) not in text
        for owner, cards in hidden.items():
            for card in cards:
                quoted = json.dumps(card.token)
                if owner == viewer:
                    assert quoted in text, "a person sees their own hidden cards"
                elif card.token not in public:
                    assert quoted not in text, f"{viewer} sees {owner}'s hidden {card.token}"
        seats = json.loads(text)["seats"]
        for seat in seats:
            if seat["person"] != viewer and seat["person"] in hidden and seat["cards"] != []:
                assert HIDDEN in seat["cards"], seat


def clock_label(bot, viewer=SPECTATOR):
    """What the Mini App's countdown says it is for: its words for the view's phase."""
    view = json.loads(wire(bot, viewer))
    return view["strings"][f"clock.{view['phase']}"]


def test_the_countdown_says_what_is_being_decided_in_every_phase_and_language():
    phases = {phase.value for phase in (*muxi.Phase, *showhand.Phase)} - {"closed"}
    for language in ("zh-hans", "zh-hant", "en"):
        strings = page_strings(language)
        assert all(strings.get(f"clock.{phase}") for phase in phases), (language, strings)
    assert page_strings("en")["clock.banker"] == "Banker call"
    assert page_strings("zh-hant")["clock.draw"] == "補牌：補或不補"


async def test_muxi_views_show_only_what_each_person_may_see(bot):
    d = bot.driver
    stack(bot, [2, 3, 1], {1: "3H 4H", 2: "5S 6H", 3: "9S KS"}, "7S 8H 2C")
    await d.send(1, GROUP, "/newgame muxi")
    await d.press(2, GROUP, "加入")
    await d.press(3, GROUP, "加入")
    lobby = json.loads(wire(bot, SPECTATOR))
    assert [seat["person"] for seat in lobby["seats"]] == [1, 2, 3]
    assert [action["action"] for action in lobby["actions"]] == ["join"]
    assert [action["action"] for action in json.loads(wire(bot, 1))["actions"]] == ["ready", "leave"]
    for person in (1, 2, 3):
        await d.press(person, GROUP, "开始")
    assert json.loads(wire(bot, 1))["phase"] == "banker"
    assert clock_label(bot) == "叫庄：谁来当庄"  # the countdown says what is being decided
    assert [action["action"] for action in json.loads(wire(bot, 1))["actions"]] == ["banker", "pass", "leave"]
    await d.press(1, GROUP, "当庄")
    assert_no_leak(bot)
    assert clock_label(bot) == "补牌：补或不补"
    mine = json.loads(wire(bot, 2))
    assert [action["action"] for action in mine["actions"]] == ["draw", "stand", "leave"]
    assert mine["actions"][-1].get("escape") is True
    me = next(seat for seat in mine["seats"] if seat["me"])
    assert me["cards"] == ["5S", "6H"] and me["hand"]
    banker = next(seat for seat in mine["seats"] if seat["banker"])
    assert banker["person"] == 1 and banker["cards"] == [HIDDEN, HIDDEN]
    await d.press(2, GROUP, "补牌")
    assert_no_leak(bot)
    await d.press(3, GROUP, "不补")
    assert_no_leak(bot)
    await d.press(1, GROUP, "不补")
    after = json.loads(wire(bot, SPECTATOR))
    assert after["phase"] == "lobby" and after["results"]["round"] == 1
    lines = after["results"]["lines"]
    assert lines[0]["banker"] and all(line["cards"] and line["hand"] for line in lines)
    assert sum(line["net"] for line in lines) == 0


async def test_showhand_views_hide_each_hole_card(bot):
    d = bot.driver
    await d.send(1, GROUP, "/newgame showhand")
    await d.press(2, GROUP, "加入")
    await d.press(3, GROUP, "加入")
    for person in (1, 2, 3):
        await d.press(person, GROUP, "开始")
    live = bot.runtime.tables.get(GROUP)
    assert isinstance(live.engine, showhand.ShowhandTable)
    assert clock_label(bot) == "下注"
    for _ in range(4):  # a few bets, looking after each
        assert_no_leak(bot)
        turn = live.engine.turn
        if turn is None:
            break
        view = json.loads(wire(bot, turn))
        options = [action for action in view["actions"] if action["action"] in ("check", "call")]
        assert options, view["actions"]
        spectator = json.loads(wire(bot, SPECTATOR))
        assert [a["action"] for a in spectator["actions"]] == ["join"] and spectator["pot"] == live.engine.pot
        assert all(seat["cards"][0] == HIDDEN for seat in spectator["seats"])
        await d.press(turn, GROUP, options[0]["label"])
    await d.press(live.engine.turn, GROUP, "弃牌")
    if live.engine.phase is showhand.Phase.BETTING:
        assert_no_leak(bot)


async def test_a_bet_of_any_step_up_to_the_cap_is_offered_as_a_range(bot):
    """RULES.md 2.4: bet and raise amounts are any whole multiple of B up to the round's cap; the
    buttons offer B, 2B and the cap, the Mini App a slider over all of them (for the one to bet)."""
    d = bot.driver
    await d.send(1, GROUP, "/newgame showhand")
    await d.press(2, GROUP, "加入")
    for person in (1, 2):
        await d.press(person, GROUP, "开始")
    live = bot.runtime.tables.get(GROUP)
    engine, turn = live.engine, live.engine.turn
    own = engine.player(turn).total
    view = table_view(live, turn, "en", 0.0)
    assert view["amount"] == {
        "action": "bet",
        "min": own + engine.base,
        "max": engine.cap,
        "step": engine.base,
        "own": own,
        "label": "Bet {pay}",
    }
    assert all(seat["hole"] for seat in view["seats"]), "each first card is the face-down one"
    other = next(person for person in (1, 2) if person != turn)
    assert table_view(live, other, "en", 0.0)["amount"] is None  # not their turn
    assert table_view(live, SPECTATOR, "en", 0.0)["amount"] is None
    middle = own + 7 * engine.base  # not one of the buttons
    assert middle not in [option.amount for option in engine.legal_actions(turn)]
    await d.press(turn, GROUP, "下注")  # the group's bet button (B), so the other may raise
    raised = table_view(live, other, "zh-hans", 0.0)["amount"]
    assert raised["action"] == "raise" and raised["label"] == "加注 {pay}"
    assert raised["min"] == engine.player(turn).total + engine.base and raised["max"] == engine.cap


def test_a_view_is_sent_as_compact_json_even_where_orjson_refuses_it():
    view = {"title": "木虱 \u2028", "now": 1.5, "seats": [{"person": 2**63 - 1}], "results": None}
    assert compact_json(view) == json.dumps(view, ensure_ascii=False, separators=(",", ":"))
    for refused in ({"big": 2**64}, {1: "a key that is not a string"}):
        assert json.loads(compact_json(refused)) == json.loads(json.dumps(refused))
