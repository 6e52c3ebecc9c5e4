"""The door every update passes before any handler: edits and borrowed identities stop here.

- An edited message is not a new command: editing an old message into ``/leave`` must not get
  anyone up from a table, so edits never reach a handler.
- A message sent as a channel, or by an anonymous admin, comes from one Telegram user shared by
  every channel (or every anonymous admin) anywhere, with ``sender_chat`` saying which: acting on it
  would let one channel spend another's daily bonus or get up from its seat. Such a command gets a
  short reply asking the person to play as themselves, and nothing else happens (not even the
  starting grant for that shared id). Service messages pass: leaving the group and the upgrade to a
  supergroup act on the member they name or on the chat, not on their sender.
"""

from __future__ import annotations

from telegram import Message, Update
from telegram.ext import ApplicationHandlerStop, CommandHandler, TypeHandler

from bot.botdata import Context
from bot.display.i18n import t
from bot.handlers.common import answer, is_group, reply, runtime_of

CHANNEL_BOT = 136817688  # "Channel_Bot": messages sent as a channel
GROUP_ANONYMOUS_BOT = 1087968824  # "GroupAnonymousBot": messages of anonymous admins
TELEGRAM = 777000  # "Telegram": a linked channel's posts forwarded into its discussion group
SHARED_SENDERS = frozenset({CHANNEL_BOT, GROUP_ANONYMOUS_BOT, TELEGRAM})
GROUP = -1  # before every other handler (they are all in group 0)


async def gate(update: Update, context: Context) -> None:
    """Let the update through, or stop it here (``ApplicationHandlerStop``)."""
    if update.edited_message or update.edited_channel_post or update.channel_post:
        raise ApplicationHandlerStop  # edits are not commands; a channel has no one to play
    query = update.callback_query
    if query is not None and query.from_user.id in SHARED_SENDERS:
        language = await _language(update, context)
        await answer(query, t(language, "impostor"))
        raise ApplicationHandlerStop
    message = update.message
    if message is None or not _borrowed(message) or (message.text is None and message.caption is None):
        return
    if not message.is_automatic_forward and _for_a_command(update, context):
        language = await _language(update, context)
        reply(context, update, t(language, "impostor"))
    raise ApplicationHandlerStop


def _borrowed(message: Message) -> bool:
    """Sent under an identity many share: as a channel, or by an anonymous admin."""
    sender = message.from_user
    return message.sender_chat is not None or (sender is not None and sender.id in SHARED_SENDERS)


def _for_a_command(update: Update, context: Context) -> bool:
    """Would one of our commands take it (and not a command of another bot, or chatter)?"""
    return any(
        isinstance(handler, CommandHandler) and handler.check_update(update)
        for group, handlers in context.application.handlers.items()
        if group != GROUP
        for handler in handlers
    )


async def _language(update: Update, context: Context) -> str:
    """The chat's language (read, never written); the bot's own outside a group."""
    runtime, chat = runtime_of(context), update.effective_chat
    return (
        await runtime.preferences.chat_language(chat.id)
        if chat is not None and is_group(chat)
        else runtime.settings.language
    )


HANDLER = TypeHandler(Update, gate)
