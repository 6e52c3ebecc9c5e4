"""The showhand table message, its buttons (only legal actions, with what each puts in), and the
private views: players' words throughout (过牌, 跟注, 加注, 梭哈, 弃牌)."""

from __future__ import annotations

from bot.display.i18n import t
from bot.display.views.acted import acted, folded_as, since_turn
from bot.display.views.common import (
    MINI_APP,
    Rendering,
    card_text,
    cards_text,
    closed_up,
    coins,
    keyboard,
    name,
    signed,
)
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
from bot.display.views.showdown import beats, hand_name
from bot.model import callbacks
from bot.model.callbacks import showhand_code
from bot.model.live_table import Acted, LiveTable, ResultLine
from bot.model.shown import Markup
from games.showhand import EndReason, Move, Option, Phase, Player, ShowhandTable, evaluate, verdict

GAME = "showhand"
BETTING = (Move.CHECK, Move.BET, Move.CALL, Move.RAISE, Move.ALL_IN, Move.FOLD)
# The betting buttons' action codes in the callback data (the amount rides as the argument).
ACTION_CODES = {move: showhand_code(move) for move in BETTING}
FEED = 4  # moves in the Mini App's feed
# The moves that set what the others must call.
_AGGRESSIVE_MOVES = (Move.BET, Move.RAISE, Move.ALL_IN)
_AGGRESSIVE = tuple(ACTION_CODES[move] for move in _AGGRESSIVE_MOVES)


def engine_of(live: LiveTable) -> ShowhandTable:
    engine = live.engine
    assert isinstance(engine, ShowhandTable)
    return engine


def option_label(option: Option, language: str) -> str:
    return t(language, f"showhand.button.{option.move}", pay=coins(option.pay), total=coins(option.amount))


def seat_cards(live: LiveTable, player: Player, language: str) -> str:
    """A seat's cards as everyone sees them; a folded seat keeps its face-up cards, marked."""
    cards = "🂠 " + cards_text(player.face_up, language)
    if player.folded:
        return f"{cards} · {t(language, f'showhand.{folded_as(live.view, player.person)}')}"
    return cards


def _told(live: LiveTable, move: Acted, language: str) -> str:
    """A move as the others are told it: ``阿强 加注 400（本轮到 600）`` (``阿强 托管过牌``: autopilot's)."""
    key = "timed_out" if move.timed_out else f"autopilot_{move.move}" if move.autopilot else _said_as(move)
    who = name(live.name(move.person))
    return t(language, f"showhand.told.{key}", name=who, **_amounts(move))


def _said_as(move: Acted) -> str:
    """A move's text key: a raise that is all the person put in this betting round says one
    number (``加注 400``, not ``加注 400（本轮到 400）``)."""
    raise_code = ACTION_CODES[Move.RAISE]
    return f"{raise_code}_first" if move.move == raise_code and move.round_total == move.paid else move.move


def told(live: LiveTable, move: Acted, language: str) -> str:
    """A move as the table tells it (the replay tells each move so: ``bot/display/replay.py``)."""
    return _told(live, move, language)


def _amounts(move: Acted) -> dict[str, str]:
    """A move's coins as its text names them (README, the play section): ``pay`` what it put in
    now, and for a raise ``round`` the person's total in this betting round (a move saved by an
    older version knew only the game's total)."""
    return {"pay": coins(move.paid), "round": coins(move.round_total or move.total)}


def _told_in_turn(live: LiveTable, moves: list[Acted], language: str) -> list[str]:
    """Moves as told, oldest first, each new card dealt between them marked where it came
    (``小红 跟注 200 · 🃏 第4张 · 小红 下注 200``)."""
    told = []
    for move in moves:
        told.append(_told(live, move, language))
        if move.dealt:
            told.append(t(language, "showhand.told.dealt", card=move.dealt))
    return told


def feed(live: LiveTable, language: str, last: int = FEED) -> list[str]:
    """The game's last ``last`` moves, as told, oldest first (the Mini App's feed)."""
    return _told_in_turn(live, _bets(live.view.moves)[-last:], language)


def last_all_in(live: LiveTable, language: str) -> tuple[int, str] | None:
    """The game's last all-in, if any: which move of the round it was, and as told."""
    for seq in range(len(live.view.moves) - 1, -1, -1):
        move = live.view.moves[seq]
        if move.move == ACTION_CODES[Move.ALL_IN]:
            return seq, _told(live, move, language)
    return None


def _bets(moves: list[Acted]) -> list[Acted]:
    """The betting moves among ``moves`` (a bare timeout is told by the fold it made)."""
    return [move for move in moves if move.move]


def _player_lines(live: LiveTable, language: str) -> list[str]:
    engine, lines = engine_of(live), []
    for number, player in enumerate(engine.players, 1):
        pointer = " 👈" if player.person == engine.turn else ""
        line = t(
            language,
            "showhand.player_line",
            n=number,
            name=name(live.name(player.person)),
            cards=seat_cards(live, player, language),
            total=coins(player.total),
        )
        lines.append(line + pointer)
    return lines


def header(live: LiveTable, language: str) -> str:
    """The table message's first line: the game, its number, its base and stake."""
    engine = engine_of(live)
    return t(
        language,
        "showhand.header",
        title=t(language, "showhand.title"),
        round=engine.game_no,
        base=coins(engine.base),
        stake=coins(engine.max_stake),
    )


def _game_lines(live: LiveTable, screen: Rendering) -> list[str]:
    engine, language = engine_of(live), screen.language
    lines = [
        header(live, language),
        t(language, "showhand.pot", pot=coins(engine.pot), cap=coins(engine.cap or 0), card=engine.card_no),
        *_player_lines(live, language),
    ]
    if engine.lead is not None:
        reason = t(language, f"showhand.lead.{live.view.lead_reason or 'best_face_up'}")
        lines.append(t(language, "showhand.lead", name=name(live.name(engine.lead)), reason=reason))
    if moves := _bets(live.view.moves):
        lines.append(t(language, "showhand.last", moves=_told(live, moves[-1], language)))
    if engine.turn is not None:
        lines.append(
            t(language, "showhand.turn", name=who(live, engine.turn), deadline=turn_deadline(live, screen))
        )
        lines += no_dm_line(live, screen, [engine.turn])
    return lines


def _hand_text(line: ResultLine, language: str) -> str:
    """A result's cards: the face-down card marked once shown, face-up ones as they were dealt."""
    if line.hand and line.cards:
        hole, *up = line.cards
        return " ".join(
            [t(language, "showhand.hole", card=card_text(hole, language)), cards_text(up, language)]
        )
    return cards_text(line.cards, language)


def result_line(live: LiveTable, line: ResultLine, language: str) -> str:
    if line.status in ("escaped", "folded", "timed_out", "autopilot_folded"):
        hand = t(language, f"showhand.{line.status}")
    else:
        hand = hand_name(evaluate(line.cards), language) if line.hand else ""
    trophy = "🏆 " if line.won else ""
    return closed_up(
        t(
            language,
            "showhand.result_line",
            name=trophy + name(live.name(line.person)),
            cards=_hand_text(line, language),
            hand=hand,
            net=signed(line.net),
        )
    )


def _results_lines(live: LiveTable, screen: Rendering) -> list[str]:
    view, language = live.view, screen.language
    title = t(language, "showhand.title")
    lines = [t(language, "showhand.header.results", title=title, round=view.results_round)]
    lines += [result_line(live, line, language) for line in view.results]
    winner = next((line for line in view.results if line.won), None)
    if winner is not None:
        pot = coins(sum(line.put_in for line in view.results))
        lines.append(t(language, "showhand.took", name=name(live.name(winner.person)), pot=pot))
    judged = verdict(evaluate(line.cards) for line in view.results if line.hand)
    if EndReason(view.end_reason or EndReason.SHOWDOWN).shown_down and judged is not None:
        lines.append(beats(judged.winner, judged.runner_up, language))
    else:
        lines.append(t(language, f"showhand.end.{view.end_reason or 'showdown'}"))
    return lines + results_footer(live, screen)


def results_text(live: LiveTable, screen: Rendering) -> str:
    """The last game's message once the next game has its own: its results only, no buttons."""
    return "\n".join(_results_lines(live, screen))


def table_text(live: LiveTable, screen: Rendering) -> str:
    engine, language = engine_of(live), screen.language
    lines: list[str] = []
    if live.view.results and live.view.results_round == engine.game_no:
        lines += _results_lines(live, screen)
    if engine.phase is Phase.BETTING:
        lines += _game_lines(live, screen)
    else:
        lines += lobby_lines(live, screen, t(language, "showhand.title"), engine.closed, low=2, high=4)
    lines += footer_lines(live, screen, in_round=engine.phase is Phase.BETTING)
    return "\n".join(lines)


# The pot-relative bets and raises besides the engine's B, 2B and cap: (share of the pot, label key).
POT_SHARES = ((1, 2, "half"), (1, 1, "full"))
ROW = 3  # buttons to a row: what a phone shows without cutting labels


def pot_options(engine: ShowhandTable, person: int) -> list[tuple[str, Option]]:
    """½ pot and 1 pot: a bet (or a raise above the largest total) of that share of the pot,
    rounded to a multiple of B, each only when the engine's range for any step allows it
    (``bet_amounts``: within this round's cap, M left to all-in) and no other button has it."""
    amounts, player = engine.bet_amounts(person), engine.player(person)
    if amounts is None or player is None:
        return []
    (move, floor, top), base = amounts, engine.base
    above = floor - base  # what the bet or raise goes above: the opening or the largest total
    taken = {option.amount for option in engine.legal_actions(person) if option.move in _AGGRESSIVE_MOVES}
    found: list[tuple[str, Option]] = []
    for part, whole, share in POT_SHARES:
        step = max(base, (engine.pot * part // whole + base // 2) // base * base)
        total = above + step
        if floor <= total <= top and total not in taken:
            taken.add(total)
            found.append((share, Option(move, total, total - player.total)))
    return found


def pot_label(share: str, option: Option, language: str) -> str:
    key = f"showhand.button.pot_{share}.{option.move}"
    return t(language, key, pay=coins(option.pay), total=coins(option.amount))


def _option_buttons(live: LiveTable, person: int, language: str) -> list[list[tuple[str, str]]]:
    """The betting buttons, rows of at most ``ROW``: check or call, then the bets or raises by
    amount (B, 2B, ½ pot, 1 pot, the cap), then all-in and fold."""
    engine = engine_of(live)
    options = [option for option in engine.legal_actions(person) if option.move in ACTION_CODES]

    def data(option: Option) -> str:
        code = showhand_code(option.move)
        return callbacks.encode(GAME, live.table_id, engine.game_no, code, option.amount)

    labelled = [(option_label(o, language), o) for o in options if o.move not in (Move.FOLD, Move.ALL_IN)]
    labelled += [(pot_label(share, o, language), o) for share, o in pot_options(engine, person)]
    labelled.sort(key=lambda pair: (pair[1].move in (Move.BET, Move.RAISE), pair[1].amount))
    betting = [(label, data(option)) for label, option in labelled]
    last = [(option_label(o, language), data(o)) for o in options if o.move in (Move.ALL_IN, Move.FOLD)]
    return [*(betting[i : i + ROW] for i in range(0, len(betting), ROW)), last]


def _other_amount(live: LiveTable, person: int, language: str) -> list[tuple[str, str]]:
    """In a DM (the group's table has its own "open the table" row): 其他金额 opens the Mini App,
    whose slider bets any step, when the bot serves one and the range holds amounts no button has."""
    engine, link = engine_of(live), MINI_APP.of(live.table_id)
    amounts = engine.bet_amounts(person)
    if link is None or amounts is None:
        return []
    _, floor, top = amounts
    offered = {o.amount for o in engine.legal_actions(person) if o.move in (Move.BET, Move.RAISE)}
    offered |= {o.amount for _, o in pot_options(engine, person)}
    if (top - floor) // engine.base + 1 <= len(offered):
        return []
    return [(t(language, "showhand.button.other_amount"), link)]


def table_keyboard(live: LiveTable, language: str) -> Markup | None:
    engine = engine_of(live)
    if engine.closed:
        return closed_keyboard(live, language)
    if engine.phase is Phase.LOBBY:
        return lobby_keyboard(live, language)
    rows = [[table_button(live, language, "button.cards", "cards")]]
    if engine.turn is not None:
        rows += _option_buttons(live, engine.turn, language)
    prices = [price for person in live.seated() if (price := engine.escape_cost(person)) is not None]
    rows.append([leave_button(live, language, prices, "showhand.button.escape")])
    rows.append(app_row(live, language))
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
    return _cards(engine_of(live).player(person), language)


def move_answer(live: LiveTable, person: int, language: str) -> str | None:
    """The toast after their own move: what it was (as their DM records it), then their cards."""
    hand = private_hand(live, person, language)
    return "\n".join([*_did(live, person, language), *([hand] if hand else [])]) or None


def _did(live: LiveTable, person: int, language: str) -> list[str]:
    """What ``person`` did last, in their DM once their turn is over (coins as the buttons said)."""
    if folded_as(live.view, person) == "timed_out":
        return [t(language, "showhand.did.timed_out")]
    last = acted(live.view, person)
    if not last.move or last.timed_out:
        return []
    if last.autopilot:  # (托管: a check when checking is free, else a fold)
        return [t(language, f"showhand.did.autopilot_{last.move}")]
    return [t(language, f"showhand.did.{_said_as(last)}", **_amounts(last))]


def _situation(live: LiveTable, person: int, language: str) -> str:
    """What ``person`` faces at their turn: the move to answer and what calling it costs."""
    options = {option.move: option for option in engine_of(live).legal_actions(person)}
    facing = next((m for m in reversed(_bets(live.view.moves)) if m.move in _AGGRESSIVE), None)
    if Move.CHECK in options or facing is None:
        return t(language, "showhand.situation.open")
    call, answer = options.get(Move.CALL), _told(live, facing, language)
    if call is None:  # calling takes all they have left: all-in or fold
        all_in = options.get(Move.ALL_IN)
        return t(language, "showhand.situation.all_in", told=answer, pay=coins(all_in.pay if all_in else 0))
    key = "showhand.situation.call_raise" if Move.RAISE in options else "showhand.situation.call"
    return t(language, key, told=answer, pay=coins(call.pay))


def dm(live: LiveTable, person: int, screen: Rendering, chat_title: str) -> tuple[str, Markup | None] | None:
    """A person's DM for this game: their cards; on their turn what the pot stands at, the deadline
    and their buttons; after it, what they did; once the game is over, their cards as it ended and
    their result."""
    engine, language = engine_of(live), screen.language
    title = t(
        language,
        "showhand.dm",
        title=t(language, "showhand.title"),
        chat=name(chat_title, 32),
        round=engine.game_no,
    )
    if engine.phase is not Phase.BETTING:
        final = _cards(engine.ended_as(person), language)
        if final is None:
            return None
        # What they did last stays on the record (a timeout, an all-in), with the result.
        did = _did(live, person, language)
        return "\n".join([title, final, *did, dm_result(live, person, language)]), None
    player = engine.player(person)
    private = private_hand(live, person, language)
    if private is None or player is None:
        return None
    lines = [title, private]
    if engine.turn == person and live.deadline and live.asks(person):
        since = _told_in_turn(live, _bets(since_turn(live.view, person)), language)
        if dealt := acted(live.view, person).dealt:  # (a card came right after their own last move)
            since.insert(0, t(language, "showhand.told.dealt", card=dealt))
        happened = [t(language, "showhand.last", moves=" · ".join(since))] if since else []
        stake = t(language, "showhand.dm_stake", pot=coins(engine.pot), total=coins(player.total))
        question = t(
            language,
            "showhand.dm_turn",
            situation=_situation(live, person, language),
            deadline=turn_deadline(live, screen, as_prompted=True),
        )
        seats = _player_lines(live, language)
        lines = [*dm_prompt(live, language), title, *seats, *happened, private, stake, question]
        return "\n".join(lines), keyboard(
            [*_option_buttons(live, person, language), _other_amount(live, person, language)]
        )
    return "\n".join([*lines, *_did(live, person, language)]), None


def private_people(live: LiveTable) -> list[int]:
    return list(engine_of(live).card_holders())
