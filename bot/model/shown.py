"""What a kept message shows (``Shown``: hashes of its text and buttons, saved with the table as
JSON), and the shape of its buttons (``Markup``): values the table, the views and the courier share.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

#: An inline keyboard as the Bot API's JSON (``{"inline_keyboard": [[{"text", "callback_data"}]]}``):
#: the presenter compares and sends it as it is, with no PTB objects built and turned back into JSON.
Markup = dict[str, list[list[dict[str, str]]]]

_JSON = json.JSONEncoder(ensure_ascii=False)  # (json.dumps would build one for each message shown)


def _hash(value: object) -> str:
    return hashlib.blake2b(_JSON.encode(value).encode(), digest_size=6).hexdigest()


NO_BUTTONS = _hash(None)


@dataclass(frozen=True)
class Shown:
    """What a kept message shows: hashes of its text and its buttons (a change of either is seen);
    a DM prompt also names its turn (the engine's timer) and whether it is that turn's reminder: a
    new turn, or its reminder, is a new message though the same buttons may be pressed."""

    text_hash: str
    buttons_hash: str
    turn: int | None = None  # the turn whose prompt it is (None: not a prompt)
    reminded: bool = False
    round_no: int = 0  # a table message: the round under way it shows (0: none, a lobby, results)

    @classmethod
    def of(
        cls,
        text: str | None,
        markup: Markup | None,
        turn: int | None = None,
        reminded: bool = False,
        *,
        round_no: int = 0,
    ) -> Shown:
        prompt = turn is not None and markup is not None  # (a DM's buttons with no turn ask nothing)
        return cls(_hash(text), _hash(markup), turn if prompt else None, reminded and prompt, round_no)

    @property
    def has_buttons(self) -> bool:
        return self.buttons_hash != NO_BUTTONS

    def without_buttons(self) -> Shown:
        return Shown(self.text_hash, NO_BUTTONS)

    def to_saved(self) -> str:
        return json.dumps(vars(self), separators=(",", ":"))  # (asdict's deep copy is not needed)

    @classmethod
    def from_saved(cls, saved: str, round_no: int = 0) -> Shown:
        """Read as saved: JSON, or the digest string of older versions
        (``<text>:<buttons>[:<turn>.<reminded>]``); ``round_no`` where they did not name one."""
        if saved.startswith("{"):
            fields = json.loads(saved)
            return cls(
                str(fields["text_hash"]),
                str(fields["buttons_hash"]),
                fields.get("turn"),
                bool(fields.get("reminded")),
                int(fields.get("round_no", round_no)),
            )
        text, buttons, *prompt = saved.split(":")
        if not prompt:
            return cls(text, buttons, round_no=round_no)
        turn, _, reminded = prompt[0].partition(".")
        return cls(text, buttons, int(turn), reminded == "1", round_no)
