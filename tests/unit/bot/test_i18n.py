"""The catalogs are complete: every key the code uses is in every language, and nothing is extra."""

import re
from pathlib import Path

import pytest

from bot.app import COMMANDS
from bot.display.i18n import catalog, language_of, t
from bot.display.views.showhand import ACTION_CODES, POT_SHARES, pot_label
from bot.settings import LANGUAGES
from games import errors as shared_errors
from games.errors import RuleError
from games.muxi import Kind, Status
from games.showhand import Category, EndReason, LeadReason, Move, Option
from games.showhand import errors as showhand_errors

RANKS = ("ace", "king", "queen", "jack", "ten", "nine", "eight")
BOT = Path(__file__).resolve().parents[3] / "bot"
KEY = re.compile(r'(?:\bt\([^,()]+,\s*|Refused\(|Notice\(|button\(|_header\(live, language, )"([a-z_.]+)"')
CONDITIONAL = re.compile(r'"((?:[a-z_]+\.)+[a-z_]+)" if .* else "((?:[a-z_]+\.)+[a-z_]+)"')


def keys_in_code():
    keys = set()
    for path in BOT.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        keys |= set(KEY.findall(text))
        for pair in CONDITIONAL.findall(text):
            keys |= set(pair)
    return keys


def dynamic_keys():
    rule_errors = [
        value
        for module in (shared_errors, showhand_errors)
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, RuleError)
    ]
    return (
        {f"error.{error.code}" for error in rule_errors}
        | {f"muxi.kind.{kind}" for kind in Kind}
        | {f"rules.muxi.what.{kind}" for kind in Kind}
        | {f"muxi.status.{status}" for status in Status}
        | {f"showhand.category.{category}" for category in Category}
        | {f"rules.showhand.what.{category}" for category in Category}
        | {f"menu.{command}" for command in COMMANDS}
        | {f"closed.{reason}" for reason in ("no_banker", "lobby_expired", "cancelled", "empty")}
        | {f"rules.{game}.{part}" for game in ("muxi", "showhand") for part in ("title", "play")}
        | {f"{game}.title" for game in ("muxi", "showhand")}
        | {f"button.{move}" for move in ("draw", "stand")}
        | {f"showhand.button.{move}" for move in ACTION_CODES}
        | {f"showhand.button.pot_{share}.{move}" for _, _, share in POT_SHARES for move in ("bet", "raise")}
        | {f"showhand.lead.{reason}" for reason in LeadReason}
        | {f"showhand.end.{reason}" for reason in EndReason}
        | {f"button.{action}" for action in ("banker", "pass")}
        | {f"muxi.did.{did}" for did in ("draw", "stand", "banker", "pass", "natural", "timeout", "forfeit")}
        | {"muxi.did.timeout_banker"}
        | {f"showhand.did.{move}" for move in (*ACTION_CODES.values(), "timed_out")}
        | {f"showhand.{status}" for status in ("escaped", "folded", "timed_out", "autopilot_folded")}
        | {f"showhand.{told}.autopilot_{move}" for told in ("told", "did") for move in ("check", "fold")}
        | {
            f"leave.{how}.{game}"
            for how in ("confirm_press", "confirm_command")
            for game in ("muxi", "showhand")
        }
        | {f"{game}.button.escape" for game in ("muxi", "showhand")}
        | {"join.done", "join.next_round", "leave.done", "leave.escaped"}
        | {f"showdown.{kind}.{rank}" for kind in ("rank", "ranks") for rank in RANKS}
        | {f"showdown.same.{category}" for category in Category}
        | {f"showdown.hand.{category}" for category in Category}
    )


def test_the_code_uses_keys_the_scan_can_see():
    assert len(keys_in_code()) > 60


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_key_is_translated(language):
    missing = (keys_in_code() | dynamic_keys()) - set(catalog(language))
    assert not missing, f"{language} lacks {sorted(missing)}"


def test_the_catalogs_hold_the_same_keys_and_fields():
    base = catalog("zh-hans")
    for language in LANGUAGES:
        assert set(catalog(language)) == set(base), language
        for key, text in catalog(language).items():
            fields = set(re.findall(r"{(\w+)}", text))
            assert fields == set(re.findall(r"{(\w+)}", base[key])), (language, key)


def test_telegram_language_codes():
    assert language_of("zh-hans") == "zh-hans"
    assert language_of("zh-TW") == "zh-hant" and language_of("zh-hk") == "zh-hant"
    assert language_of("zh") == "zh-hans" and language_of("en-US") == "en"
    assert language_of("ru") == "zh-hans" and language_of(None) == "zh-hans"


def test_formatting():
    assert t("en", "balance", name="Ann", amount="1,000") == "💰 Ann has 1,000 coins"


def test_the_pot_buttons_in_each_language():
    bet, raise_ = Option(Move.BET, 2_200, 1_700), Option(Move.RAISE, 5_100, 3_400)
    assert [pot_label("half", bet, lang) for lang in ("zh-hans", "zh-hant", "en")] == [
        "½池 1,700",
        "½池 1,700",
        "½ pot 1,700",
    ]
    assert pot_label("full", raise_, "zh-hans") == "1池 加注 3,400"
    assert pot_label("full", raise_, "en") == "1 pot: raise 3,400"
