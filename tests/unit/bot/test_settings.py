"""Settings from the environment and .env, with a clear error naming a bad one."""

import pytest

from bot.settings import Settings, SettingsError


def test_defaults_and_the_environment(tmp_path):
    settings = Settings.from_env({"TELEGRAM_BOT_TOKEN": "1:x"}, tmp_path / "none")
    assert (settings.token, settings.database, settings.language, settings.turn_seconds) == (
        "1:x",
        "paiju.sqlite3",
        "zh-hans",
        30,
    )
    assert (settings.lobby_seconds, settings.start_grant, settings.daily_bonus, settings.timezone) == (
        300,
        10_000,
        2_000,
        "Asia/Shanghai",
    )
    assert settings.owners == frozenset() and settings.base_url is None


def test_the_env_file_and_the_environment_winning(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text(
        '# comment\nTELEGRAM_BOT_TOKEN="1:file"\nPAIJU_OWNERS=5, 6\nexport PAIJU_LANGUAGE=en\n'
        "PAIJU_TURN_SECONDS=45\n",
        encoding="utf-8",
    )
    settings = Settings.from_env({"PAIJU_TURN_SECONDS": "60"}, env_file)
    assert (settings.token, settings.owners, settings.language, settings.turn_seconds) == (
        "1:file",
        frozenset({5, 6}),
        "en",
        60,
    )


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("PAIJU_TURN_SECONDS", "5", "between 10 and 120"),
        ("PAIJU_TURN_SECONDS", "ten", "whole number"),
        ("PAIJU_LANGUAGE", "fr", "zh-hans, zh-hant, en"),
        ("PAIJU_OWNERS", "me", "user ids"),
        ("PAIJU_DATABASE_URL", "mysql://db/paiju", "postgresql:// URL"),
    ],
)
def test_a_bad_setting_is_named(tmp_path, name, value, says):
    with pytest.raises(SettingsError, match=name) as caught:
        Settings.from_env({name: value}, tmp_path / "none")
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("value", "address"),
    [("", None), ("9100", ("127.0.0.1", 9100)), ("0.0.0.0:9100", ("0.0.0.0", 9100)), ("[::1]:9", ("::1", 9))],
)
def test_the_metrics_listen_address(tmp_path, value, address):
    settings = Settings.from_env({"PAIJU_METRICS_LISTEN": value, "PAIJU_METRICS": "local"}, tmp_path / "none")
    assert settings.metrics_listen == address
    assert settings.serves_http is (address is None), "metrics on their own server need no public one"


@pytest.mark.parametrize("value", ["host:", "host:99999", ":port", "9100x", "１２"])
def test_a_bad_metrics_listen_address_is_named(tmp_path, value):
    with pytest.raises(SettingsError, match="PAIJU_METRICS_LISTEN"):
        Settings.from_env({"PAIJU_METRICS_LISTEN": value}, tmp_path / "none")


def test_a_postgresql_url_wins_over_the_sqlite_file(tmp_path):
    url = "postgresql://paiju:secret@db.internal/paiju"
    settings = Settings.from_env({"PAIJU_DATABASE_URL": url, "PAIJU_DB": "x.sqlite3"}, tmp_path / "none")
    assert settings.database == url


def test_the_automatic_backup_is_refused_on_postgresql_with_what_to_do(tmp_path):
    with pytest.raises(SettingsError, match="PAIJU_BACKUP_DIR") as caught:
        Settings.from_env(
            {"PAIJU_DATABASE_URL": "postgresql://db/paiju", "PAIJU_BACKUP_DIR": str(tmp_path)},
            tmp_path / "none",
        )
    assert "pg_dump" in str(caught.value)


def test_workers_by_webhook_must_share_a_given_secret(tmp_path):
    env = {"PAIJU_DATABASE_URL": "postgresql://db/paiju", "PAIJU_WEBHOOK_URL": "https://bot.example/telegram"}
    with pytest.raises(SettingsError, match="PAIJU_WEBHOOK_SECRET"):
        Settings.from_env(env, tmp_path / "none")
    settings = Settings.from_env({**env, "PAIJU_WEBHOOK_SECRET": "s3cret_shared"}, tmp_path / "none")
    assert settings.webhook_secret == "s3cret_shared"
