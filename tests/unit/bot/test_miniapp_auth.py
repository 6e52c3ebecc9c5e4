"""The Mini App's check of Telegram's signed initData (bot/web/miniapp/auth.py)."""

import hashlib
import hmac
import json
from urllib.parse import parse_qsl, urlencode

import pytest

from bot.web.miniapp.auth import MAX_AGE, InvalidInitData, sign, signed_for, validate

TOKEN = "123456:TEST-TOKEN"
NOW = 1_800_000_000.0


def fields(**changes):
    base = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": 7, "first_name": "阿明", "language_code": "en"}, ensure_ascii=False),
        "auth_date": str(int(NOW) - 60),
        "start_param": "t42",
    }
    return {**base, **changes}


def test_a_valid_init_data_names_its_person_and_table():
    person = validate(sign(fields(), TOKEN), TOKEN, NOW)
    assert (person.id, person.first_name, person.language_code, person.start_param) == (
        7,
        "阿明",
        "en",
        "t42",
    )


def test_the_signature_is_telegrams_documented_one():
    """Computed independently of ``sign``: secret = HMAC(key "WebAppData", token)."""
    data = fields()
    check = "\n".join(f"{key}={data[key]}" for key in sorted(data))
    secret = hmac.new(b"WebAppData", TOKEN.encode(), hashlib.sha256).digest()
    data["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    assert validate(urlencode(data), TOKEN, NOW).id == 7


def test_a_wrong_hash_is_refused():
    data = dict(parse_qsl(sign(fields(), TOKEN)))
    data["hash"] = "0" * 64
    with pytest.raises(InvalidInitData, match="wrong hash"):
        validate(urlencode(data), TOKEN, NOW)


def test_a_changed_field_is_refused():
    data = dict(parse_qsl(sign(fields(), TOKEN)))
    data["user"] = data["user"].replace('"id": 7', '"id": 8')
    with pytest.raises(InvalidInitData):
        validate(urlencode(data), TOKEN, NOW)
    data = dict(parse_qsl(sign(fields(), TOKEN)))
    data["start_param"] = "t43"  # another table
    with pytest.raises(InvalidInitData):
        validate(urlencode(data), TOKEN, NOW)


def test_another_bots_token_is_refused():
    with pytest.raises(InvalidInitData, match="wrong hash"):
        validate(sign(fields(), "654321:OTHER-TOKEN"), TOKEN, NOW)


@pytest.mark.parametrize("missing", ["hash", "auth_date", "user"])
def test_missing_fields_are_refused(missing):
    data = fields()
    if missing == "hash":
        text = urlencode(data)
    else:
        del data[missing]
        text = sign(data, TOKEN)
    with pytest.raises(InvalidInitData):
        validate(text, TOKEN, NOW)


@pytest.mark.parametrize("text", ["", "garbage", "a=1&a=2&hash=00", "x" * 10_000])
def test_malformed_init_data_is_refused(text):
    with pytest.raises(InvalidInitData):
        validate(text, TOKEN, NOW)


def test_a_user_without_a_numeric_id_is_refused():
    with pytest.raises(InvalidInitData, match="no user"):
        validate(sign(fields(user=json.dumps({"id": "7"})), TOKEN), TOKEN, NOW)


def test_stale_init_data_is_refused_after_a_day():
    day_old = fields(auth_date=str(int(NOW - MAX_AGE - 1)))
    with pytest.raises(InvalidInitData, match="too old"):
        validate(sign(day_old, TOKEN), TOKEN, NOW)
    almost = fields(auth_date=str(int(NOW - MAX_AGE + 60)))
    assert validate(sign(almost, TOKEN), TOKEN, NOW).id == 7
    with pytest.raises(InvalidInitData, match="future"):
        validate(sign(fields(auth_date=str(int(NOW + 3600))), TOKEN), TOKEN, NOW)


def test_signed_for_makes_what_validate_accepts():
    text = signed_for(5, "小红", TOKEN, NOW, language_code="zh-hant", start_param="t9")
    person = validate(text, TOKEN, NOW)
    assert (person.id, person.first_name, person.language_code, person.start_param) == (
        5,
        "小红",
        "zh-hant",
        "t9",
    )
