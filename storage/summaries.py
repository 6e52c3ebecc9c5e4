"""A table's 总结算 (its final summary) as the store keeps it: its rounds with their proofs and the
coins that changed hands in each, each person's net over the whole table, every hand shown.

Storage functions (``storage/sql.py``); ``Store`` runs each on its reader. What is made of them
(the big winner, the best hand, the biggest round) is the bot's: ``bot/display/views/summary.py``.
"""

from __future__ import annotations

from storage.models import SummaryHand, SummaryNet, SummaryRound, TableSummary
from storage.sql import Query, first, rows
from storage.timeutil import from_db_required

#: Tables /history lists at most (newest first).
RECENT_TABLES = 5


def table_summary(table_id: int) -> Query[TableSummary | None]:
    """The summary of one table (None: no such table). Each net is the sum of the person's
    round results there (as the table's running score 本场输赢 adds them up), best first; ties
    by rounds won, then by who is first known."""
    table = yield from first(
        "SELECT id, chat_id, game, closed, created_at, updated_at FROM tables WHERE id = ?", (table_id,)
    )
    if table is None:
        return None
    found_rounds = yield from rows(
        """
        SELECT r.round_no AS round_no, r.commitment AS commitment, COUNT(rr.person_id) AS people,
               COALESCE(SUM(CASE WHEN rr.net > 0 THEN rr.net ELSE 0 END), 0) AS moved
        FROM rounds r LEFT JOIN round_results rr ON rr.round_id = r.id
        WHERE r.table_id = ?
        GROUP BY r.id, r.round_no, r.commitment
        ORDER BY r.round_no
        """,
        (table_id,),
    )
    found_nets = yield from rows(
        """
        SELECT rr.person_id AS pid, p.name AS name, SUM(rr.net) AS net, COUNT(*) AS rounds,
               SUM(rr.won) AS won
        FROM rounds r JOIN round_results rr ON rr.round_id = r.id JOIN people p ON p.id = rr.person_id
        WHERE r.table_id = ?
        GROUP BY rr.person_id, p.name
        ORDER BY net DESC, won DESC, MIN(r.round_no), rr.person_id
        """,
        (table_id,),
    )
    found_hands = yield from rows(
        """
        SELECT rr.person_id AS pid, p.name AS name, r.round_no AS round_no, rr.hand AS hand,
               rr.cards AS cards
        FROM rounds r JOIN round_results rr ON rr.round_id = r.id JOIN people p ON p.id = rr.person_id
        WHERE r.table_id = ? AND rr.hand IS NOT NULL
        ORDER BY r.round_no, rr.person_id
        """,
        (table_id,),
    )
    return TableSummary(
        table_id=table["id"],
        chat_id=table["chat_id"],
        game=table["game"],
        closed=bool(table["closed"]),
        created_at=from_db_required(table["created_at"]),
        ended_at=from_db_required(table["updated_at"]),
        rounds=tuple(
            SummaryRound(row["round_no"], row["commitment"], int(row["people"]), int(row["moved"]))
            for row in found_rounds
        ),
        nets=tuple(
            SummaryNet(row["pid"], row["name"], int(row["net"]), int(row["rounds"]), int(row["won"]))
            for row in found_nets
        ),
        hands=tuple(
            SummaryHand(row["pid"], row["name"], row["round_no"], row["hand"], row["cards"])
            for row in found_hands
        ),
    )


def chat_tables(chat_id: int, limit: int = RECENT_TABLES) -> Query[list[TableSummary]]:
    """The summaries of a chat's last ``limit`` tables where a round was played, newest first (the
    open one too, if a round was played at it: ``closed`` says which)."""
    ids = yield from rows(
        """
        SELECT t.id AS id FROM tables t
        WHERE t.chat_id = ? AND EXISTS (
            SELECT 1 FROM rounds r JOIN round_results rr ON rr.round_id = r.id WHERE r.table_id = t.id)
        ORDER BY t.id DESC LIMIT ?
        """,
        (chat_id, limit),
    )
    summaries = []
    for row in ids:
        found = yield from table_summary(row["id"])
        if found is not None:
            summaries.append(found)
    return summaries
