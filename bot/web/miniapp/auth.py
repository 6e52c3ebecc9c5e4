"""Who is asking: Telegram's signed ``initData`` of a Mini App, checked as Telegram says
(https://core.telegram.org/bots/webapps#validating-data-received-via-the-mini-app).

``secret = HMAC_SHA256(key="WebAppData", msg=bot_token)``; the ``hash`` field is
``hex(HMAC_SHA256(key=secret, msg=data_check_string))``, where the data-check-string is every other
field as ``key=value``, sorted by key, joined by line feeds. ``auth_date`` must be at most a day old.
Pure: no I/O; the clock is given.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

MAX_AGE = 24 * 3600  # seconds an initData stays good
FUTURE_SLACK = 300  # seconds a client's clock may run ahead of ours
MAX_LENGTH = 8192  # characters: Telegram's initData is far shorter
_HASH = re.compile(r"^[0-9a-fA-F]{64}$", re.ASCII)  # hex of a SHA-256


class InvalidInitData(ValueError):
    """The initData is missing, malformed, forged, for another bot, or too old (the reason says)."""


@dataclass(frozen=True)
class WebAppUser:
    """The person the signed initData speaks for."""

    id: int
    first_name: str
    last_name: str = ""
    username: str = ""
    language_code: str | None = None
    start_param: str = ""  # ``t<table>`` from the link that opened the app
    auth_date: int = 0


def _secret(token: str) -> bytes:
    return hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()


def _check_string(fields: dict[str, str]) -> str:
    return "\n".join(f"{key}={fields[key]}" for key in sorted(fields) if key != "hash")


def sign(fields: dict[str, str], token: str) -> str:
    """An initData string for ``fields`` as Telegram would sign it with ``token`` (the sandbox and
    the tests stand in for Telegram with this)."""
    unsigned = {key: value for key, value in fields.items() if key != "hash"}
    digest = hmac.new(_secret(token), _check_string(unsigned).encode(), hashlib.sha256).hexdigest()
    return urlencode({**unsigned, "hash": digest})


def signed_for(person: int, first_name: str, token: str, now: float, **extra: str) -> str:
    """A signed initData for one person (``language_code``, ``start_param`` in ``extra``)."""
    user = {"id": person, "first_name": first_name}
    if "language_code" in extra:
        user["language_code"] = extra.pop("language_code")
    fields = {"auth_date": str(int(now)), "user": json.dumps(user, ensure_ascii=False), **extra}
    return sign(fields, token)


def validate(init_data: str, token: str, now: float, max_age: float = MAX_AGE) -> WebAppUser:
    """The person ``init_data`` was signed for by Telegram with ``token``; ``InvalidInitData`` else."""
    if not init_data or len(init_data) > MAX_LENGTH:
        raise InvalidInitData("missing or too long")
    # A header's bytes that are not UTF-8 reach us as lone surrogates (aiohttp decodes with
    # surrogateescape): refused here, before anything encodes the text.
    if not init_data.isascii():
        try:
            init_data.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInitData("not UTF-8") from None
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise InvalidInitData("not a query string") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise InvalidInitData("a field appears twice")
    given = fields.get("hash", "")
    if not _HASH.fullmatch(given):
        raise InvalidInitData("no hash, or not one")
    # (parse_qsl decodes percent-escapes with errors="replace": the fields encode as UTF-8)
    expected = hmac.new(_secret(token), _check_string(fields).encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, bytes.fromhex(given)):  # bytes with bytes: never a TypeError
        raise InvalidInitData("wrong hash")
    try:
        auth_date = int(fields["auth_date"])
    except (KeyError, ValueError):
        raise InvalidInitData("no auth_date") from None
    if not 0 < auth_date < 2**40:  # a float of any time we compare with
        raise InvalidInitData("no auth_date")
    if now - auth_date > max_age:
        raise InvalidInitData("too old")
    if auth_date - now > FUTURE_SLACK:
        raise InvalidInitData("from the future")
    try:
        user = json.loads(fields["user"])
        person = user["id"]
    except (KeyError, ValueError, TypeError):
        raise InvalidInitData("no user") from None
    if not isinstance(person, int) or isinstance(person, bool) or person <= 0:
        raise InvalidInitData("no user")
    return WebAppUser(
        id=person,
        first_name=str(user.get("first_name") or ""),
        last_name=str(user.get("last_name") or ""),
        username=str(user.get("username") or ""),
        language_code=str(user["language_code"]) if user.get("language_code") else None,
        start_param=fields.get("start_param", ""),
        auth_date=auth_date,
    )
