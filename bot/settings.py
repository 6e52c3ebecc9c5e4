"""The bot's settings, from the environment or a ``.env`` file (every one listed in ``.env.example``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

LANGUAGES = ("zh-hans", "zh-hant", "en")
DEFAULT_LANGUAGE = "zh-hans"


class SettingsError(ValueError):
    """A setting has a value the bot cannot use; the message names it."""


@dataclass(frozen=True)
class Settings:
    token: str = field(repr=False)  # never in a log or a traceback
    database: str = "paiju.sqlite3"
    language: str = DEFAULT_LANGUAGE
    owners: frozenset[int] = frozenset()
    turn_seconds: int = 30
    lobby_seconds: int = 300
    base_url: str | None = None
    start_grant: int = 10_000
    daily_bonus: int = 2_000
    timezone: str = "Asia/Shanghai"
    table_requests_per_minute: int = 15  # of Telegram's 20 a minute per group, the table's share

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, env_file: str | Path = ".env") -> Settings:
        """Read ``PAIJU_*`` and ``TELEGRAM_BOT_TOKEN``; the environment wins over the ``.env`` file."""
        values = read_env_file(Path(env_file)) | dict(os.environ if environ is None else environ)

        def get(name: str, default: str) -> str:
            return values.get(name, "").strip() or default

        language = get("PAIJU_LANGUAGE", DEFAULT_LANGUAGE).lower()
        if language not in LANGUAGES:
            raise SettingsError(f"PAIJU_LANGUAGE must be one of {', '.join(LANGUAGES)}, not {language!r}")
        return cls(
            token=get("TELEGRAM_BOT_TOKEN", ""),
            database=get("PAIJU_DB", "paiju.sqlite3"),
            language=language,
            owners=frozenset(_integers("PAIJU_OWNERS", get("PAIJU_OWNERS", ""))),
            turn_seconds=_integer("PAIJU_TURN_SECONDS", get("PAIJU_TURN_SECONDS", "30"), 10, 120),
            lobby_seconds=_integer("PAIJU_LOBBY_SECONDS", get("PAIJU_LOBBY_SECONDS", "300"), 30, 3600),
            base_url=get("PAIJU_BOT_API_URL", "") or None,
            start_grant=_integer("PAIJU_START_GRANT", get("PAIJU_START_GRANT", "10000"), 0, 10**12),
            daily_bonus=_integer("PAIJU_DAILY_BONUS", get("PAIJU_DAILY_BONUS", "2000"), 0, 10**12),
            timezone=get("PAIJU_TIMEZONE", "Asia/Shanghai"),
            table_requests_per_minute=_integer(
                "PAIJU_TABLE_REQUESTS_PER_MINUTE", get("PAIJU_TABLE_REQUESTS_PER_MINUTE", "15"), 1, 10_000
            ),
        )


def read_env_file(path: Path) -> dict[str, str]:
    """``NAME=value`` lines; blank lines and ``#`` comments skipped, surrounding quotes removed."""
    if not path.is_file():
        return {}
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        values[name.strip().removeprefix("export ").strip()] = value.strip().strip("'\"")
    return values


def _integer(name: str, text: str, low: int, high: int) -> int:
    return int(_number(name, text, low, high, int))


def _number(name: str, text: str, low: float, high: float, kind: type[int] | type[float] = float) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise SettingsError(
            f"{name} must be a {'whole ' if kind is int else ''}number, not {text!r}"
        ) from None
    if not low <= value <= high:
        raise SettingsError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _integers(name: str, text: str) -> list[int]:
    try:
        return [int(part) for part in text.replace(",", " ").split()]
    except ValueError:
        raise SettingsError(f"{name} must be Telegram user ids separated by commas, not {text!r}") from None
