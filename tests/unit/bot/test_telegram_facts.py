"""bot/telegram_facts.py: Telegram's limits enforced, chat kinds, and what a failed request means."""

from datetime import timedelta

import pytest
from telegram import Chat
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)

from bot.telegram_facts import (
    ELLIPSIS,
    MESSAGE_CHARACTERS,
    POPUP_CHARACTERS,
    ChatKind,
    Failure,
    chat_kind,
    classify,
    ids_between,
    is_private_id,
    kind_of_id,
    message_text,
    popup_text,
    retry_seconds,
    utf16_length,
)
from faketg.world import check_html


def test_a_short_popup_goes_as_it_is():
    text = "x" * POPUP_CHARACTERS
    assert popup_text(text) == text


def test_a_long_popup_is_cut_at_a_word():
    words = " ".join(["word"] * 60)  # 299 characters
    cut = popup_text(words)
    assert utf16_length(cut) <= POPUP_CHARACTERS
    assert cut.endswith(f"word{ELLIPSIS}"), "cut between words, not inside one"
    assert cut.startswith(words[:150])


def test_a_popup_without_spaces_is_cut_where_it_fills():
    cut = popup_text("你" * 300)
    assert cut == "你" * (POPUP_CHARACTERS - 1) + ELLIPSIS


def test_a_popup_is_counted_as_telegram_counts_it():
    cut = popup_text("🂠" * 150)  # 150 characters, 300 UTF-16 code units
    assert utf16_length(cut) <= POPUP_CHARACTERS
    assert cut == "🂠" * 99 + ELLIPSIS, "an emoji is never split in two"


def test_a_long_message_is_cut_at_a_word():
    text = "\n".join(f"line {n} of the table" for n in range(400))
    cut = message_text(text)
    assert utf16_length(cut) <= MESSAGE_CHARACTERS
    assert cut.endswith(f"table{ELLIPSIS}")
    assert text.startswith(cut[:-1])


def test_a_message_is_never_cut_inside_a_tag_or_entity_and_its_tags_are_closed():
    row = "<b>阿明 &amp; 小红</b> <i>+1,400 <code>K♠ A♠</code></i>\n"
    text = "<blockquote>" + row * 200 + "</blockquote>"
    cut = message_text(text)
    assert utf16_length(cut) <= MESSAGE_CHARACTERS
    check_html(cut)  # the fake Telegram's parser refuses what Telegram's would
    assert cut.endswith("</blockquote>")


def test_a_message_cut_in_a_nested_tag_closes_every_tag():
    text = "<b><i>" + "长" * 5000 + "</i></b>"
    cut = message_text(text)
    assert cut.endswith(f"长{ELLIPSIS}</i></b>")
    assert utf16_length(cut) == MESSAGE_CHARACTERS
    check_html(cut)


def test_a_plain_message_is_cut_as_text():
    text = "<" * 5000
    cut = message_text(text, html=False)
    assert cut == "<" * (MESSAGE_CHARACTERS - 1) + ELLIPSIS


def test_a_message_within_the_limit_goes_as_it_is():
    text = "<b>" + "x" * (MESSAGE_CHARACTERS - 7) + "</b>"
    assert message_text(text) == text


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("private", ChatKind.PRIVATE),
        ("sender", ChatKind.PRIVATE),
        ("group", ChatKind.GROUP),
        ("supergroup", ChatKind.SUPERGROUP),
        ("channel", ChatKind.CHANNEL),
    ],
)
def test_a_chats_kind_is_its_type(kind, expected):
    assert chat_kind(Chat(1, kind)) is expected
    assert expected.is_group == (kind in ("group", "supergroup"))


@pytest.mark.parametrize(
    ("chat_id", "expected"),
    [
        (1, ChatKind.PRIVATE),
        (7_000_000_000, ChatKind.PRIVATE),  # user ids pass 32 bits
        (-1, ChatKind.GROUP),
        (-100_123, ChatKind.GROUP),
        (-999_999_999_999, ChatKind.GROUP),
        (-1_000_000_000_001, ChatKind.SUPERGROUP),
        (-1_001_234_567_890, ChatKind.SUPERGROUP),
    ],
)
def test_a_chats_kind_from_its_id(chat_id, expected):
    assert kind_of_id(chat_id) is expected
    assert is_private_id(chat_id) == (expected is ChatKind.PRIVATE)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RetryAfter(3), Failure.RATE_LIMITED),
        (ChatMigrated(-1_001_234_567_890), Failure.MIGRATED),
        (Forbidden("Forbidden: bot was blocked by the user"), Failure.BLOCKED),
        (Forbidden("Forbidden: bot can't initiate conversation with a user"), Failure.BLOCKED),
        (Forbidden("Forbidden: bot was kicked from the supergroup chat"), Failure.BLOCKED),
        (BadRequest("Bad Request: chat not found"), Failure.CHAT_GONE),
        (BadRequest("Bad Request: message to edit not found"), Failure.MESSAGE_GONE),
        (BadRequest("Bad Request: message to delete not found"), Failure.MESSAGE_GONE),
        (BadRequest("Bad Request: MESSAGE_ID_INVALID"), Failure.MESSAGE_GONE),
        (BadRequest("Bad Request: message can't be edited"), Failure.UNEDITABLE),
        (BadRequest("Bad Request: message can't be deleted for everyone"), Failure.UNEDITABLE),
        (
            BadRequest(
                "Bad Request: message is not modified: specified new message content and reply "
                "markup are exactly the same as a current content and reply markup of the message"
            ),
            Failure.NOT_MODIFIED,
        ),
        (BadRequest("Bad Request: message to be replied not found"), Failure.REPLIED_GONE),
        (
            BadRequest("Bad Request: query is too old and response timeout expired or query ID is invalid"),
            Failure.QUERY_EXPIRED,
        ),
        (BadRequest("Bad Request: message is too long"), Failure.REFUSED),
        (BadRequest("Bad Request: can't parse entities: unclosed tag"), Failure.REFUSED),
        (TimedOut(), Failure.PASSING),
        (NetworkError("Bad Gateway"), Failure.PASSING),
        (InvalidToken(), Failure.REFUSED),
        (Conflict("Conflict: terminated by other getUpdates request"), Failure.REFUSED),
    ],
)
def test_a_failure_is_classified_by_type_and_description(error, expected):
    assert classify(error) is expected


def test_a_429s_wait_in_seconds():
    assert retry_seconds(RetryAfter(3)) == 3.0
    assert retry_seconds(RetryAfter(timedelta(seconds=1.5))) == 1.5


@pytest.mark.parametrize(
    ("after", "before", "expected"),
    [
        (10, 12, [11]),  # between two known messages
        (10, 30, [29, 28, 27]),  # at most three, nearest to the one sent again first
        (10, None, [11, 12, 13]),  # nothing new sent: up from the last known
        (None, 5, [4, 3, 2]),  # no message known before: down from the one sent
        (None, 2, [1]),
        (10, 11, []),  # nothing can be between
        (None, None, []),
    ],
)
def test_the_ids_a_message_a_crash_left_unknown_may_have(after, before, expected):
    assert ids_between(after, before, 3) == expected
