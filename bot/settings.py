"""The bot's settings, from the environment or a ``.env`` file (every one listed in ``.env.example``)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from storage import is_postgres_url

LANGUAGES = ("zh-hans", "zh-hant", "en")
DEFAULT_LANGUAGE = "zh-hans"
DEFAULT_HTTP_PORT = 8080  # the HTTP server's port when it is needed and PAIJU_HTTP_PORT is unset
METRICS = ("off", "local", "public")  # /metrics: not served; to this machine only; to anyone
LOG_FORMATS = ("text", "json")
SECRET_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


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
    # After a round's results, before its auto-ready (and 托管) people are readied for the next one,
    # in every group whose admins chose none in /settings (0: at once).
    pause_seconds: int = 5
    # Between the cards of an all-in's run-out, dealt one by one on the table (0: all at once).
    reveal_seconds: float = 1.0
    base_url: str | None = None
    start_grant: int = 10_000
    daily_bonus: int = 2_000
    timezone: str = "Asia/Shanghai"
    table_requests_per_minute: int = 15  # of Telegram's 20 a minute per group, the table's share
    bot_requests_per_second: int = 0  # every request across all chats in any second (0: no such cap)
    webhook_url: str | None = None  # the public address Telegram posts updates to (None: polling)
    webhook_secret: str | None = field(default=None, repr=False)  # None: a new random one each start
    http_host: str = "127.0.0.1"
    http_port: int | None = None  # None: DEFAULT_HTTP_PORT when the server is needed, else no server
    metrics: str = "off"
    metrics_listen: tuple[str, int] | None = None  # /healthz and /metrics on a server of their own
    log_format: str = "text"
    backup_dir: str | None = None  # the daily automatic backup's folder (None: no automatic backup)
    backup_keep_days: int = 7
    webapp_url: str | None = None  # the Mini App's public https address (None: no Mini App)
    webapp_name: str = "table"  # its short name, registered with @BotFather /newapp
    partitions: int = 32  # on PostgreSQL: how many parts the chats are shared in among the workers
    worker_url: str | None = None  # where the other workers reach this one's HTTP server (None: derived)

    @property
    def serves_http(self) -> bool:
        """Does the bot run its HTTP server (the webhook, the Mini App; /healthz and /metrics unless
        they have a server of their own)?"""
        return (
            self.webhook_url is not None
            or (self.metrics != "off" and self.metrics_listen is None)
            or self.http_port is not None
            or self.webapp_url is not None
        )

    @property
    def reached_at(self) -> str:
        """Where the other workers reach this one's HTTP server (the Mini App's requests about a
        table it holds): ``PAIJU_WORKER_URL``, else its own address (on all addresses: its host's name)."""
        if self.worker_url:
            return self.worker_url
        host = socket.gethostname() if self.http_host in ("0.0.0.0", "::", "") else self.http_host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    @property
    def port(self) -> int:
        return self.http_port if self.http_port is not None else DEFAULT_HTTP_PORT

    @property
    def webhook_path(self) -> str:
        """The local path of the webhook: the public address's path (a reverse proxy keeps it)."""
        return urlsplit(self.webhook_url or "").path or "/"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, env_file: str | Path = ".env") -> Settings:
        """Read ``PAIJU_*`` and ``TELEGRAM_BOT_TOKEN``; the environment wins over the ``.env`` file."""
        values = read_env_file(Path(env_file)) | dict(os.environ if environ is None else environ)

        def get(name: str, default: str) -> str:
            return values.get(name, "").strip() or default

        language = get("PAIJU_LANGUAGE", DEFAULT_LANGUAGE).lower()
        if language not in LANGUAGES:
            raise SettingsError(f"PAIJU_LANGUAGE must be one of {', '.join(LANGUAGES)}, not {language!r}")
        port = get("PAIJU_HTTP_PORT", "")
        return cls(
            token=get("TELEGRAM_BOT_TOKEN", ""),
            database=_database(get("PAIJU_DATABASE_URL", ""), get("PAIJU_DB", "paiju.sqlite3")),
            language=language,
            owners=frozenset(_integers("PAIJU_OWNERS", get("PAIJU_OWNERS", ""))),
            turn_seconds=_integer("PAIJU_TURN_SECONDS", get("PAIJU_TURN_SECONDS", "30"), 10, 120),
            lobby_seconds=_integer("PAIJU_LOBBY_SECONDS", get("PAIJU_LOBBY_SECONDS", "300"), 30, 3600),
            pause_seconds=_integer("PAIJU_PAUSE_SECONDS", get("PAIJU_PAUSE_SECONDS", "5"), 0, 60),
            reveal_seconds=_number("PAIJU_REVEAL_SECONDS", get("PAIJU_REVEAL_SECONDS", "1"), 0, 5),
            base_url=get("PAIJU_BOT_API_URL", "") or None,
            start_grant=_integer("PAIJU_START_GRANT", get("PAIJU_START_GRANT", "10000"), 0, 10**12),
            daily_bonus=_integer("PAIJU_DAILY_BONUS", get("PAIJU_DAILY_BONUS", "2000"), 0, 10**12),
            timezone=get("PAIJU_TIMEZONE", "Asia/Shanghai"),
            table_requests_per_minute=_integer(
                "PAIJU_TABLE_REQUESTS_PER_MINUTE", get("PAIJU_TABLE_REQUESTS_PER_MINUTE", "15"), 1, 10_000
            ),
            bot_requests_per_second=_integer(
                "PAIJU_BOT_REQUESTS_PER_SECOND", get("PAIJU_BOT_REQUESTS_PER_SECOND", "0"), 0, 10_000
            ),
            webhook_url=_webhook_url(get("PAIJU_WEBHOOK_URL", "")),
            webhook_secret=_webhook_secret(
                get("PAIJU_WEBHOOK_SECRET", ""), get("PAIJU_WEBHOOK_URL", ""), get("PAIJU_DATABASE_URL", "")
            ),
            http_host=get("PAIJU_HTTP_HOST", "127.0.0.1"),
            http_port=_integer("PAIJU_HTTP_PORT", port, 1, 65_535) if port else None,
            metrics=_choice("PAIJU_METRICS", get("PAIJU_METRICS", "off"), METRICS),
            metrics_listen=_address("PAIJU_METRICS_LISTEN", get("PAIJU_METRICS_LISTEN", "")),
            log_format=_choice("PAIJU_LOG_FORMAT", get("PAIJU_LOG_FORMAT", "text"), LOG_FORMATS),
            backup_dir=_backup_dir(get("PAIJU_BACKUP_DIR", ""), get("PAIJU_DATABASE_URL", "")),
            backup_keep_days=_integer("PAIJU_BACKUP_KEEP_DAYS", get("PAIJU_BACKUP_KEEP_DAYS", "7"), 1, 3650),
            webapp_url=_webapp_url(get("PAIJU_WEBAPP_URL", "")),
            webapp_name=_webapp_name(get("PAIJU_WEBAPP_NAME", "table")),
            partitions=_integer("PAIJU_PARTITIONS", get("PAIJU_PARTITIONS", "32"), 1, 4096),
            worker_url=_worker_url(get("PAIJU_WORKER_URL", "")),
        )


def _database(url: str, file: str) -> str:
    """``PAIJU_DATABASE_URL`` (a PostgreSQL database) when set, else the SQLite file ``PAIJU_DB``."""
    if url and not is_postgres_url(url):
        raise SettingsError(f"PAIJU_DATABASE_URL must be a postgresql:// URL, not {url[:12]!r}…")
    return url or file


def _webhook_secret(text: str, webhook: str, url: str) -> str | None:
    """The webhook's secret: several workers (PostgreSQL) share one, so it must be given."""
    secret = _secret(text)
    if secret is None and webhook and url:
        raise SettingsError(
            "PAIJU_WEBHOOK_SECRET must be set with PAIJU_DATABASE_URL: the workers share one webhook"
        )
    return secret


def _worker_url(text: str) -> str | None:
    """How other workers reach this one: an http(s):// address with no path."""
    if not text:
        return None
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        raise SettingsError(f"PAIJU_WORKER_URL must be http://HOST:PORT, not {text!r}")
    return text.rstrip("/")


def _backup_dir(folder: str, url: str) -> str | None:
    """The automatic backup copies an SQLite file; a PostgreSQL database is the server's to back up."""
    if folder and url:
        raise SettingsError(
            "PAIJU_BACKUP_DIR backs up an SQLite file; with PAIJU_DATABASE_URL, back up PostgreSQL with"
            " pg_dump (see the README)"
        )
    return folder or None


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


def _choice(name: str, text: str, choices: tuple[str, ...]) -> str:
    if text.lower() not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, not {text!r}")
    return text.lower()


def _address(name: str, text: str) -> tuple[str, int] | None:
    """``host:port``, ``[v6]:port`` or a port alone (on 127.0.0.1)."""
    if not text:
        return None
    host, colon, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") if colon else ""
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65_535:
        raise SettingsError(f"{name} must be HOST:PORT or a port (1-65535), not {text!r}")
    return host or "127.0.0.1", int(port)


def _webhook_url(text: str) -> str | None:
    """Telegram posts only to https (a local Bot API server takes http too)."""
    if not text:
        return None
    parts = urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise SettingsError(f"PAIJU_WEBHOOK_URL must be an https:// address, not {text!r}")
    return text


def _webapp_url(text: str) -> str | None:
    """Telegram opens a Mini App over https only."""
    if not text:
        return None
    parts = urlsplit(text)
    if parts.scheme != "https" or not parts.hostname:
        raise SettingsError(f"PAIJU_WEBAPP_URL must be an https:// address, not {text!r}")
    return text


def _webapp_name(text: str) -> str:
    """A Mini App's short name as BotFather takes it: 3 to 30 of A-Z, a-z, 0-9 and _."""
    if not 3 <= len(text) <= 30 or not set(text) <= SECRET_CHARACTERS - {"-"}:
        raise SettingsError(f"PAIJU_WEBAPP_NAME must be 3 to 30 of A-Z, a-z, 0-9 and _, not {text!r}")
    return text


def _secret(text: str) -> str | None:
    """Telegram's rule for a webhook's secret token: 1 to 256 of A-Z, a-z, 0-9, _ and -."""
    if not text:
        return None
    if len(text) > 256 or not set(text) <= SECRET_CHARACTERS:
        raise SettingsError("PAIJU_WEBHOOK_SECRET must be 1 to 256 characters of A-Z, a-z, 0-9, _ and -")
    return text


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
