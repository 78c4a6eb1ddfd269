"""``TelegramSettings``: how the Telegram backend behaves, validated once at cold start."""

from __future__ import annotations

import re

from pydantic import Field, SecretStr, field_validator

from cairn.models import Frozen, MemoryId
from cairn.runtime.options import SessionOptions
from cairn.telegram.sessions import SessionPolicy

# Telegram's rule for the webhook secret (setWebhook secret_token): 1-256 of A-Z a-z 0-9 _ -.
SECRET_PATTERN = r"^[A-Za-z0-9_\-]{1,256}$"  # noqa: S105 - a pattern, not a secret


class TelegramSettings(Frozen):
    """Everything but the clients: identity, sessions, recall, the model call's bounds."""

    # The bot's numeric id: the part of its token before the colon.
    bot_id: str = Field(pattern=r"^[0-9]{1,20}$")
    webhook_secret: SecretStr
    memory_id: MemoryId = "telegram"
    sessions: SessionPolicy = SessionPolicy()
    # Turns always end up in the store; 100 per batch means: written when the delivery ends.
    memory: SessionOptions = SessionOptions(batch_size=100)
    # The current session's last 20 turns give the model the thread of today's conversation;
    # older sessions reach it only through recall.
    history_messages: int = Field(default=20, ge=0, le=200)
    max_output_tokens: int = Field(default=1024, ge=1, le=8192)
    # Under the function's timeout, with room to send the reply and append the turns.
    model_timeout_seconds: float = Field(default=20.0, gt=0.0, le=300.0)
    # Used when no persona file is configured or present.
    default_persona: str = Field(
        default="You are a helpful assistant in a Telegram chat. Answer briefly and warmly.",
        min_length=1,
        max_length=32_768,
    )
    fallback_reply: str = Field(
        default="Sorry, I can't answer that right now.", min_length=1, max_length=4096
    )
    # Longer than the function's timeout: a claim outlives the attempt that took it.
    lease_seconds: int = Field(default=120, ge=10, le=3600)
    # Telegram keeps an undelivered update for 24 hours; a claim outlives every redelivery.
    keep_claims_hours: int = Field(default=48, ge=24, le=24 * 30)

    @field_validator("webhook_secret")
    @classmethod
    def _secret_shape(cls, value: SecretStr) -> SecretStr:
        if not re.fullmatch(SECRET_PATTERN, value.get_secret_value()):
            raise ValueError("the webhook secret must be 1-256 of A-Z, a-z, 0-9, _ and -")
        return value

    @classmethod
    def for_token(cls, token: str, **values: object) -> TelegramSettings:
        """Settings for the bot whose token is ``token`` (``<bot id>:<secret part>``)."""
        return cls.model_validate({"bot_id": token.split(":", 1)[0], **values})
