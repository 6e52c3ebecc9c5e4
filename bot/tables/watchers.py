"""Who is told that a table changed, besides its chat (the Mini App's hub takes this place)."""

from __future__ import annotations

from bot.model.live_table import LiveTable


class Watchers:
    """Who is told that a table changed (nobody, unless the Mini App's hub takes this place)."""

    def changed(self, live: LiveTable) -> None:
        """``live`` changed (the caller holds its chat's lock): called once per presented change."""

    def watching(self, table_id: int, person: int) -> bool:
        """Is ``person`` watching this table in the Mini App now (``bot/send/watched.py``)?"""
        return False
