"""What the bot relies on of Telegram's, in one place, each with where it is said.

Limits the bot keeps to (and enforces: a text Telegram would refuse is cut here, never sent).
"""

from __future__ import annotations

# https://core.telegram.org/bots/api#inlinekeyboardbutton: callback_data, "1-64 bytes".
CALLBACK_DATA_BYTES = 64
# https://core.telegram.org/bots/api#answercallbackquery: text, "0-200 characters".
POPUP_CHARACTERS = 200
# https://core.telegram.org/bots/api#sendmessage: text, "1-4096 characters after entities parsing"
# (counted in UTF-16 code units, https://core.telegram.org/api/entities#entity-length).
MESSAGE_CHARACTERS = 4096
# https://core.telegram.org/bots/api#answercallbackquery ("the answer must be sent ... otherwise the
# client shows a progress bar"); Telegram refuses an answer to a query older than ~10-15 s
# ("query is too old and response timeout expired").
ANSWER_WITHIN = 10.0


def utf16_length(text: str) -> int:
    """A text's length as Telegram counts it (UTF-16 code units: an emoji is two)."""
    return len(text.encode("utf-16-le")) // 2
