"""The parts of a table message both games share: the lobby (seats, readiness, expiry) and the
line under a round's results that points to its fairness proof."""

from __future__ import annotations

from bot.display.i18n import t
from bot.display.views.common import (
    MINI_APP,
    Rendering,
    coins,
    duration,
    keyboard,
    mention,
    name,
    replay_keyboard,
    short_hash,
    signed,
)
from bot.model import callbacks
from bot.model.callbacks import AUTO_READY, AUTOPILOT_OFF
from bot.model.live_table import LiveTable
from bot.model.shown import Markup
from games.stakes import MIN_BALANCE

REMINDER_LEFT = 1 / 3  # of a turn: someone who has not acted by then is reminded by a new DM
DmView = tuple[str, Markup | None]  # a DM's text and buttons


def seat_lines(live: LiveTable, language: str) -> list[str]:
    """Who sits, who is ready, and once a round was played each one's running score."""
    lines = []
    for number, seat in enumerate(live.engine.core.seats, 1):
        mark = t(language, "lobby.ready" if seat.ready else "lobby.not_ready")
        if seat.person in live.view.auto_ready:
            mark += " " + t(language, "lobby.auto_ready")
        line = t(language, "lobby.seat", n=number, name=name(live.name(seat.person)), mark=mark).rstrip()
        if seat.person in live.view.score:
            line += "  " + t(language, "score.own", net=signed(live.view.score[seat.person]))
        lines.append(line)
    return lines


def score_line(live: LiveTable, language: str) -> list[str]:
    """Under a round's results, from the second one on: everyone's net since the table opened, best
    first."""
    if live.view.results_round < 2 or not live.view.score:
        return []
    ranked = sorted(live.view.score.items(), key=lambda item: -item[1])
    each = [f"{name(live.name(person))} {signed(net)}" for person, net in ranked]
    return [t(language, "score.line", scores=t(language, "list.separator").join(each))]


def lobby_lines(
    live: LiveTable, screen: Rendering, title: str, closed: bool, *, low: int, high: int
) -> list[str]:
    """A table between rounds: who sits, who pressed Start, when the lobby closes."""
    language = screen.language
    if closed:
        reason = t(language, f"closed.{live.view.closed_reason or 'cancelled'}")
        return [t(language, "lobby.closed", title=title, reason=reason)]
    showing_results = bool(live.view.results) and live.view.results_round == live.round_no
    lines = [] if showing_results else [t(language, "lobby.title", title=title)]
    lines += seat_lines(live, language)
    if live.round_no:
        lines.append(t(language, "lobby.hint_next", min=coins(MIN_BALANCE)))
    else:
        lines.append(t(language, "lobby.hint", low=low, high=high, min=coins(MIN_BALANCE)))
    if live.pause_until:  # (the pause after the results: bot/tables/breath.py)
        lines.append(t(language, "lobby.pause", time=screen.when(live.pause_until)))
    if live.deadline:
        deadline = screen.deadline(live.engine.core.lobby_seconds, live.deadline)
        lines.append(t(language, "lobby.expires", deadline=deadline))
    return lines


def notice_lines(live: LiveTable, screen: Rendering, round_no: int) -> list[str]:
    """What happened worth a line in round ``round_no`` (an escape, someone unseated, a DM that
    failed): it stays with that round's message."""
    link = screen.deep_link(live.table_id)
    return [
        t(
            screen.language,
            notice.key,
            name=name(live.name(notice.person)),
            amount=coins(notice.amount),
            link=link,
        )
        for notice in live.view.notices
        if notice.round_no == round_no
    ]


def results_footer(live: LiveTable, screen: Rendering) -> list[str]:
    """Under a round's results: the running score, its notices and where its fairness proof is."""
    return [
        *score_line(live, screen.language),
        *notice_lines(live, screen, live.view.results_round),
        t(screen.language, "round.verify", table=live.table_id, round=live.view.results_round),
    ]


def footer_lines(live: LiveTable, screen: Rendering, in_round: bool) -> list[str]:
    """Under the table: this round's notices (those of a round with results are under them) and the
    round's commitment, or its proof when it ended without results (nobody took the bank, the
    table was cancelled: its deck was revealed all the same)."""
    language = screen.language
    with_results = bool(live.view.results) and live.view.results_round == live.round_no
    lines = [] if with_results else notice_lines(live, screen, live.round_no)
    if live.view.commitment and in_round:
        lines.append(t(language, "round.commitment", hash=short_hash(live.view.commitment)))
    elif not in_round and live.round_no and not with_results:
        lines.append(t(language, "round.verify", table=live.table_id, round=live.round_no))
    return lines


def turn_deadline(live: LiveTable, screen: Rendering, *, as_prompted: bool = False) -> str:
    """The running turn's deadline, ``30 秒 · 21:05:30 截止`` ("" when none runs). ``as_prompted``:
    as a DM prompt shows it, as its turn began. Time given back later for a prompt that reached
    someone late is not shown there: it would redraw every prompt still waiting (a request each, at
    the next move), and showing less time than there is misleads nobody. Its reminder, drawn anew,
    shows the real one."""
    deadline = live.deadline
    if deadline and as_prompted and not live.reminded:
        deadline -= live.turn.given_back
    return screen.deadline(live.engine.core.turn_seconds, deadline) if deadline else ""


def who(live: LiveTable, person: int) -> str:
    """A person named on a line for their turn: a real mention for someone the bot cannot DM (the
    DM is how everyone else is told)."""
    shown = name(live.name(person))
    return mention(person, shown) if person in live.view.dm_failed else shown


def no_dm_line(live: LiveTable, screen: Rendering, people: list[int]) -> list[str]:
    """For those who must act and never opened a DM with the bot: the link that opens it."""
    if not any(person in live.view.dm_failed for person in people):
        return []
    return [t(screen.language, "dm.open", link=screen.deep_link(live.table_id))]


def turn_call(live: LiveTable, screen: Rendering, people: list[int]) -> str:
    """The group message that calls those who must act and cannot be told by DM (a new message:
    its mentions notify them), with the deadline and the link that opens the DM."""
    names = t(screen.language, "list.separator").join(
        mention(person, name(live.name(person))) for person in people
    )
    deadline = turn_deadline(live, screen)
    return t(
        screen.language, "turn.call", names=names, deadline=deadline, link=screen.deep_link(live.table_id)
    )


def leave_button(live: LiveTable, language: str, prices: list[int], key: str) -> tuple[str, str]:
    """Leave: "离桌" when it is free for everyone, else "逃跑" with what it costs (``key``: the
    game's wording, a penalty or the bets lost), as a range when people's prices differ."""
    if not prices:
        return table_button(live, language, "button.leave", "leave")
    low, high = min(prices), max(prices)
    amount = coins(low) if low == high else f"{coins(low)}–{coins(high)}"
    return t(language, key, amount=amount), callbacks.encode(live.game, live.table_id, live.round_no, "leave")


def table_button(live: LiveTable, language: str, key: str, action: str) -> tuple[str, str]:
    """A button of the table message: its label in ``language`` and its callback data."""
    return t(language, key), callbacks.encode(live.game, live.table_id, live.round_no, action)


def app_row(live: LiveTable, language: str) -> list[tuple[str, str]]:
    """The row of the button that opens the table in the Mini App (none when the bot has none),
    with "▶ 回放" beside it while the message shows a finished round's results."""
    link = MINI_APP.of(live.table_id)
    if link is None:
        return []
    replay = MINI_APP.replay(live.table_id, live.view.results_round)
    showing = live.view.results and live.view.results_round == live.round_no and not live.in_round
    return [
        (t(language, "miniapp.open"), link),
        *([(t(language, "button.replay"), replay)] if showing and replay else []),
    ]


def closed_keyboard(live: LiveTable, language: str) -> Markup | None:
    """A closed table's message: "▶ 回放" under its last round's results, if it shows them."""
    if not live.view.results or live.view.results_round != live.round_no:
        return None
    return replay_keyboard(live.table_id, live.view.results_round, language)


def lobby_keyboard(live: LiveTable, language: str) -> Markup | None:
    """Between rounds: Join, Start (Continue after a round, and the same for every next round) and
    Leave (free)."""
    start = "button.continue" if live.round_no else "button.ready"
    again = [table_button(live, language, "button.auto_ready", AUTO_READY)] if live.round_no else []
    return keyboard(
        [
            [
                table_button(live, language, "button.join", "join"),
                table_button(live, language, start, "ready"),
            ],
            again,
            [table_button(live, language, "button.leave", "leave")],
            app_row(live, language),
        ]
    )


def dm_prompt(live: LiveTable, language: str) -> list[str]:
    """The top of a DM that asks ``person`` to act (a new message, so it notifies): "your turn",
    or the reminder once it has gone out."""
    if live.reminded:
        left = duration(live.engine.core.turn_seconds * REMINDER_LEFT, language)
        return [t(language, "dm.reminder", left=left)]
    return [t(language, "dm.your_turn")]


def on_autopilot(live: LiveTable, person: int, language: str, drawn: DmView | None) -> DmView | None:
    """A DM for someone on autopilot (托管): what it shows (if anything), its line saying so, and the
    button that ends it (never a prompt: their turns are played at once)."""
    if live.asks(person) or live.engine.closed:  # (a closed table plays no more)
        return drawn
    back = callbacks.encode(live.game, live.table_id, live.round_no, AUTOPILOT_OFF)
    lines = [] if drawn is None else [drawn[0]]
    return "\n".join([*lines, t(language, "autopilot.dm")]), keyboard([[(t(language, "button.back"), back)]])


def off_autopilot(text: str, language: str) -> str:
    """A DM that said 托管中 (``on_autopilot``), as it is to stay once that is over (they left, the
    table ended, a new round's DM took over): without that line, nor its button."""
    kept = text.removesuffix(t(language, "autopilot.dm")).rstrip("\n")
    return kept or t(language, "dm.over")


def dm_result(live: LiveTable, person: int, language: str) -> str:
    """The last line of a person's DM for a finished round: what they won or lost, their coins now."""
    line = next((line for line in live.view.results if line.person == person), None)
    if line is None or live.view.results_round != live.round_no:
        return t(language, "dm.over")
    if line.balance is None:
        return t(language, "dm.result_left", net=signed(line.net))
    return t(language, "dm.result", net=signed(line.net), balance=coins(line.balance))
