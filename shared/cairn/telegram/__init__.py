"""The Telegram reference backend: a webhook that answers each message with memory.

``TelegramBackend`` (``webhook``) is the logic; its ports are ``TelegramState`` (``state``,
``state_dynamodb``), ``MessageSender`` (``bot_api``), the persona (``persona``, read through a
``PersonaReader``: ``cairn.aws.s3_objects.S3ObjectReader`` in a deployment), a
``ModelProvider`` and cairn's ``Stores``. An app beside the runtime, not in it: ``cairn.runtime``
never imports it, and ``state_dynamodb`` is its only module that reaches an AWS adapter.
``functions/telegram/handler.py`` is the Lambda shell and docs/runtime.md the deployment guide.
"""

from cairn.telegram.bot_api import BotApi, MessageSender
from cairn.telegram.persona import PersonaFiles
from cairn.telegram.sessions import ChatState, SessionPolicy
from cairn.telegram.settings import TelegramSettings
from cairn.telegram.state import InMemoryTelegramState, TelegramState, UpdateClaim
from cairn.telegram.webhook import TelegramBackend, WebhookOutcome, secret_matches

__all__ = [
    "BotApi",
    "ChatState",
    "InMemoryTelegramState",
    "MessageSender",
    "PersonaFiles",
    "SessionPolicy",
    "TelegramBackend",
    "TelegramSettings",
    "TelegramState",
    "UpdateClaim",
    "WebhookOutcome",
    "secret_matches",
]
