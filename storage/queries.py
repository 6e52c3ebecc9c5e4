"""Read-only questions the bot asks: leaderboards, a person's statistics, rounds with their proofs.

Plain functions on a ``sqlite3.Connection``; ``Store`` runs each on its reader's thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from storage.models import GAMES, GameStats, LeaderRow, PersonStats, RoundResult, SavedRound
from storage.timeutil import from_db_required

ROUND_COLUMNS = "id, table_id, chat_id, game, round_no, commitment, deck, salt, created_at"


def chat_leaderboard(db: sqlite3.Connection, chat_id: int, limit: int) -> list[LeaderRow]:
    """People who played in a chat (coins moved at its tables, or a round recorded), by net won there."""
    rows = db.execute(
        """
        WITH money AS (
            SELECT l.person_id AS pid, SUM(l.delta) AS net
            FROM tables t JOIN ledger l ON l.table_id = t.id
            WHERE t.chat_id = :chat AND l.person_id IS NOT NULL
            GROUP BY l.person_id),
        played AS (
            SELECT rr.person_id AS pid, COUNT(*) AS n
            FROM rounds r JOIN round_results rr ON rr.round_id = r.id
            WHERE r.chat_id = :chat
            GROUP BY rr.person_id),
        ids AS (SELECT pid FROM money UNION SELECT pid FROM played)
        SELECT ids.pid AS pid, p.name AS name, COALESCE(money.net, 0) AS coins,
               COALESCE(played.n, 0) AS rounds
        FROM ids JOIN people p ON p.id = ids.pid
        LEFT JOIN money ON money.pid = ids.pid LEFT JOIN played ON played.pid = ids.pid
        ORDER BY coins DESC, rounds DESC, pid
        LIMIT :limit
        """,
        {"chat": chat_id, "limit": limit},
    ).fetchall()
    return _ranked(rows)


def global_leaderboard(db: sqlite3.Connection, limit: int) -> list[LeaderRow]:
    """Everyone, by balance."""
    rows = db.execute(
        """
        SELECT p.id AS pid, p.name AS name, p.balance AS coins,
               (SELECT COUNT(*) FROM round_results rr WHERE rr.person_id = p.id) AS rounds
        FROM people p ORDER BY p.balance DESC, p.id LIMIT ?
        """,
        (limit,),
    ).fetchall()
    return _ranked(rows)


def _ranked(rows: Iterable[sqlite3.Row]) -> list[LeaderRow]:
    return [
        LeaderRow(rank=i, person_id=row["pid"], name=row["name"], coins=row["coins"], rounds=row["rounds"])
        for i, row in enumerate(rows, start=1)
    ]


def person_stats(db: sqlite3.Connection, person_id: int) -> PersonStats:
    """Rounds played and won and net coins, per game (every known game listed) and in all."""
    rows = db.execute(
        """
        SELECT r.game AS game, COUNT(*) AS rounds, SUM(rr.won) AS won, SUM(rr.net) AS net
        FROM round_results rr JOIN rounds r ON r.id = rr.round_id
        WHERE rr.person_id = ? GROUP BY r.game
        """,
        (person_id,),
    ).fetchall()
    by_game = {row["game"]: GameStats(row["game"], row["rounds"], row["won"], row["net"]) for row in rows}
    games = tuple(by_game.get(game, GameStats(game)) for game in GAMES)
    total = GameStats(
        "all",
        sum(g.rounds for g in by_game.values()),
        sum(g.won for g in by_game.values()),
        sum(g.net for g in by_game.values()),
    )
    return PersonStats(person_id, games, total)


def hands_held(db: sqlite3.Connection, person_id: int) -> dict[str, tuple[str, ...]]:
    """Every hand (kind or category name) the person has shown in a recorded round, per game."""
    rows = db.execute(
        """
        SELECT DISTINCT r.game AS game, rr.hand AS hand
        FROM round_results rr JOIN rounds r ON r.id = rr.round_id
        WHERE rr.person_id = ? AND rr.hand IS NOT NULL ORDER BY r.game, rr.hand
        """,
        (person_id,),
    ).fetchall()
    held: dict[str, list[str]] = {}
    for row in rows:
        held.setdefault(row["game"], []).append(row["hand"])
    return {game: tuple(hands) for game, hands in held.items()}


def last_rounds(
    db: sqlite3.Connection, *, chat_id: int | None, table_id: int | None, limit: int
) -> list[SavedRound]:
    """The last ``limit`` rounds of a table or of a chat, newest first, with results and proofs."""
    if (chat_id is None) == (table_id is None):
        raise ValueError("give exactly one of chat_id and table_id")
    column, value = ("chat_id", chat_id) if chat_id is not None else ("table_id", table_id)
    rows = db.execute(
        f"SELECT {ROUND_COLUMNS} FROM rounds WHERE {column} = ? ORDER BY id DESC LIMIT ?", (value, limit)
    ).fetchall()
    return _with_results(db, rows)


def get_round(db: sqlite3.Connection, table_id: int, round_no: int) -> SavedRound | None:
    rows = db.execute(
        f"SELECT {ROUND_COLUMNS} FROM rounds WHERE table_id = ? AND round_no = ?", (table_id, round_no)
    ).fetchall()
    found = _with_results(db, rows)
    return found[0] if found else None


def _with_results(db: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[SavedRound]:
    if not rows:
        return []
    ids = [row["id"] for row in rows]
    marks = ",".join("?" * len(ids))
    results: dict[int, list[RoundResult]] = {i: [] for i in ids}
    for r in db.execute(
        f"SELECT round_id, person_id, net, won, hand FROM round_results WHERE round_id IN ({marks})"
        " ORDER BY round_id, net DESC, person_id",
        ids,
    ).fetchall():
        results[r["round_id"]].append(RoundResult(r["person_id"], r["net"], bool(r["won"]), r["hand"]))
    return [
        SavedRound(
            id=row["id"],
            table_id=row["table_id"],
            chat_id=row["chat_id"],
            game=row["game"],
            round_no=row["round_no"],
            commitment=row["commitment"],
            deck=row["deck"],
            salt=row["salt"],
            created_at=from_db_required(row["created_at"]),
            results=tuple(results[row["id"]]),
        )
        for row in rows
    ]
