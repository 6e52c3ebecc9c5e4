"""The pause between rounds and the reveal's pace as the operator sets them (PAIJU_PAUSE_SECONDS,
PAIJU_REVEAL_SECONDS), and a chat's own pause over the operator's (issue 49, point 4)."""

import pytest

from bot.settings import Settings, SettingsError
from bot.tables.preferences import Preferences
from storage import open_store


def test_the_operator_s_pause_and_reveal_pace(tmp_path):
    assert (Settings(token="").pause_seconds, Settings(token="").reveal_seconds) == (5, 1.0)
    chosen = Settings.from_env({"PAIJU_PAUSE_SECONDS": "0", "PAIJU_REVEAL_SECONDS": "0.5"}, tmp_path / "none")
    assert (chosen.pause_seconds, chosen.reveal_seconds) == (0, 0.5)
    for name, value, says in (
        ("PAIJU_PAUSE_SECONDS", "61", "between 0 and 60"),
        ("PAIJU_PAUSE_SECONDS", "2.5", "whole number"),
        ("PAIJU_REVEAL_SECONDS", "6", "between 0 and 5"),
    ):
        with pytest.raises(SettingsError, match=says):
            Settings.from_env({name: value}, tmp_path / "none")


async def test_a_chat_s_pause_wins_over_the_operator_s_even_when_it_is_none(tmp_path):
    async with await open_store(str(tmp_path / "p.sqlite3")) as store:
        preferences = Preferences(Settings(token="", pause_seconds=7), store)
        assert (await preferences.chat_settings(-1)).pause_seconds == 7, "none chosen: the operator's"
        assert (await preferences.update_chat_settings(-1, pause_seconds=0)).pause_seconds == 0
        assert (await preferences.chat_settings(-1)).pause_seconds == 0, "0 is a choice, not 'none chosen'"
        assert (await preferences.update_chat_settings(-1, pause_seconds=None)).pause_seconds == 7
