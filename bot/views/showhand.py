"""The showhand table message, its buttons (only legal actions, with amounts), and the private views."""

from __future__ import annotations

from bot import callbacks
from bot.i18n import t
from bot.live import LiveTable, ResultLine
from bot.views.common import Markup, Screen, card_text, cards_text, closed_up, coins, keyboard, name, signed
from bot.views.lobby import footer_lines, lobby_keyboard, lobby_lines, results_footer, table_button
from games.showhand import Move, Option, Phase, Player, ShowhandTable

GAME = "showhand"
# A button's action code in the callback data, for each move (the amount rides as the argument).
ACTION_CODES = {
    Move.CHECK: "check",
    Move.BET: "bet",
    Move.CALL: "call",
    Move.RAISE: "raise",
    Move.ALL_IN: "allin",
    Move.FOLD: "fold",
}


def _engine(live: LiveTable) -> ShowhandTable:
    engine = live.engine
    assert isinstance(engine, ShowhandTable)
    return engine


def option_label(option: Option, language: str) -> str:
    return t(language, f"showhand.button.{option.move}", pay=coins(option.pay), total=coins(option.amount))


def _player_lines(live: LiveTable, language: str) -> list[str]:
    engine, lines = _engine(live), []
    for number, player in enumerate(engine.players, 1):
        if player.folded:
            state = t(language, "showhand.folded")
        else:
            state = "🂠 " + cards_text(player.face_up, language)
        pointer = " 👈" if player.person == engine.turn else ""
        lines.append(
            t(
                language,
                "showhand.player_line",
                n=number,
                name=name(live.name(player.person)),
                cards=state,
                total=coins(player.total),
            )
            + pointer
        )
    return lines


def _game_lines(live: LiveTable, screen: Screen) -> list[str]:
    engine, language = _engine(live), screen.language
    lines = [
        t(
            language,
            "showhand.header",
            title=t(language, "showhand.title"),
            round=engine.game_no,
            base=coins(engine.base),
            stake=coins(engine.max_stake),
        ),
        t(language, "showhand.pot", pot=coins(engine.pot), cap=coins(engine.cap or 0), card=engine.card_no),
        *_player_lines(live, language),
    ]
    if engine.lead is not None:
        reason = t(language, f"showhand.lead.{live.view.lead_reason or 'best_face_up'}")
        lines.append(t(language, "showhand.lead", name=name(live.name(engine.lead)), reason=reason))
    if engine.turn is not None:
        deadline = screen.when(live.view.deadline) if live.view.deadline else ""
        lines.append(t(language, "showhand.turn", name=name(live.name(engine.turn)), time=deadline))
    return lines


def result_line(live: LiveTable, line: ResultLine, language: str) -> str:
    if line.status == "escaped":
        hand = t(language, "showhand.escaped")
    elif line.status == "folded":
        hand = t(language, "showhand.folded")
    else:
        hand = t(language, f"showhand.category.{line.hand}") if line.hand else ""
    trophy = "🏆 " if line.won else ""
    return closed_up(
        t(
            language,
            "showhand.result_line",
            name=trophy + name(live.name(line.person)),
            cards=cards_text(line.cards, language),
            hand=hand,
            net=signed(line.net),
        )
    )


def table_text(live: LiveTable, screen: Screen) -> str:
    engine, language = _engine(live), screen.language
    title = t(language, "showhand.title")
    lines: list[str] = []
    if live.view.results and live.view.results_round == engine.game_no:
        lines.append(t(language, "showhand.header.results", title=title, round=engine.game_no))
        lines += [result_line(live, line, language) for line in live.view.results]
        lines.append(t(language, f"showhand.end.{live.view.end_reason or 'showdown'}"))
        lines += results_footer(live, language)
    if engine.phase is Phase.BETTING:
        lines += _game_lines(live, screen)
    else:
        lines += lobby_lines(live, screen, title, engine.closed, low=2, high=4)
    lines += footer_lines(live, screen, in_round=engine.phase is Phase.BETTING)
    return "\n".join(lines)


def _option_buttons(live: LiveTable, person: int, language: str) -> list[list[tuple[str, str]]]:
    engine = _engine(live)
    options = [option for option in engine.legal_actions(person) if option.move in ACTION_CODES]

    def button(option: Option) -> tuple[str, str]:
        data = callbacks.encode(GAME, live.table_id, engine.game_no, ACTION_CODES[option.move], option.amount)
        return option_label(option, language), data

    betting = [button(o) for o in options if o.move not in (Move.FOLD, Move.ALL_IN)]
    last = [button(o) for o in options if o.move in (Move.ALL_IN, Move.FOLD)]
    return [betting[:3], betting[3:], last]


def table_keyboard(live: LiveTable, language: str) -> Markup | None:
    engine = _engine(live)
    if engine.closed:
        return None
    if engine.phase is Phase.LOBBY:
        return lobby_keyboard(live, language)
    rows = [[table_button(live, language, "button.cards", "cards")]]
    if engine.turn is not None:
        rows += _option_buttons(live, engine.turn, language)
    rows.append([table_button(live, language, "button.leave_table", "leave")])
    return keyboard(rows)


def _cards(player: Player | None, language: str) -> str | None:
    if player is None or player.hole is None:
        return None
    return t(
        language,
        "showhand.your_cards",
        hole=card_text(player.hole, language),
        up=cards_text(player.face_up, language) or "—",
    )


def private_hand(live: LiveTable, person: int, language: str) -> str | None:
    return _cards(_engine(live).player(person), language)


def dm(live: LiveTable, person: int, screen: Screen, chat_title: str) -> tuple[str, Markup | None] | None:
    """A person's DM for this game: their cards, and their buttons on their turn; once the game is
    over, their cards as it ended and no buttons."""
    engine, language = _engine(live), screen.language
    title = t(
        language,
        "showhand.dm",
        title=t(language, "showhand.title"),
        chat=name(chat_title, 32),
        round=engine.game_no,
    )
    if engine.phase is not Phase.BETTING:
        final = _cards(engine.ended_as(person), language)
        return None if final is None else ("\n".join([title, final, t(language, "showhand.dm_over")]), None)
    private = private_hand(live, person, language)
    if private is None:
        return None
    lines = [title, private]
    if engine.turn == person and live.view.deadline:
        lines.append(t(language, "showhand.dm_turn", time=screen.when(live.view.deadline)))
        return "\n".join(lines), keyboard(_option_buttons(live, person, language))
    return "\n".join(lines), None


def private_people(live: LiveTable) -> list[int]:
    return [player.person for player in _engine(live).players]
