"""What one person may see of a table, as the Mini App's JSON (pure: no I/O).

Everyone sees the public table: seats, names, banker or lead, whose turn it is and until when,
face-up cards, the base or the pot and each total, the last show-down. Only the viewer's own hidden
cards are added, and only the viewer's own legal actions. Never another person's hidden card, the
deck or its salt: the game's part (``GameKind.app_part``) is drawn from the engine's censored view,
where a hidden card is sent as ``"?"``. ``tests/component/test_miniapp_view.py`` checks this on the
serialized JSON. The shapes are the typed dictionaries of ``bot/display/views/app.py``.
"""

from __future__ import annotations

from datetime import UTC, tzinfo
from typing import NotRequired

from bot.display.game_kinds import KINDS
from bot.display.i18n import t
from bot.display.views.app import HIDDEN, SPECTATOR, GameJSON, ResultsJSON
from bot.display.views.summary import SummaryJSON, summary_card
from bot.model.live_table import LiveTable

__all__ = [
    "HIDDEN",
    "PAGE_STRINGS",
    "SPECTATOR",
    "EndedTableJSON",
    "TableJSON",
    "page_strings",
    "table_view",
    "viewer_of",
]

# The Mini App's own words, sent with every state in the viewer's language.
PAGE_STRINGS = (
    "miniapp.open",
    "miniapp.banker",
    "miniapp.lead",
    "miniapp.you",
    "miniapp.spectating",
    "miniapp.results",
    "miniapp.closed",
    "miniapp.waiting",
    "miniapp.offline",
    "miniapp.confirm",
    "miniapp.cancel",
    "miniapp.seconds",
    "miniapp.your_turn",
    "miniapp.round",
    "miniapp.base",
    "miniapp.pot",
    "miniapp.total",
    "miniapp.unauthorized",
    "miniapp.hole",
    "miniapp.score",
    "miniapp.autopilot",
    "miniapp.dealing",
    "miniapp.no_dm",
    # what the countdown's time is for, by the game's phase (``phase`` in the view)
    "miniapp.clock.lobby",
    "miniapp.clock.banker",
    "miniapp.clock.draw",
    "miniapp.clock.banker_draw",
    "miniapp.clock.betting",
    "miniapp.revealing",  # an all-in's cards dealt one by one (issue 49, point 4)
    "miniapp.pause",  # the seconds left of the pause before auto-ready (same)
)


class TableJSON(GameJSON):
    """The whole state one viewer is sent: the table's common part, the game's, the last results."""

    table: int
    game: str
    title: str
    round: int
    version: int
    timer: int  # the engine's turn: the page acknowledges the turn it shows by it (api/watch)
    closed: bool
    me: int
    seated: bool
    now: float
    deadline: float | None
    turn_seconds: int
    in_round: bool
    commitment: str
    dealing: bool  # the round's table message is still on its way to the group: nobody's cards yet
    no_dm: bool  # the viewer's DM refused the bot: their turns are called in the group
    language: str
    strings: dict[str, str]
    results: NotRequired[ResultsJSON | None]
    pause_until: float | None  # the pause after the results ends then (auto-ready: bot/tables/breath.py)


class EndedTableJSON(TableJSON):
    """A table that has ended, once a round was played at it: with its 总结算."""

    summary: SummaryJSON


def page_strings(language: str) -> dict[str, str]:
    return {key.removeprefix("miniapp."): t(language, key) for key in PAGE_STRINGS}


def viewer_of(live: LiveTable, person: int) -> int:
    """Whom ``person``'s view is made for: themselves when anything at the table is theirs alone
    (a seat, a hand, a player's cards), else ``SPECTATOR`` (every spectator sees the same)."""
    if live.engine.core.seat_of(person) is not None:
        return person
    return person if person in KINDS[live.game].private_people(live) else SPECTATOR


def table_view(live: LiveTable, viewer: int, language: str, now: float, zone: tzinfo = UTC) -> TableJSON:
    """The table as ``viewer`` may see it (a spectator: anyone not seated). A round the group has
    not seen yet (its table message, with its commitment, still on its way) is shown as a
    spectator sees it, with no deadline: nobody's cards are dealt to them before that. A table
    that has ended comes with its 总结算 (``zone``: the bot's, for its times)."""
    engine, core, kind = live.engine, live.engine.core, KINDS[live.game]
    dealt = not live.opening_unseen
    view: TableJSON = {
        "table": live.table_id,
        "game": live.game,
        "title": t(language, f"{live.game}.title"),
        "round": core.round_no,
        "version": engine.version,
        "timer": core.timer,
        "closed": engine.closed,
        "me": viewer,
        "seated": core.seat_of(viewer) is not None,
        "now": now,
        "deadline": live.deadline if dealt else None,
        "turn_seconds": core.turn_seconds if live.in_round else core.lobby_seconds,
        "in_round": live.in_round,
        "commitment": live.view.commitment if live.in_round else "",
        "dealing": not dealt,
        "no_dm": viewer in live.view.dm_failed,
        "language": language,
        "strings": page_strings(language),
        **kind.app_part(live, viewer if dealt else SPECTATOR, language),
        "results": _results(live, language),
        "pause_until": live.pause_until or None,
    }
    if engine.closed and live.summary is not None and live.summary.played:
        ended: EndedTableJSON = {**view, "summary": summary_card(live.summary, language, zone)}
        return ended
    return view


def _results(live: LiveTable, language: str) -> ResultsJSON | None:
    """The last show-down: hands named, who won what (cards only as the table message shows them);
    the banker first (muxi). Not while an all-in's cards are still being dealt one by one; kept
    through the pause and the next deal, until the next round's first move (issue 49, point 4)."""
    view = live.view
    moved = live.in_round and live.engine.version > view.dealt_version
    if not view.results or live.reveal is not None or moved:
        return None
    line_of = KINDS[live.game].app_result_line
    lines = [line_of(live, line, language) for line in view.results]
    lines.sort(key=lambda line: not line["banker"])
    return {"round": view.results_round, "reason": view.end_reason, "lines": lines}
