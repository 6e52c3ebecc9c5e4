"""What the bot's Bot API requests were, by kind: the accounting behind "requests per round" in
benchmark 5 (it replaces the in-process count of earlier issues, which drove the presenter's
internals on a jumping clock; now the count comes from the emulator's records of a real run).

Kinds: new group messages, group edits, group deletes, new DMs, DM edits, callback answers, other.
Requests Telegram refused (429) are counted apart: they cost the bot a round trip but showed nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from bench.figures import Span
from faketg.world import Chat, Request

KINDS = (
    "new group messages",
    "group edits",
    "group deletes",
    "new DMs",
    "DM edits",
    "callback answers",
    "other",
)


def kind_of(request: Request, chats: Mapping[int, Chat]) -> str | None:
    """The kind of one request (None: ``getUpdates``, which is not the bot talking to anyone)."""
    if request.method == "getUpdates":
        return None
    if request.method == "answerCallbackQuery":
        return "callback answers"
    chat = chats.get(request.chat_id) if request.chat_id is not None else None
    if chat is None:
        return "other"
    private = chat.type == "private"
    if request.method == "sendMessage":
        return "new DMs" if private else "new group messages"
    if request.method.startswith("edit"):
        return "DM edits" if private else "group edits"
    if request.method.startswith("delete"):
        return "DM edits" if private else "group deletes"
    return "other"


def count(
    requests: Iterable[Request],
    chats: Mapping[int, Chat],
    span: Span,
    game_of: Callable[[Request], str | None],
) -> dict[str, tuple[Counter[str], int]]:
    """For each game, its requests in ``span`` by kind (those answered), and how many were refused
    with 429; ``game_of`` tells which game's table a request was about (None: none)."""
    counts: dict[str, tuple[Counter[str], int]] = {}
    for request in requests:
        if request.at not in span:
            continue
        kind = kind_of(request, chats)
        game = game_of(request) if kind is not None else None
        if kind is None or game is None:
            continue
        kinds, refused = counts.get(game, (Counter(), 0))
        if request.error == 429:
            refused += 1
        else:
            kinds[kind] += 1
        counts[game] = (kinds, refused)
    return counts


def per_round(
    requests: Iterable[Request],
    chats: Mapping[int, Chat],
    span: Span,
    rounds: Mapping[str, int],
    game_of: Callable[[Request], str | None],
) -> str:
    """``muxi 31.2 a round (new group messages 1.0, group edits 8.1, ...); showhand ...`` over the
    rounds that ended in ``span`` (a round ends when its results show; the requests of rounds under
    way at the edges of the span roughly even out over a long window)."""
    parts = []
    for game, (kinds, refused) in sorted(count(requests, chats, span, game_of).items()):
        total, played = sum(kinds.values()), rounds.get(game, 0)
        if not played:
            parts.append(f"{game}: no round finished ({total:,} requests, {refused:,} refused with 429)")
            continue
        split = ", ".join(f"{kind} {kinds[kind] / played:.1f}" for kind in KINDS if kinds[kind])
        tail = f"; {refused / played:.1f} refused with 429" if refused else ""
        parts.append(f"{game} {total / played:.1f} a round ({split}{tail})")
    return "; ".join(parts) or "no requests"
