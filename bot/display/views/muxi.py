"""The muxi table message, its buttons, and the private views of a hand (DM and popup)."""

from __future__ import annotations

from bot.display.i18n import t
from bot.display.views.acted import acted
from bot.display.views.common import Rendering, cards_text, closed_up, keyboard, name, signed
from bot.display.views.lobby import (
    app_row,
    closed_keyboard,
    dm_prompt,
    dm_result,
    footer_lines,
    leave_button,
    lobby_keyboard,
    lobby_lines,
    no_dm_line,
    results_footer,
    table_button,
    turn_deadline,
    who,
)
from bot.model import callbacks
from bot.model.callbacks import CARDS, MuxiCode, muxi_code
from bot.model.live_table import LiveTable, ResultLine
from bot.model.shown import Markup
from games.cards import Card
from games.muxi import Kind, Move, MuxiTable, Phase, RoundEnd, SeenHand, Status, evaluate

GAME = "muxi"


def hand_label(kind: str | None, points: int, language: str) -> str:
    """``7点 三倍`` / ``双倍天公9`` / ``八倍 同花顺``: a hand's kind as players say it."""
    if kind is None:
        return ""
    label = t(language, f"muxi.kind.{kind}")
    if kind in (Kind.DOUBLE_TIANGONG, Kind.TIANGONG):
        return t(language, "muxi.natural_points", kind=label, points=points)
    if kind in (Kind.FLUSH, Kind.DOUBLE, Kind.NORMAL):
        return t(language, "muxi.one_point" if points == 1 else "muxi.points", points=points, kind=label)
    return label


def judged_label(cards: list[Card], language: str) -> str:
    try:
        hand = evaluate(cards)
    except ValueError:  # a lone joker still to draw
        return t(language, "muxi.must_draw_short")
    return hand_label(hand.kind.value, hand.points, language)


def engine_of(live: LiveTable) -> MuxiTable:
    engine = live.engine
    assert isinstance(engine, MuxiTable)
    return engine


def _header(live: LiveTable, language: str, key: str) -> str:
    engine = engine_of(live)
    return t(
        language, key, title=t(language, "muxi.title"), round=engine.core.round_no, base=engine.state.base
    )


def _status_text(hand: SeenHand, language: str) -> str:
    """A hand's line on the table, as the group may see it (the engine's censored view: a forced
    draw is told as waiting, a player's natural is shown)."""
    if hand.shown:
        cards = [card for card in hand.cards if card is not None]
        shown = cards_text(cards, language) + " " + judged_label(cards, language)
        return t(language, "muxi.status.shown", hand=shown)
    if hand.status is Status.NATURAL:
        return t(language, "muxi.status.stands")
    return t(language, f"muxi.status.{hand.status.value}")


def _player_lines(live: LiveTable, language: str) -> list[str]:
    """Each player's line as the group sees it: who drew, who stood, who is still to choose; each
    keeps the number it had in the banker question."""
    engine = engine_of(live)
    awaited = engine.awaited()
    lines = []
    seats = engine.state.participants  # numbered as the banker question numbered them
    for hand in [hand for hand in engine.seen_by(None) if not hand.is_banker]:
        number = seats.index(hand.person) + 1
        shown = who(live, hand.person) if hand.person in awaited else name(live.name(hand.person))
        status = _status_text(hand, language)
        lines.append(t(language, "muxi.player_line", n=number, name=shown, status=status))
    return lines


def _play_lines(live: LiveTable, screen: Rendering) -> list[str]:
    engine, language = engine_of(live), screen.language
    banker = engine.state.banker
    assert banker is not None
    lines = [
        _header(live, language, "muxi.header.round"),
        t(language, "muxi.banker", name=name(live.name(banker))),
    ]
    lines += _player_lines(live, language)
    if engine.phase is Phase.DRAW:
        lines.append(t(language, "muxi.draw_prompt", deadline=turn_deadline(live, screen)))
    else:
        lines.append(
            t(language, "muxi.banker_prompt", name=who(live, banker), deadline=turn_deadline(live, screen))
        )
    return lines + no_dm_line(live, screen, list(engine.awaited()))


def _banker_choice_lines(live: LiveTable, screen: Rendering) -> list[str]:
    engine, language = engine_of(live), screen.language
    asked = engine.asked_person()
    lines = [_header(live, language, "muxi.header.round")]
    for number, person in enumerate(engine.state.participants, 1):
        pointer = " 👉" if person == asked else ""
        lines.append(t(language, "lobby.seat", n=number, name=name(live.name(person)), mark=pointer).rstrip())
    lines.append(
        t(language, "muxi.banker_ask", name=who(live, asked or 0), deadline=turn_deadline(live, screen))
    )
    return lines + no_dm_line(live, screen, list(engine.awaited()))


def shown_down(live: LiveTable, line: ResultLine) -> bool:
    """Whether a hand on the results was shown to the table: not when the round ended with no
    show-down (the engine's ``RoundEnd.shown_down``), nor a hand that escaped the round."""
    ended = RoundEnd(live.view.end_reason or RoundEnd.SHOWDOWN)
    return ended.shown_down and line.status != Status.ESCAPED


def result_line(live: LiveTable, line: ResultLine, language: str) -> str:
    role = t(language, "muxi.role.banker") if line.is_banker else ""
    shown = shown_down(live, line)
    if line.status in (Status.ESCAPED, Status.FORFEIT):
        hand = t(language, f"muxi.status.{line.status}")
    else:
        hand = hand_label(line.hand, line.points, language) if shown else ""
    return closed_up(
        t(
            language,
            "muxi.result_line",
            role=role,
            name=name(live.name(line.person)),
            cards=cards_text(line.cards, language) if shown else "",
            hand=hand,
            net=signed(line.net),
        )
    )


def _results_lines(live: LiveTable, screen: Rendering) -> list[str]:
    view, language = live.view, screen.language
    lines = [t(language, "muxi.header.results", title=t(language, "muxi.title"), round=view.results_round)]
    banker_first = sorted(view.results, key=lambda line: not line.is_banker)
    lines += [result_line(live, line, language) for line in banker_first]
    return lines + results_footer(live, screen)


def results_text(live: LiveTable, screen: Rendering) -> str:
    """The last round's message once the next round has its own: its results only, no buttons."""
    return "\n".join(_results_lines(live, screen))


def table_text(live: LiveTable, screen: Rendering) -> str:
    """The whole table message in the chat's language."""
    engine, language = engine_of(live), screen.language
    lines: list[str] = []
    if live.view.results and live.view.results_round == engine.core.round_no:
        lines += _results_lines(live, screen)
    if engine.phase in (Phase.LOBBY, Phase.CLOSED):
        lines += lobby_lines(live, screen, t(language, "muxi.title"), engine.closed, low=2, high=5)
    elif engine.phase is Phase.BANKER:
        lines += _banker_choice_lines(live, screen)
    else:
        lines += _play_lines(live, screen)
    lines += footer_lines(live, screen, in_round=engine.phase not in (Phase.LOBBY, Phase.CLOSED))
    return "\n".join(lines)


def table_keyboard(live: LiveTable, language: str) -> Markup | None:
    engine = engine_of(live)
    phase = engine.phase
    if phase is Phase.CLOSED:
        return closed_keyboard(live, language)
    if phase is Phase.LOBBY:
        return lobby_keyboard(live, language)

    def button(key: str, action: str) -> tuple[str, str]:
        return table_button(live, language, key, action)

    def choice(code: MuxiCode) -> tuple[str, str]:
        return button(f"button.{code.value}", code)

    prices = [price for person in live.seated() if (price := engine.escape_cost(person)) is not None]
    leave = leave_button(live, language, prices, "muxi.button.escape")
    if phase is Phase.BANKER:
        return keyboard(
            [
                [choice(MuxiCode.BE_BANKER), choice(MuxiCode.PASS)],
                [leave],
                app_row(live, language),
            ]
        )
    return keyboard(
        [
            [button("button.cards", CARDS), choice(MuxiCode.DRAW), choice(MuxiCode.STAND)],
            [leave],
            app_row(live, language),
        ]
    )


def private_hand(live: LiveTable, person: int, language: str) -> str | None:
    """A person's own cards, for the DM and the popup; None when they hold none this round."""
    hand = engine_of(live).hand_of(person)
    if hand is None:
        return None
    return t(
        language,
        "muxi.your_cards",
        cards=cards_text(hand.cards, language),
        hand=judged_label(hand.cards, language),
    )


def move_answer(live: LiveTable, person: int, language: str) -> str | None:
    """The toast after their own move: what it was (as their DM records it), then their cards."""
    hand = private_hand(live, person, language)
    return "\n".join(part for part in (_did(live, person, language), hand) if part) or None


def _final_hand(live: LiveTable, person: int, language: str) -> str | None:
    """A person's cards as the round ended (drawn ones included), with what they made of them."""
    engine = engine_of(live)
    hand = engine.hand_of(person)
    if hand is not None:  # the table was cancelled during the round: the hand is as it stood
        cards, status, judged = tuple(hand.cards), hand.status.value, None
    else:
        line = next((line for line in live.view.results if line.person == person), None)
        if line is None or live.view.results_round != live.round_no:
            return None
        cards, status, judged = line.cards, line.status, hand_label(line.hand, line.points, language)
    if status in (Status.ESCAPED, Status.FORFEIT):
        label = t(language, f"muxi.status.{status}")
    elif judged:
        label = judged
    else:  # no show-down judged it (the banker escaped): its owner may still see what it was
        try:
            made = evaluate(list(cards))
            label = hand_label(made.kind.value, made.points, language)
        except ValueError:  # a lone joker that never drew
            label = ""
    return t(language, "muxi.your_cards", cards=cards_text(cards, language), hand=label).strip()


def _banker_answer(live: LiveTable, person: int, language: str) -> str | None:
    """How ``person`` answered the banker question, once they have (None: not asked yet, or the
    table ended while they were asked)."""
    if acted(live.view, person).timed_out:
        return t(language, "muxi.did.timeout_banker")
    if engine_of(live).declined_bank(person):
        return t(language, "muxi.did.pass")
    return None


def _did(live: LiveTable, person: int, language: str) -> str:
    """What ``person`` did on their last turn, for their DM once it is over."""
    engine, last = engine_of(live), acted(live.view, person)
    hand = engine.hand_of(person)
    if hand is None:
        return _banker_answer(live, person, language) or ""
    if hand.status is Status.NATURAL:
        return t(language, "muxi.did.natural")
    if last.timed_out:
        return t(language, "muxi.did.forfeit" if hand.status is Status.FORFEIT else "muxi.did.timeout")
    if last.move in (MuxiCode.DRAW, MuxiCode.STAND, MuxiCode.BE_BANKER):
        return t(language, f"muxi.did.{last.move}")
    return ""


def dm(live: LiveTable, person: int, screen: Rendering, chat_title: str) -> tuple[str, Markup | None] | None:
    """A person's DM for this round: the banker question or their cards; on their turn, what they
    must choose with its deadline and their buttons; after it, what they did; once the round is
    over, their final cards and their result."""
    engine, language = engine_of(live), screen.language
    title = t(
        language, "muxi.dm", title=t(language, "muxi.title"), chat=name(chat_title, 32), round=live.round_no
    )
    if engine.phase in (Phase.LOBBY, Phase.CLOSED):
        final = _final_hand(live, person, language)
        if final is None:  # the round ended before the deal (nobody banked, or it was cancelled)
            answered = _banker_answer(live, person, language)
            return "\n".join([title, *([answered] if answered else []), t(language, "dm.over")]), None
        return "\n".join([title, final, dm_result(live, person, language)]), None
    deadline = turn_deadline(live, screen, as_prompted=True)

    def choice(code: MuxiCode) -> tuple[str, str]:
        return t(language, f"button.{code.value}"), callbacks.encode(GAME, live.table_id, live.round_no, code)

    if engine.phase is Phase.BANKER:
        if person == engine.asked_person() and live.asks(person):
            lines = [*dm_prompt(live, language), title, t(language, "muxi.dm_banker_ask", deadline=deadline)]
            return "\n".join(lines), keyboard([[choice(MuxiCode.BE_BANKER), choice(MuxiCode.PASS)]])
        answered = _banker_answer(live, person, language)
        return None if answered is None else ("\n".join([title, answered]), None)
    private = private_hand(live, person, language)
    if private is None:
        return None
    moves = [move for move in engine.legal_actions(person) if move in (Move.DRAW, Move.STAND)]
    if moves and deadline and live.asks(person):
        question = "muxi.dm_choose" if Move.STAND in moves else "muxi.dm_must_draw"
        # The banker draws last: their prompt names who drew and who stood.
        players = _player_lines(live, language) if engine.phase is Phase.BANKER_DRAW else []
        asked = t(language, question, deadline=deadline)
        lines = [*dm_prompt(live, language), title, *players, private, asked]
        return "\n".join(lines), keyboard([[choice(muxi_code(move)) for move in moves]])
    did = _did(live, person, language)
    return "\n".join([title, private, *([did] if did else [])]), None
