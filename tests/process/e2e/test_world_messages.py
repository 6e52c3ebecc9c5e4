"""The fake Telegram's messages as the Bot API has them: ``date`` when sent, ``edit_date`` when
edited, the message a reply answers, and whom a new message notifies (edits never do)."""

from __future__ import annotations

import json

import pytest

from faketg.world import BOT_ID, ApiError, World

GROUP = -100


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.5

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def world(clock) -> World:
    world = World(clock=clock)
    world.add_person(1, "Ann", username="ann_plays")
    world.add_person(2, "Bob")
    world.add_person(3, "Cai", started=False)
    world.add_group(GROUP, "G", [1, 2, 3], admins=[1])
    return world


def send(world: World, chat: int, text: str, **params: object) -> dict:
    return world.call("sendMessage", {"chat_id": chat, "text": text, **params})


def test_a_message_has_its_date_and_an_edit_date_once_edited(world, clock):
    sent = send(world, GROUP, "table")
    assert sent["date"] == 1_700_000_000 and "edit_date" not in sent
    clock.now += 65
    edited = world.call(
        "editMessageText", {"chat_id": GROUP, "message_id": sent["message_id"], "text": "table 2"}
    )
    assert edited["date"] == 1_700_000_000 and edited["edit_date"] == 1_700_000_065
    clock.now += 10
    markup = {"inline_keyboard": [[{"text": "a", "callback_data": "x"}]]}
    again = world.call(
        "editMessageReplyMarkup", {"chat_id": GROUP, "message_id": sent["message_id"], "reply_markup": markup}
    )
    assert again["edit_date"] == 1_700_000_075
    message = world.messages[(GROUP, sent["message_id"])]
    assert (message.date, message.edit_date, message.edits) == (1_700_000_000, 1_700_000_075, 2)


def test_a_persons_edit_is_an_edited_message_with_its_edit_date(world, clock):
    posted = world.post(1, GROUP, "/join")["message"]
    clock.now += 30
    update = world.edit(1, GROUP, posted["message_id"], "/leave")
    edited = update["edited_message"]
    assert edited["date"] == posted["date"] and edited["edit_date"] == posted["date"] + 30
    assert edited["entities"][0]["type"] == "bot_command"


def test_a_new_dm_from_the_bot_notifies_its_person_unless_sent_silently(world):
    loud = send(world, 1, "your turn")
    quiet = send(world, 2, "your cards", disable_notification=True)
    assert world.messages[(1, loud["message_id"])].notified == {1}
    assert world.messages[(2, quiet["message_id"])].notified == frozenset()
    mine = world.post(1, 1, "/start")["message"]
    assert world.messages[(1, mine["message_id"])].notified == frozenset()


def test_an_edit_notifies_nobody_new(world):
    sent = send(world, GROUP, "the table")
    world.call(
        "editMessageText",
        {
            "chat_id": GROUP,
            "message_id": sent["message_id"],
            "text": '<a href="tg://user?id=2">Bob</a>',
            "parse_mode": "HTML",
        },
    )
    assert world.messages[(GROUP, sent["message_id"])].notified == frozenset()


def test_in_a_group_a_mention_or_a_reply_notifies_that_person(world):
    plain = send(world, GROUP, "the table")
    link = send(
        world, GROUP, 'Your turn, <a href="tg://user?id=2">Bob</a> &amp; @ann_plays', parse_mode="HTML"
    )
    unparsed = send(world, GROUP, '<a href="tg://user?id=2">Bob</a>')  # no parse mode: only text
    command = world.post(3, GROUP, "/join")["message"]
    reply = send(world, GROUP, "seated", reply_parameters={"message_id": command["message_id"]})
    notified = {
        sent["message_id"]: world.messages[(GROUP, sent["message_id"])].notified
        for sent in (plain, link, unparsed, reply)
    }
    assert notified == {
        plain["message_id"]: frozenset(),
        link["message_id"]: {1, 2},
        unparsed["message_id"]: frozenset(),
        reply["message_id"]: {3},
    }
    assert reply["reply_to_message"]["message_id"] == command["message_id"]
    assert "reply_to_message" not in reply["reply_to_message"]


def test_a_reply_to_a_deleted_message_fails_unless_allowed_without_it(world):
    command = world.post(2, GROUP, "/join")["message"]
    world.messages[(GROUP, command["message_id"])].deleted = True
    with pytest.raises(ApiError, match="message to be replied not found"):
        send(world, GROUP, "seated", reply_to_message_id=command["message_id"])
    sent = send(
        world,
        GROUP,
        "seated",
        reply_parameters=json.dumps(
            {"message_id": command["message_id"], "allow_sending_without_reply": True}
        ),
    )
    message = world.messages[(GROUP, sent["message_id"])]
    assert message.reply_to is None and message.notified == frozenset() and message.sender == BOT_ID
