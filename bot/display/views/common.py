"""What every screen shares: cards with suit symbols, coins with their sign, names made safe."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from bot.display.i18n import t
from bot.model.shown import Markup
from games.cards import BIG_JOKER, SMALL_JOKER, Card

# Red suits as emoji (♥️ ♦️: red on every phone, in either theme); black suits as text (♠︎ ♣︎, with
# the text-presentation selector): they take the text's colour, so they stay visible in Telegram's
# dark theme, where the black emoji ♠️ ♣️ all but vanish.
_SUITS = {"S": "♠\ufe0e", "H": "♥\ufe0f", "C": "♣\ufe0e", "D": "♦\ufe0f"}
MINUS = "−"
# Invisible characters a name never needs: bidirectional marks, embeddings, overrides and isolates,
# zero-width space, word joiner, BOM, soft hyphen, Mongolian vowel separator.
SPOOFING = frozenset(
    "\u061c\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff\u00ad\u180e"
)


def card_text(card: Card, language: str) -> str:
    if card.rank == BIG_JOKER:
        return t(language, "card.big_joker")
    if card.rank == SMALL_JOKER:
        return t(language, "card.small_joker")
    assert card.suit is not None
    return card.rank_token + _SUITS[card.suit.value]


def cards_text(cards: Iterable[Card], language: str) -> str:
    return " ".join(card_text(card, language) for card in cards)


def coins(amount: int) -> str:
    """``12,345``; negative amounts with a real minus sign."""
    return f"{MINUS}{-amount:,}" if amount < 0 else f"{amount:,}"


def signed(amount: int) -> str:
    """Money won or lost, with its sign: ``+1,400``, ``−800``, and ``0`` (no sign: "±0" reads oddly)."""
    return f"+{amount:,}" if amount > 0 else coins(amount)


def duration(seconds: float, language: str) -> str:
    """``30 秒``, ``5 分钟``: whole minutes in minutes, anything else in seconds (one style
    everywhere: a turn, a lobby's life, the settings)."""
    seconds = round(seconds)
    if seconds >= 60 and seconds % 60 == 0:
        return t(language, "time.minutes", n=seconds // 60)
    return t(language, "time.seconds", n=seconds)


def short_duration(seconds: float, language: str) -> str:
    """``30秒``, ``5分``: :func:`duration` in as few characters as a button of a full row needs."""
    seconds = round(seconds)
    if seconds >= 60 and seconds % 60 == 0:
        return t(language, "time.short_minutes", n=seconds // 60)
    return t(language, "time.short_seconds", n=seconds)


def clean_name(text: str) -> str:
    """A name or chat title without the invisible characters that can spoof it: bidirectional
    controls (U+202E would reorder the table's line around it), zero-width spaces and joiners that
    split words, soft hyphens; control characters become spaces, and runs of spaces one. The format
    characters that names need stay: ZWJ (emoji sequences), ZWNJ (Persian, Indic scripts), emoji
    tags (subdivision flags)."""
    if not text.isprintable():  # a format or control character somewhere (not the usual name)
        text = "".join(
            " " if unicodedata.category(char) == "Cc" else char for char in text if char not in SPOOFING
        )
    return " ".join(text.split())


def name(text: str, limit: int = 16) -> str:
    """A display name for HTML messages: cleaned, cut to ``limit`` characters and escaped (names
    stored before they were cleaned on the way in are cleaned here)."""
    text = clean_name(text) or "?"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=False)


_GAPS = re.compile(" {3,}")


def closed_up(line: str) -> str:
    """A line of parts two spaces apart, with the gap an empty part leaves (cards not shown, a
    hand not named) closed."""
    return _GAPS.sub("  ", line).strip()


def short_hash(commitment: str) -> str:
    return f"{commitment[:4]}…{commitment[-3:]}"


Row = Sequence[tuple[str, str]]


def keyboard(rows: Iterable[Row]) -> Markup | None:
    """Rows of (label, callback data) pairs; None when there is no button at all. A pair whose data
    is an ``https://`` address is a URL button (our callback data never starts so)."""
    built = [
        [
            {"text": label, ("url" if data.startswith("https://") else "callback_data"): data}
            for label, data in row
        ]
        for row in rows
        if row
    ]
    return {"inline_keyboard": built} if built else None


class MiniAppLink:
    """Where a table's "open the table" button leads: the bot's Mini App (its direct link,
    ``https://t.me/<bot>/<app>?startapp=t<table>``: a group allows no ``web_app`` button); nowhere
    until the bot serves one (``bot/web/server.py`` sets it from ``PAIJU_WEBAPP_URL``)."""

    def __init__(self) -> None:
        self.base: str | None = None

    def set(self, bot_username: str | None, app_name: str | None) -> None:
        self.base = f"https://t.me/{bot_username}/{app_name}" if bot_username and app_name else None

    def of(self, table_id: int) -> str | None:
        return None if self.base is None else f"{self.base}?startapp=t{table_id}"

    def replay(self, table_id: int, round_no: int) -> str | None:
        """The link that opens a finished round's replay (回放) in the Mini App: for the results
        message's "▶ 回放" button, and for /history; None until the bot serves a Mini App."""
        return None if self.base is None else f"{self.base}?startapp={replay_startapp(table_id, round_no)}"


def replay_startapp(table_id: int, round_no: int) -> str:
    """The Mini App's start parameter that opens a round's replay: ``r<table>_<round>``, the two
    numbers /verify takes (Telegram allows letters, digits and ``_`` in it)."""
    return f"r{table_id}_{round_no}"


def verify_link(bot_username: str, table_id: int, round_no: int) -> str:
    """The bot's deep link that answers with a round's fairness proof, as ``/verify <table> <round>``
    does (``/start v<table>_<round>``: the replay's "🔓" line opens it)."""
    return f"https://t.me/{bot_username}?start=v{table_id}_{round_no}"


def replay_keyboard(table_id: int, round_no: int, language: str) -> Markup | None:
    """A round's results message's one button, "▶ 回放" (none when the bot has no Mini App)."""
    link = MINI_APP.replay(table_id, round_no)
    return None if link is None else keyboard([[(t(language, "button.replay"), link)]])


MINI_APP = MiniAppLink()


@dataclass(frozen=True)
class Rendering:
    """How a message is drawn: its language, how it shows a deadline, and the bot's username."""

    language: str
    when: Callable[[float], str]
    bot_username: str

    def deep_link(self, table_id: int) -> str:
        return f"https://t.me/{self.bot_username}?start=t{table_id}"

    def deadline(self, seconds: float, moment: float) -> str:
        """A deadline people can read: its length and its end, ``30 秒 · 21:05:30 截止`` (a bare
        clock time reads like a duration)."""
        return t(
            self.language, "time.deadline", length=duration(seconds, self.language), time=self.when(moment)
        )


def mention(person: int, text: str) -> str:
    """A real mention (it notifies, in a new message): ``text`` is a name already made safe."""
    return f'<a href="tg://user?id={person}">{text}</a>'
