"""A text longer than Telegram takes is cut before it is sent, never refused: a popup (every answer
to a press goes through ``answer``) and a message (every send and edit goes through ``raw.call``)."""

from telegram import Update

from bot.handlers.common import answer
from bot.send import raw
from bot.telegram_facts import ELLIPSIS, MESSAGE_CHARACTERS, POPUP_CHARACTERS, utf16_length
from faketg.harness import GROUP


async def test_a_long_popup_is_cut_and_shown(bot, world):
    await bot.driver.send(1, GROUP, "/newgame muxi")
    message_id, data = bot.driver.button_data(GROUP, "加入")
    update = Update.de_json(world.press(2, GROUP, message_id, data), bot.application.bot)
    assert update.callback_query is not None
    await answer(update.callback_query, "你的牌 " * 100, alert=True)
    popup = world.popups[2][-1]
    assert popup.show_alert and popup.text.endswith(ELLIPSIS)
    assert utf16_length(popup.text) <= POPUP_CHARACTERS
    assert world.open_queries == {}, "answered, not refused"


async def test_a_long_message_is_cut_and_sent_then_edited(bot, world):
    telegram = bot.application.bot
    long = "<b>" + "牌局 " * 3000 + "</b>"
    sent = await raw.call(telegram, "sendMessage", chat_id=GROUP, text=long, parse_mode="HTML")
    message = world.messages[(GROUP, int(sent["message_id"]))]
    assert len(message.text) <= MESSAGE_CHARACTERS and message.text.endswith(f"{ELLIPSIS}</b>")
    longer = "<i>" + "🂠" * 3000 + "</i>"
    await raw.call(
        telegram,
        "editMessageText",
        chat_id=GROUP,
        message_id=message.message_id,
        text=longer,
        parse_mode="HTML",
    )
    assert utf16_length(message.text) <= MESSAGE_CHARACTERS and message.text.endswith(f"{ELLIPSIS}</i>")
