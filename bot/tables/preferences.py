"""What chats and people chose (a chat's settings and language, a person's language), read once from
the database and then kept: every change goes through here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.display.i18n import language_of
from bot.settings import Settings
from storage import ChatSettings, Person, Store


class Preferences:
    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.store = store
        self._languages: dict[int, str | None] = {}  # the people's chosen languages
        self._chats: dict[int, ChatSettings] = {}  # each chat's settings as they apply

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """A chat's settings as they apply: the operator's turn, lobby and pause seconds where the
        chat chose none."""
        if chat_id not in self._chats:
            self._chats[chat_id] = self._in_effect(await self.store.chat_settings(chat_id))
        return self._chats[chat_id]

    async def update_chat_settings(self, chat_id: int, **changes: Any) -> ChatSettings:
        self._chats.pop(chat_id, None)  # a failed update must not leave the old one kept
        updated = await self.store.update_chat_settings(chat_id, **changes)
        self._chats[chat_id] = self._in_effect(updated)
        return self._chats[chat_id]

    def forget_chat(self, chat_id: int) -> None:
        """The chat moved (a group became a supergroup): read it again."""
        self._chats.pop(chat_id, None)

    def _in_effect(self, chosen: ChatSettings) -> ChatSettings:
        return replace(
            chosen,
            turn_seconds=chosen.turn_seconds or self.settings.turn_seconds,
            lobby_seconds=chosen.lobby_seconds or self.settings.lobby_seconds,
            pause_seconds=(
                self.settings.pause_seconds if chosen.pause_seconds is None else chosen.pause_seconds
            ),
        )

    async def chat_language(self, chat_id: int) -> str:
        return (await self.chat_settings(chat_id)).language or self.settings.language

    async def person_language(self, person: int, telegram_code: str | None = None) -> str:
        """The language ``person`` chose, else the one of their Telegram app, else the bot's."""
        if person not in self._languages:
            known = await self.store.get_person(person)
            self._languages[person] = known.language if known is not None else None
        return self._languages[person] or language_of(telegram_code, self.settings.language)

    async def set_person_language(self, person: int, name: str, language: str) -> Person:
        """Record ``person``'s language (creating them with the starting grant on first sight)."""
        known, _ = await self.store.ensure_person(person, name, language)
        self._languages[person] = language
        return known
