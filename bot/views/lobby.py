"""The parts of a table message both games share: the lobby (seats, readiness, expiry) and the
line under a round's results that points to its fairness proof."""

from __future__ import annotations

from bot import callbacks
from bot.i18n import t
from bot.live import LiveTable
from bot.views.common import Markup, Screen, coins, keyboard, name, short_hash
from games.stakes import MIN_BALANCE


def seat_lines(live: LiveTable, language: str) -> list[str]:
    lines = []
    for number, seat in enumerate(live.engine.core.seats, 1):
        mark = t(language, "lobby.ready" if seat.ready else "lobby.not_ready")
        lines.append(
            t(language, "lobby.seat", n=number, name=name(live.name(seat.person)), mark=mark).rstrip()
        )
    return lines


def lobby_lines(
    live: LiveTable, screen: Screen, title: str, closed: bool, *, low: int, high: int
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
    if live.view.deadline:
        lines.append(t(language, "lobby.expires", time=screen.when(live.view.deadline)))
    return lines


def results_footer(live: LiveTable, language: str) -> list[str]:
    return [t(language, "round.verify", table=live.table_id, round=live.view.results_round)]


def footer_lines(live: LiveTable, screen: Screen, in_round: bool) -> list[str]:
    """Under every table: what happened worth a line, the round's commitment, DMs that failed."""
    language, lines = screen.language, []
    for notice in live.view.notices:
        lines.append(
            t(language, notice.key, name=name(live.name(notice.person)), amount=coins(notice.amount))
        )
    if live.view.commitment and in_round:
        lines.append(t(language, "round.commitment", hash=short_hash(live.view.commitment)))
    elif not in_round and live.round_no and live.view.results_round != live.round_no:
        # The round ended with no results (nobody took the bank, the table was cancelled): its
        # deck was revealed all the same, and the commitment shown during it can be checked.
        lines.append(t(language, "round.verify", table=live.table_id, round=live.round_no))
    link = screen.deep_link(live.table_id)
    for person in live.view.dm_failed:
        if person in live.seated():
            lines.append(t(language, "dm.failed", name=name(live.name(person)), link=link))
    return lines


def table_button(live: LiveTable, language: str, key: str, action: str) -> tuple[str, str]:
    """A button of the table message: its label in ``language`` and its callback data."""
    return t(language, key), callbacks.encode(live.game, live.table_id, live.round_no, action)


def lobby_keyboard(live: LiveTable, language: str) -> Markup | None:
    """Between rounds: Join, Start (Continue after a round) and Leave."""
    start = "button.continue" if live.round_no else "button.ready"
    return keyboard(
        [
            [
                table_button(live, language, "button.join", "join"),
                table_button(live, language, start, "ready"),
            ],
            [table_button(live, language, "button.leave", "leave")],
        ]
    )
