"""Telegram's ``Update`` as the webhook receives it: the fields cairn reads, nothing more.

Shapes follow the Bot API reference (https://core.telegram.org/bots/api#update). Unlike cairn's
own models these ignore unknown fields: Telegram adds fields to its objects over time, and a
webhook that refused them would make Telegram retry the update until it gave up.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TelegramObject(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class User(TelegramObject):
    id: int
    is_bot: bool = False
    first_name: str = ""
    username: str | None = None
    language_code: str | None = None


class Chat(TelegramObject):
    id: int
    type: str


class Message(TelegramObject):
    message_id: int
    date: int
    chat: Chat
    sender: User | None = Field(default=None, alias="from")
    text: str | None = None


class Update(TelegramObject):
    """One update; only a new text message from a person is answered."""

    update_id: int = Field(ge=0)
    message: Message | None = None
    edited_message: Message | None = None

    def text_message(self) -> Message | None:
        """The new message with text, not from a bot; ``None`` for anything else."""
        message = self.message
        if message is None or not (message.text or "").strip():
            return None
        if message.sender is not None and message.sender.is_bot:
            return None
        return message


GROUP_CHATS = frozenset({"group", "supergroup"})


def speaker_of(message: Message) -> str | None:
    """Who said ``message`` where several people talk: ``tg:<user id>`` in a group chat (the
    chat's memory is the group's own scope, ``tg:<chat id>``, and authority is per speaker);
    ``None`` in a private chat, whose only speaker is the chat's actor."""
    if message.chat.type not in GROUP_CHATS or message.sender is None:
        return None
    return f"tg:{message.sender.id}"
