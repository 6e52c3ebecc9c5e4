"""Translations: gettext catalogs (``bot/display/locales/<lang>/LC_MESSAGES/paiju.po``) read with Babel.

Messages are looked up by a stable key (``lobby.title``) and formatted with ``str.format`` fields.
Simplified Chinese is the default; Traditional Chinese and English are complete (a test fails on
any key missing from any catalog).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

from bot.settings import DEFAULT_LANGUAGE, LANGUAGES

LOCALES = Path(__file__).parent / "locales"
_FOLDERS = {"zh-hans": "zh_Hans", "zh-hant": "zh_Hant", "en": "en"}


@cache
def catalog(language: str) -> dict[str, str]:
    """Every key of one language's catalog and its text."""
    path = LOCALES / _FOLDERS[language] / "LC_MESSAGES" / "paiju.po"
    with path.open("rb") as file:
        messages = read_po(file, locale=_FOLDERS[language])
    return {str(message.id): str(message.string) for message in messages if message.id and message.string}


def t(language: str, key: str, /, **values: object) -> str:
    """The text of ``key`` in ``language`` (the default language's when the key is missing)."""
    text = catalog(language).get(key) or catalog(DEFAULT_LANGUAGE).get(key)
    if text is None:
        raise KeyError(f"no message {key!r} in the catalogs")
    return text.format(**values) if values else text


def language_of(code: str | None, default: str = DEFAULT_LANGUAGE) -> str:
    """Our language for a Telegram ``language_code`` (``zh-hk`` -> Traditional, ``en-us`` -> English)."""
    if not code:
        return default
    code = code.lower().replace("_", "-")
    if code in LANGUAGES:
        return code
    if code.startswith(("zh-hant", "zh-tw", "zh-hk", "zh-mo")):
        return "zh-hant"
    if code.startswith("zh"):
        return "zh-hans"
    if code.startswith("en"):
        return "en"
    return default
