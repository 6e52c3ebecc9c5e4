"""Read-only questions the bot asks: leaderboards, a person's statistics, rounds with their proofs.

Storage functions (``storage/sql.py``); ``Store`` runs each on its reader.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from storage.models import GAMES, GameStats, LeaderRow, PersonStats, RoundResult, SavedRound
from storage.sql import Query, marks, rows
from storage.timeutil import from_db_required

ROUND_COLUMNS = "id, table_id, chat_id, game, round_no, commitment, deck, salt, created_at"


def chat_leaderboard(chat_id: int, limit: int) -> Query[list[LeaderRow]]:
    """People who played in a chat (coins moved at its tables, or a round recorded), by net won there."""
    found = yield from rows(
        """
        WITH money AS (
            SELECT l.person_id AS pid, SUM(l.delta) AS net
            FROM tables t JOIN ledger l ON l.table_id = t.id
            WHERE t.chat_id = ? AND l.person_id IS NOT NULL
            GROUP BY l.person_id),
        played AS (
            SELECT rr.person_id AS pid, COUNT(*) AS n
            FROM rounds r JOIN round_results rr ON rr.round_id = r.id
            WHERE r.chat_id = ?
            GROUP BY rr.person_id),
        ids AS (SELECT pid FROM money UNION SELECT pid FROM played)
        SELECT ids.pid AS pid, p.name AS name, COALESCE(money.net, 0) AS coins,
               COALESCE(played.n, 0) AS rounds
        FROM ids JOIN people p ON p.id = ids.pid
        LEFT JOIN money ON money.pid = ids.pid LEFT JOIN played ON played.pid = ids.pid
        ORDER BY coins DESC, rounds DESC, pid
        LIMIT ?
        """,
        (chat_id, chat_id, limit),
    )
    return _ranked(found)


def global_leaderboard(limit: int) -> Query[list[LeaderRow]]:
    """Everyone, by balance."""
    found = yield from rows(
        """
        SELECT p.id AS pid, p.name AS name, p.balance AS coins,
               (SELECT COUNT(*) FROM round_results rr WHERE rr.person_id = p.id) AS rounds
        FROM people p ORDER BY p.balance DESC, p.id LIMIT ?
        """,
        (limit,),
    )
    return _ranked(found)


def _ranked(found: Iterable[Any]) -> list[LeaderRow]:
    return [
        LeaderRow(rank=i, person_id=row["pid"], name=row["name"], coins=row["coins"], rounds=row["rounds"])
        for i, row in enumerate(found, start=1)
    ]


def person_stats(person_id: int) -> Query[PersonStats]:
    """Rounds played and won and net coins, per game (every known game listed) and in all."""
    found = yield from rows(
        """
        SELECT r.game AS game, COUNT(*) AS rounds, SUM(rr.won) AS won, SUM(rr.net) AS net
        FROM round_results rr JOIN rounds r ON r.id = rr.round_id
        WHERE rr.person_id = ? GROUP BY r.game
        """,
        (person_id,),
    )
    by_game = {row["game"]: GameStats(row["game"], row["rounds"], row["won"], row["net"]) for row in found}
    games = tuple(by_game.get(game, GameStats(game)) for game in GAMES)
    total = GameStats(
        "all",
        sum(g.rounds for g in by_game.values()),
        sum(g.won for g in by_game.values()),
        sum(g.net for g in by_game.values()),
    )
    return PersonStats(person_id, games, total)


def hands_held(person_id: int) -> Query[dict[str, tuple[str, ...]]]:
    """Every hand (kind or category name) the person has shown in a recorded round, per game."""
    found = yield from rows(
        """
        SELECT DISTINCT r.game AS game, rr.hand AS hand
        FROM round_results rr JOIN rounds r ON r.id = rr.round_id
        WHERE rr.person_id = ? AND rr.hand IS NOT NULL ORDER BY r.game, rr.hand
        """,
        (person_id,),
    )
    held: dict[str, list[str]] = {}
    for row in found:
        held.setdefault(row["game"], []).append(row["hand"])
    return {game: tuple(hands) for game, hands in held.items()}


def last_rounds(*, chat_id: int | None, table_id: int | None, limit: int) -> Query[list[SavedRound]]:
    """The last ``limit`` rounds of a table or of a chat, newest first, with results and proofs."""
    if (chat_id is None) == (table_id is None):
        raise ValueError("give exactly one of chat_id and table_id")
    column, value = ("chat_id", chat_id) if chat_id is not None else ("table_id", table_id)
    found = yield from rows(
        f"SELECT {ROUND_COLUMNS} FROM rounds WHERE {column} = ? ORDER BY id DESC LIMIT ?", (value, limit)
    )
    return (yield from _with_results(found))


def get_round(table_id: int, round_no: int) -> Query[SavedRound | None]:
    found = yield from rows(
        f"SELECT {ROUND_COLUMNS} FROM rounds WHERE table_id = ? AND round_no = ?", (table_id, round_no)
    )
    with_results = yield from _with_results(found)
    return with_results[0] if with_results else None


def _with_results(found: list[Any]) -> Query[list[SavedRound]]:
    if not found:
        return []
    ids = [row["id"] for row in found]
    results: dict[int, list[RoundResult]] = {i: [] for i in ids}
    for r in (
        yield from rows(
            "SELECT round_id, person_id, net, won, hand, cards FROM round_results"
            f" WHERE round_id IN ({marks(len(ids))}) ORDER BY round_id, net DESC, person_id",
            ids,
        )
    ):
        results[r["round_id"]].append(
            RoundResult(r["person_id"], r["net"], bool(r["won"]), r["hand"], r["cards"])
        )
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
        for row in found
    ]
