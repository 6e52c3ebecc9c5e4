"""A table's 总结算 (final summary), once it ends: the group's message, each person's line in their
DM, the Mini App's card, and a table's line in /history. Pure: the summary as the store keeps it
(``storage.TableSummary``) in, text out.

What it names besides each person's net (best first):

- the big winner (大赢家): the best net, if anyone came out ahead;
- the best hand shown (最大牌型): ranked by the game's own order (``games.muxi.compare``,
  ``games.showhand.compare``) from the cards its show-down showed; a hand recorded before cards
  were kept is ranked by its kind's place in the game's list of kinds; a tie goes to the earlier;
- the biggest round (最大一局): the round in which the most coins changed hands, counted as what
  the winners took (the sum of the positive nets): one measure for both games (a muxi round has
  no pot: each player settles with the banker), and for showhand what the winners took from the
  others (the pot less their own share); a tie goes to the earlier;
- each round's shuffle commitment (short) and the ``/verify`` command that checks it.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from datetime import datetime, tzinfo
from typing import TypedDict

from bot.display.i18n import t
from bot.display.views.common import cards_text, name, short_hash, signed
from bot.display.views.muxi import hand_label
from bot.display.views.showdown import hand_name
from games import muxi, showhand
from games.cards import Card, parse_cards
from storage import SummaryHand, SummaryNet, SummaryRound, TableSummary

MEDALS = ("🥇", "🥈", "🥉")
PROOFS_SHOWN = 8  # rounds whose commitment the group message lists (the rest: /history <table>)
RULE = "━━━━━━━━━━"  # between the parts of the message (as wide as a phone's narrowest line)
NBSP = "\u00a0"
_TAGS = re.compile(r"</?[a-z]+>")

_KIND_ORDER: dict[str, list[str]] = {
    "muxi": [kind.value for kind in muxi.Kind],
    "showhand": [category.value for category in showhand.Category],
}


# -- what is made of the summary ---------------------------------------------------------------------
def big_winner(summary: TableSummary) -> SummaryNet | None:
    """The best net, if anyone came out ahead (the nets are best first)."""
    return summary.nets[0] if summary.nets and summary.nets[0].net > 0 else None


def biggest_round(summary: TableSummary) -> SummaryRound | None:
    """The round in which the most coins changed hands (see the module's docstring); the earlier of
    two alike; None when no coin changed hands."""
    best = max(summary.rounds, key=lambda found: (found.moved, -found.round_no), default=None)
    return best if best is not None and best.moved > 0 else None


def _cards(shown: SummaryHand) -> list[Card] | None:
    try:
        return parse_cards(shown.cards) if shown.cards else None
    except ValueError:
        return None


def _compare_cards(game: str, a: list[Card], b: list[Card]) -> int | None:
    """The game's own comparison (> 0: ``a`` is better); None if either is no hand of the game."""
    try:
        if game == "muxi":
            return muxi.compare(muxi.evaluate(a), muxi.evaluate(b))
        return showhand.compare(showhand.evaluate(a), showhand.evaluate(b))
    except ValueError:
        return None


def _compare_hands(game: str, a: SummaryHand, b: SummaryHand) -> int:
    """> 0 when ``a`` is the better hand: by their cards where both are kept, else by their kinds'
    places in the game's list; a tie goes to the earlier round."""
    cards_a, cards_b = _cards(a), _cards(b)
    by_cards = _compare_cards(game, cards_a, cards_b) if cards_a and cards_b else None
    if by_cards:
        return by_cards
    if by_cards is None:
        order = _KIND_ORDER[game]
        place_a = order.index(a.hand) if a.hand in order else len(order)
        place_b = order.index(b.hand) if b.hand in order else len(order)
        if place_a != place_b:
            return place_b - place_a
    return b.round_no - a.round_no


def best_hand(summary: TableSummary) -> SummaryHand | None:
    """The best hand shown at the table (see the module's docstring)."""
    known = [shown for shown in summary.hands if shown.hand in _KIND_ORDER[summary.game]]
    if not known:
        return None
    return max(known, key=functools.cmp_to_key(functools.partial(_compare_hands, summary.game)))


def hand_text(game: str, shown: SummaryHand, language: str) -> tuple[str, str]:
    """The hand as players say it (双倍天公9, 葫芦 J 带 8), and its cards where they were kept ("")."""
    cards = _cards(shown)
    try:
        if cards and game == "muxi":
            judged = muxi.evaluate(cards)
            label = hand_label(judged.kind.value, judged.points, language)
        elif cards:
            label = hand_name(showhand.evaluate(cards), language)
        else:
            raise ValueError("no cards kept")
    except ValueError:
        return t(
            language, f"{'muxi.kind' if game == 'muxi' else 'showhand.category'}.{shown.hand}"
        ).strip(), ""
    return label, cards_text(cards, language)


def round_count(count: int, language: str) -> str:
    """``5 局`` / ``5 rounds`` (``1 round``)."""
    return t(language, "summary.one_round" if count == 1 else "summary.round_count", n=count)


def rank_of(summary: TableSummary, person: int) -> int | None:
    """Their place (1: the best net; those level share a place), None if they played no round."""
    nets = [line.net for line in summary.nets]
    mine = next((line.net for line in summary.nets if line.person_id == person), None)
    return None if mine is None else 1 + sum(1 for net in nets if net > mine)


# -- the group's message -----------------------------------------------------------------------------
def _title(summary: TableSummary, language: str) -> str:
    return t(language, "summary.title", game=t(language, f"{summary.game}.title"), table=summary.table_id)


def when(summary: TableSummary, zone: tzinfo, language: str) -> str:
    """When the table was played: ``12月4日 21:05–21:48`` (``Dec 4, 21:05–21:48``)."""
    start, end = summary.created_at.astimezone(zone), summary.ended_at.astimezone(zone)
    until = f"{end:%H:%M}" if end.date() == start.date() else _short_day(end, language) + f" {end:%H:%M}"
    return t(language, "summary.when", day=_short_day(start, language), start=f"{start:%H:%M}", end=until)


def _short_day(moment: datetime, language: str) -> str:
    """``12月4日`` / ``Dec 4`` (the catalog's month names, whatever the process's locale)."""
    month = t(language, "summary.months").split()[moment.month - 1]
    return t(language, "summary.date", month=month, day=moment.day)


def net_lines(nets: Sequence[SummaryNet], summary: TableSummary, language: str) -> list[str]:
    """Each person's net over the table, best first: medals for the first three places."""
    lines = []
    for line in nets:
        rank = rank_of(summary, line.person_id) or 0
        mark = MEDALS[rank - 1] if rank <= len(MEDALS) else t(language, "summary.place", rank=rank)
        lines.append(t(language, "summary.net", mark=mark, name=name(line.name), net=signed(line.net)))
    return lines


def highlight_lines(summary: TableSummary, language: str) -> list[str]:
    """The big winner, the best hand, the biggest round (each when there is one)."""
    lines = []
    if (winner := big_winner(summary)) is not None:
        lines.append(t(language, "summary.big_winner", name=name(winner.name), net=signed(winner.net)))
    if (shown := best_hand(summary)) is not None:
        hand, cards = hand_text(summary.game, shown, language)
        lines.append(t(language, "summary.best_hand", name=name(shown.name), hand=hand, round=shown.round_no))
        if cards:  # (on a line of their own: five cards and a hand's name overflow a phone's line)
            lines.append(t(language, "summary.best_cards", cards=cards))
    if (biggest := biggest_round(summary)) is not None:
        lines.append(
            t(language, "summary.biggest_round", round=biggest.round_no, amount=f"{biggest.moved:,}")
        )
    return lines


def proof_lines(summary: TableSummary, language: str) -> list[str]:
    """Each played round's commitment, short (the first ``PROOFS_SHOWN``; the rest in /history),
    and the command that checks one."""
    played = [found for found in summary.rounds if found.people]
    each = [  # (a round's number and hash never split across two lines: a no-break space)
        t(language, "summary.proof", round=found.round_no, hash=short_hash(found.commitment)).replace(
            " ", NBSP
        )
        for found in played[:PROOFS_SHOWN]
    ]
    lines = [t(language, "summary.proofs", proofs="  ".join(each))]
    if len(played) > PROOFS_SHOWN:
        lines.append(
            t(language, "summary.more_proofs", count=len(played) - PROOFS_SHOWN, table=summary.table_id)
        )
    lines.append(t(language, "summary.verify", table=summary.table_id))
    return lines


def summary_text(summary: TableSummary, language: str, zone: tzinfo, reason: str = "") -> str:
    """The group's message when the table ends (``reason``: its ``closed.*`` key's last part, if
    known): worth a screenshot, and narrow enough for a phone."""
    lines = [_title(summary, language)]
    meta = (
        t(language, "summary.rounds", rounds=round_count(summary.played, language))
        + " · "
        + when(summary, zone, language)
    )
    lines.append(meta)
    if reason:
        lines.append(t(language, "summary.reason", reason=t(language, f"closed.{reason}")))
    lines += [RULE, *net_lines(summary.nets, summary, language), RULE]
    lines += highlight_lines(summary, language)
    lines += proof_lines(summary, language)
    return "\n".join(lines)


# -- a person's DM -----------------------------------------------------------------------------------
def dm_line(summary: TableSummary, person: int, language: str) -> str | None:
    """``person``'s own line of the 总结算, for their DM (None: they played no round there)."""
    mine = next((line for line in summary.nets if line.person_id == person), None)
    rank = rank_of(summary, person)
    if mine is None or rank is None:
        return None
    key = "summary.dm_winner" if big_winner(summary) == mine else "summary.dm"
    return t(
        language,
        key,
        table=summary.table_id,
        rounds=round_count(summary.played, language),
        net=signed(mine.net),
        rank=rank,
        people=len(summary.nets),
    )


# -- /history ----------------------------------------------------------------------------------------
def history_line(summary: TableSummary, language: str, zone: tzinfo) -> str:
    """A table's line in /history: game, day, rounds, the big winner, its number (to ask for its
    rounds); a table still open says so."""
    start = summary.created_at.astimezone(zone)
    day = _short_day(start, language) + f" {start:%H:%M}"
    winner = big_winner(summary)
    won = (
        t(language, "summary.history_winner", name=name(winner.name), net=signed(winner.net))
        if winner is not None
        else t(language, "summary.history_even")
    )
    key = "summary.history_table" if summary.closed else "summary.history_open"
    return t(
        language,
        key,
        game=t(language, f"{summary.game}.title"),
        table=summary.table_id,
        day=day,
        rounds=round_count(summary.played, language),
        winner=won,
    )


# -- the Mini App's card -----------------------------------------------------------------------------
class SummaryNetJSON(TypedDict):
    person: int  # (the page marks its viewer's own line)
    mark: str  # 🥇 … or "4."
    name: str
    net: int
    net_text: str


class SummaryJSON(TypedDict):
    """A closed table's 总结算, as the Mini App draws its card (texts in the viewer's language)."""

    title: str
    meta: str
    nets: list[SummaryNetJSON]
    highlights: list[str]
    proofs: list[str]


def summary_card(summary: TableSummary, language: str, zone: tzinfo) -> SummaryJSON:
    """The Mini App's card: the same as the group's message (the page marks its viewer's line). Its
    texts are plain (the page sets them as text: no HTML)."""
    nets: list[SummaryNetJSON] = []
    for line in summary.nets:
        rank = rank_of(summary, line.person_id) or 0
        mark = MEDALS[rank - 1] if rank <= len(MEDALS) else t(language, "summary.place", rank=rank)
        nets.append(
            {
                "person": line.person_id,
                "mark": mark,
                "name": _plain(name(line.name)),
                "net": line.net,
                "net_text": signed(line.net),
            }
        )
    return {
        "title": _plain(_title(summary, language)),
        "meta": t(language, "summary.rounds", rounds=round_count(summary.played, language))
        + " · "
        + when(summary, zone, language),
        "nets": nets,
        "highlights": [_plain(line) for line in highlight_lines(summary, language)],
        "proofs": [_plain(line) for line in proof_lines(summary, language)],
    }


def _plain(text: str) -> str:
    """A line of the message without its HTML (the page shows text as text)."""
    return html.unescape(_TAGS.sub("", text))
