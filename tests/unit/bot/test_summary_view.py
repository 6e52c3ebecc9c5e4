"""A table's 总结算 in players' words (bot/display/views/summary.py), in all three languages: the
group's message, a person's DM line, a table's /history line, the Mini App's card; what it picks
(the big winner, the best hand by the game's own order, the biggest round)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.display.views.summary import (
    best_hand,
    big_winner,
    biggest_round,
    dm_line,
    history_line,
    rank_of,
    summary_card,
    summary_text,
)
from storage import SummaryHand, SummaryNet, SummaryRound, TableSummary

SHANGHAI = ZoneInfo("Asia/Shanghai")
START = datetime(2026, 12, 4, 13, 5, tzinfo=UTC)  # 21:05 in Shanghai
END = datetime(2026, 12, 4, 13, 48, tzinfo=UTC)


def muxi_table(**changes) -> TableSummary:
    """Table 12: four people, five rounds played and a sixth nobody banked."""
    fields = dict(
        table_id=12,
        chat_id=-1,
        game="muxi",
        closed=True,
        created_at=START,
        ended_at=END,
        rounds=(
            SummaryRound(1, "a1" * 32, 4, 300),
            SummaryRound(2, "b2" * 32, 4, 1_500),
            SummaryRound(3, "c3" * 32, 4, 200),
            SummaryRound(4, "d4" * 32, 4, 1_500),
            SummaryRound(5, "e5" * 32, 4, 600),
            SummaryRound(6, "f6" * 32, 0, 0),
        ),
        nets=(
            SummaryNet(1, "阿强", 1_200, 5, 3),
            SummaryNet(2, "小红", 300, 5, 2),
            SummaryNet(3, "Bob", -200, 5, 1),
            SummaryNet(4, "老王<script>", -1_300, 5, 0),
        ),
        hands=(
            # A double of 2 points is a kind above "normal" in the list, but 9 points beat it
            # (RULES.md 1.2): by the cards, the 9-point hand is better.
            SummaryHand(2, "小红", 1, "double", "AH AD"),
            SummaryHand(1, "阿强", 2, "normal", "4H 5S KD"),
            SummaryHand(3, "Bob", 3, "normal", "2H 3S"),
        ),
    )
    fields.update(changes)
    return TableSummary(**fields)


# Each played round's short commitment (a no-break space inside each: one never splits in two).
PROOFS = "  ".join(f"#{n}\u00a0{h * 2}…{h[1]}{h}" for n, h in enumerate(("a1", "b2", "c3", "d4", "e5"), 1))

TEXTS = {
    "zh-hans": [
        "🏁 <b>总结算</b> · 🀄 木虱 第 12 桌",
        "共 5 局 · 12月4日 21:05–21:48",
        "牌局结束：无人当庄",
        "━━━━━━━━━━",
        "🥇 阿强  <b>+1,200</b>",
        "🥈 小红  <b>+300</b>",
        "🥉 Bob  <b>−200</b>",
        "4. 老王&lt;script&gt;  <b>−1,300</b>",
        "━━━━━━━━━━",
        "👑 大赢家：阿强 +1,200",
        "🃏 最大牌型：阿强 9点 普通（第 2 局）",
        "    4♥️ 5♠︎ K♦️",
        "💰 最大一局：第 2 局，易手 1,500",
        f"🔐 洗牌承诺：{PROOFS}",
        "核对某一局：/verify 12 局号",
    ],
    "zh-hant": [
        "🏁 <b>總結算</b> · 🀄 木蝨 第 12 桌",
        "共 5 局 · 12月4日 21:05–21:48",
        "牌局結束：無人當莊",
        "━━━━━━━━━━",
        "🥇 阿强  <b>+1,200</b>",
        "🥈 小红  <b>+300</b>",
        "🥉 Bob  <b>−200</b>",
        "4. 老王&lt;script&gt;  <b>−1,300</b>",
        "━━━━━━━━━━",
        "👑 大贏家：阿强 +1,200",
        "🃏 最大牌型：阿强 9點 普通（第 2 局）",
        "    4♥️ 5♠︎ K♦️",
        "💰 最大一局：第 2 局，易手 1,500",
        f"🔐 洗牌承諾：{PROOFS}",
        "核對某一局：/verify 12 局號",
    ],
    "en": [
        "🏁 <b>Final tally</b> · 🀄 Muxi table 12",
        "5 rounds · Dec 4, 21:05–21:48",
        "Table closed: nobody would be banker",
        "━━━━━━━━━━",
        "🥇 阿强  <b>+1,200</b>",
        "🥈 小红  <b>+300</b>",
        "🥉 Bob  <b>−200</b>",
        "4. 老王&lt;script&gt;  <b>−1,300</b>",
        "━━━━━━━━━━",
        "👑 Big winner: 阿强 +1,200",
        "🃏 Best hand: 阿强, 9 pts Normal (round 2)",
        "    4♥️ 5♠︎ K♦️",
        "💰 Biggest round: round 2, 1,500 changed hands",
        f"🔐 Shuffle commitments: {PROOFS}",
        "Check a round: /verify 12 [round]",
    ],
}


@pytest.mark.parametrize("language", ["zh-hans", "zh-hant", "en"])
def test_the_groups_message_in_every_language(language):
    text = summary_text(muxi_table(), language, SHANGHAI, "no_banker")
    print(text)  # (read it: pytest -s)
    assert text.splitlines() == TEXTS[language]


DMS = {
    "zh-hans": (
        "🏁 第 12 桌总结算（共 5 局）：本场 +1,200，第 1 名（共 4 人）👑 大赢家",
        "🏁 第 12 桌总结算（共 5 局）：本场 −200，第 3 名（共 4 人）",
    ),
    "zh-hant": (
        "🏁 第 12 桌總結算（共 5 局）：本場 +1,200，第 1 名（共 4 人）👑 大贏家",
        "🏁 第 12 桌總結算（共 5 局）：本場 −200，第 3 名（共 4 人）",
    ),
    "en": (
        "🏁 Table 12 final tally (5 rounds): +1,200, place 1 of 4 👑 big winner",
        "🏁 Table 12 final tally (5 rounds): −200, place 3 of 4",
    ),
}


@pytest.mark.parametrize("language", ["zh-hans", "zh-hant", "en"])
def test_each_persons_line_for_their_dm(language):
    summary = muxi_table()
    assert (dm_line(summary, 1, language), dm_line(summary, 3, language)) == DMS[language]
    assert dm_line(summary, 99, language) is None, "someone who played no round there has none"


HISTORY = {
    "zh-hans": ("🀄 木虱 第 12 桌 · 12月4日 21:05 · 5 局 · 👑 阿强 +1,200", "（进行中）", "1 局 · 不输不赢"),
    "zh-hant": ("🀄 木蝨 第 12 桌 · 12月4日 21:05 · 5 局 · 👑 阿强 +1,200", "（進行中）", "1 局 · 不輸不贏"),
    "en": ("🀄 Muxi table 12 · Dec 4 21:05 · 5 rounds · 👑 阿强 +1,200", "(playing)", "1 round · all even"),
}


@pytest.mark.parametrize("language", ["zh-hans", "zh-hant", "en"])
def test_a_tables_line_in_history(language):
    line, playing, even = HISTORY[language]
    assert history_line(muxi_table(), language, SHANGHAI) == line
    assert history_line(muxi_table(closed=False), language, SHANGHAI).endswith(playing)
    level = muxi_table(rounds=(SummaryRound(1, "ab" * 32, 2, 0),), nets=(SummaryNet(1, "A", 0, 1, 0),))
    assert even in history_line(level, language, SHANGHAI)


def test_what_it_picks():
    summary = muxi_table()
    assert big_winner(summary).person_id == 1
    assert biggest_round(summary).round_no == 2, "of two rounds alike, the earlier"
    assert best_hand(summary).person_id == 1, "9 points beat a 2-point double (the game's own order)"
    assert [rank_of(summary, person) for person in (1, 2, 3, 4, 99)] == [1, 2, 3, 4, None]
    level = muxi_table(nets=(SummaryNet(1, "A", 0, 1, 0), SummaryNet(2, "B", 0, 1, 0)))
    assert big_winner(level) is None and rank_of(level, 2) == 1, "nobody ahead: no big winner"
    quiet = muxi_table(rounds=(SummaryRound(1, "ab" * 32, 2, 0),), hands=())
    assert biggest_round(quiet) is None and best_hand(quiet) is None


def test_hands_recorded_without_cards_rank_by_their_kind():
    old = muxi_table(
        hands=(
            SummaryHand(1, "A", 1, "normal", None),
            SummaryHand(2, "B", 2, "straight", None),
            SummaryHand(3, "C", 3, "straight", None),
        )
    )
    shown = best_hand(old)
    assert (shown.person_id, shown.round_no) == (2, 2), "the better kind; of two alike, the earlier"
    assert "🃏 最大牌型：B 四倍 顺子（第 2 局）" in summary_text(old, "zh-hans", SHANGHAI)


def test_showhand_best_hand_by_its_cards_and_its_name():
    summary = muxi_table(
        table_id=13,
        game="showhand",
        hands=(
            SummaryHand(5, "Ann", 1, "full_house", "JS JH JC 8S 8H"),
            SummaryHand(6, "Ben", 2, "full_house", "QS QH QC 9S 9H"),
            SummaryHand(5, "Ann", 3, "flush", "AD JD 10D 9D 8D"),
        ),
    )
    assert best_hand(summary).person_id == 6
    text = summary_text(summary, "zh-hans", SHANGHAI)
    assert "🃏 最大牌型：Ben 葫芦 Q 带 9（第 2 局）\n    Q♠︎ Q♥️ Q♣︎ 9♠︎ 9♥️" in text
    assert "Ben, Full house, Queens over Nines (round 2)" in summary_text(summary, "en", SHANGHAI)


def test_many_rounds_point_to_history_for_the_rest_of_the_proofs():
    rounds = tuple(SummaryRound(n, f"{n:02d}" * 32, 2, 100) for n in range(1, 13))
    text = summary_text(muxi_table(rounds=rounds), "zh-hans", SHANGHAI)
    assert "#8\u00a0" in text and "#9\u00a0" not in text and "…另有 4 局：/history 12" in text


def test_a_table_over_midnight_names_both_days():
    ended = datetime(2026, 12, 4, 16, 30, tzinfo=UTC)  # 00:30 the next day in Shanghai
    text = summary_text(muxi_table(ended_at=ended), "zh-hans", SHANGHAI)
    assert "12月4日 21:05–12月5日 00:30" in text


@pytest.mark.parametrize("language", ["zh-hans", "zh-hant", "en"])
def test_the_mini_apps_card_is_the_message_as_plain_text(language):
    card = summary_card(muxi_table(), language, SHANGHAI)
    message = summary_text(muxi_table(), language, SHANGHAI).splitlines()
    assert card["title"] == message[0].replace("<b>", "").replace("</b>", "")
    assert card["meta"] == message[1]
    assert [line["net_text"] for line in card["nets"]] == ["+1,200", "+300", "−200", "−1,300"]
    assert card["nets"][3]["name"] == "老王<script>", "plain text: the page shows it as text"
    assert card["highlights"] == message[8:12]
    assert card["proofs"] == message[12:]
