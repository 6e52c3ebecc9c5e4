"""The process's open files: what the HTTP server's connections and the Mini App's streams may
take of them, so that no flood of connections ever leaves the bot without a file to open.

Each connection is an open file. Past the limit (``RLIMIT_NOFILE``, often 1,024), ``accept()``
fails (asyncio logs "socket.accept() out of system resource" and retries in a loop) and so does
everything else the bot opens: a connection to Telegram, the database's journal, a backup.
"""

from __future__ import annotations

import resource

# Files kept for everything but the public HTTP server's connections: the connections to Telegram
# (the game's pool and the answers' 64, getUpdates' 1, the Mini App's checks' 4), the server of
# /healthz and /metrics (16), the database and its journal, the log, a backup, the event loop's
# own, PTB's, and room to spare.
KEPT_FOR_THE_BOT = 320
CONNECTIONS_MAX = 4096  # whatever the limit: more is a flood, not a crowd of players


def open_files_limit() -> int | None:
    """The process's soft limit of open files (None: no limit)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def connections_cap() -> int:
    """How many connections the HTTP server holds at once (a new one past that is refused)."""
    files = open_files_limit()
    return CONNECTIONS_MAX if files is None else max(16, min(CONNECTIONS_MAX, files - KEPT_FOR_THE_BOT))
