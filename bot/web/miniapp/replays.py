"""The Mini App's replay route (回放): ``GET <prefix>api/replay?table=<id>&round=<no>``.

Who asks is Telegram's signed initData (in the ``X-Telegram-Init-Data`` header, as for every API
request: missing, forged or stale gets 401). The app must have been opened for that round (its
link's ``startapp=r<table>_<round>``, ``bot.display.replay.startapp_of``: else 403), and the person
may watch it as they may see a table (``MiniApp.may_see``): they played in it, or the table knows
them, or they are a member of its group (asked of Telegram at a bounded cost: 503 when busy);
anyone else 403. Ids that are no numbers get 400, a round there is no record of 404. The replay is
read from the store (the round's record and its kept actions), so any worker answers it.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from aiohttp import web

from bot.display.i18n import t
from bot.display.replay import replay_view, startapp_of
from bot.tables.runtime import Runtime
from bot.web.miniapp.auth import WebAppUser
from bot.web.miniapp.members import Busy, Members
from bot.web.miniapp.view import page_strings
from games.errors import RuleError
from storage import SavedRound
from storage.jsontext import compact_json

log = logging.getLogger(__name__)
ROUTE = "api/replay"
NO_STORE = {"Cache-Control": "no-store"}


class MiniApp(Protocol):
    """What the route uses of the Mini App's routes (``bot/web/miniapp/routes.py``)."""

    members: Members

    def who(self, request: web.Request) -> WebAppUser: ...
    def runtime(self) -> Runtime: ...
    async def language(self, runtime: Runtime, person: WebAppUser) -> str: ...
    def refuse(
        self, status: int, code: str, text: str, cause: str, retry_after: int | None = None
    ) -> web.HTTPException: ...


def _number(text: str, digits: int) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= digits else None


async def replay(app: MiniApp, request: web.Request) -> web.Response:
    """A finished round's replay, as the asking person may watch it (``bot/display/replay.py``)."""
    person = app.who(request)
    table, round_no = _number(request.query.get("table", ""), 18), _number(request.query.get("round", ""), 9)
    if table is None or round_no is None:
        raise app.refuse(400, "bad_request", "table and round, as numbers, please", "a malformed replay")
    if person.start_param != startapp_of(table, round_no):
        raise app.refuse(403, "forbidden", "not the round this app was opened for", "another round")
    runtime = app.runtime()
    language = await app.language(runtime, person)
    record = await runtime.store.get_round(table, round_no)
    if record is None:
        raise app.refuse(404, "no_round", t(language, "replay.none"), "no such round")
    moves = await runtime.store.round_moves(table, round_no)
    saved = await runtime.store.load_table(table)
    names = {**_names(moves.before if moves else None), **_names(saved.state if saved else None)}
    if not await _may_watch(app, record, names, person.id, language):
        raise app.refuse(403, "forbidden", "not a member of the round's group", "not a member")
    username = runtime.bot.username or None  # (for the "🔓 /verify" deep link)
    try:
        view = replay_view(record, moves, names, person.id, language, page_strings(language), username)
    except (RuleError, ValueError, KeyError, TypeError):  # what was kept is not this round's
        log.exception("table %s round %s: its kept actions do not replay", table, round_no)
        view = replay_view(record, None, names, person.id, language, page_strings(language), username)
    # (what one person may see: never kept by a cache on the way)
    return web.Response(text=compact_json(view), content_type="application/json", headers=NO_STORE)


async def _may_watch(
    app: MiniApp, record: SavedRound, names: dict[int, str], person: int, language: str
) -> bool:
    """Those who played it or whom the table knows, and the members of its group."""
    if person in names or any(result.person_id == person for result in record.results):
        return True
    try:
        return await app.members.is_member(record.chat_id, person)
    except Busy as busy:
        busy_text = t(language, "miniapp.busy")
        raise app.refuse(503, "busy", busy_text, "membership checks busy", busy.retry_after) from None


def _names(state: Any) -> dict[int, str]:
    """The names a table's saved state knows (its view's), by person."""
    view = state.get("view") if isinstance(state, dict) else None
    names = view.get("names") if isinstance(view, dict) else None
    if not isinstance(names, dict):
        return {}
    return {int(person): str(text) for person, text in names.items() if str(person).isdigit()}
