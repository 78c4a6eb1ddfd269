"""``TelegramBackend``: one webhook delivery -> at most one reply, with memory.

For each delivery: the secret-token header is checked in constant time; the update is parsed
and anything but a person's text message is acknowledged and ignored; the update is claimed
(a redelivery is answered with nothing); the chat's session is resolved (new per day or after
an idle gap); a run recalls for the message; the model answers with the persona and the recall
block as its system prompt and the session's recent turns as context; the reply is sent; then
both turns are appended as events. A retryable failure before the reply releases the claim and
raises, so Telegram's redelivery tries again; a failure after it resumes from the claim, which
kept the reply, and only appends.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import ValidationError

from cairn.errors import BotApiRejectedError, ConflictError, ModelRejectedError
from cairn.model_request import ModelRequest
from cairn.models import Event, Role, Scope
from cairn.ports import MAX_PAGE_SIZE, Clock, Embedder, ModelProvider, Stores
from cairn.runtime.in_process import Appender
from cairn.runtime.session import MemorySession
from cairn.telegram.bot_api import MessageSender
from cairn.telegram.conversation import conversation
from cairn.telegram.sessions import ChatState, actor_for_chat, next_chat_state
from cairn.telegram.settings import TelegramSettings
from cairn.telegram.state import TelegramState
from cairn.telegram.update import Message, Update, speaker_of

logger = logging.getLogger(__name__)

SECRET_HEADER = "x-telegram-bot-api-secret-token"  # noqa: S105 - a header name
_SESSION_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class WebhookOutcome:
    """The HTTP status to answer Telegram with, and what happened (for logs and metrics)."""

    status: int
    outcome: str


def secret_matches(headers: Mapping[str, str], expected: str) -> bool:
    """Whether the request carries Telegram's secret-token header with ``expected``, compared
    in constant time; header names are matched case-insensitively."""
    given = next((v for k, v in headers.items() if k.lower() == SECRET_HEADER), None)
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


@dataclass
class TelegramBackend:
    """The webhook's logic over its ports; build one per warm container."""

    settings: TelegramSettings
    state: TelegramState
    stores: Stores
    model: ModelProvider
    sender: MessageSender
    persona: Callable[[], str]
    clock: Clock
    embedder: Embedder | None = None
    appender: Appender | None = None

    def handle(self, headers: Mapping[str, str], body: str | bytes) -> WebhookOutcome:
        """Answer one delivery; raises only what Telegram should retry (the claim released)."""
        if not secret_matches(headers, self.settings.webhook_secret.get_secret_value()):
            return WebhookOutcome(401, "unauthorized")
        try:
            update = Update.model_validate_json(body)
        except ValidationError:
            return WebhookOutcome(400, "malformed")
        message = update.text_message()
        if message is None:
            return WebhookOutcome(200, "ignored")
        bot, now = self.settings.bot_id, self.clock.now()
        lease = now + timedelta(seconds=self.settings.lease_seconds)
        claim = self.state.claim_update(bot, update.update_id, now=now, lease_until=lease)
        if claim is not None:
            if claim.status != "replied" or claim.session_id is None or claim.reply is None:
                return WebhookOutcome(200, "duplicate")
            self._finish(update.update_id, message, claim.session_id, claim.reply)
            return WebhookOutcome(200, "resumed")
        try:
            session_id, reply = self._reply(message)
        except BotApiRejectedError:
            # Blocked by the user, or the chat is gone: a redelivery would fail the same way.
            self.state.mark_done(bot, update.update_id, keep_until=self._keep_until())
            return WebhookOutcome(200, "undeliverable")
        except BaseException:
            self.state.release_update(bot, update.update_id)
            raise
        self.state.mark_replied(
            bot, update.update_id, session_id=session_id, reply=reply, keep_until=self._keep_until()
        )
        self._finish(update.update_id, message, session_id, reply)
        return WebhookOutcome(200, "answered")

    def _reply(self, message: Message) -> tuple[str, str]:
        chat = self._session(message.chat.id)
        text = message.text or ""
        session = self._memory(chat.actor_id, chat.session_id)
        run = session.start_run(text)
        scope = Scope(memory_id=self.settings.memory_id, actor_id=chat.actor_id)
        history = self._history(scope, chat.session_id)
        request = ModelRequest(
            system=run.system_prompt(self.persona() or self.settings.default_persona),
            messages=conversation(history, text, limit=self.settings.history_messages),
            max_output_tokens=self.settings.max_output_tokens,
            timeout_seconds=self.settings.model_timeout_seconds,
        )
        try:
            reply = self.model.complete(request).text.strip() or self.settings.fallback_reply
        except ModelRejectedError:
            reply = self.settings.fallback_reply
        self.sender.send_message(message.chat.id, reply, reply_to=message.message_id)
        return chat.session_id, reply

    def _finish(self, update_id: int, message: Message, session_id: str, reply: str) -> None:
        """Append both turns, then mark the update done."""
        with self._memory(actor_for_chat(message.chat.id), session_id) as session:
            session.add_turn(Role.USER, message.text or "", speaker=speaker_of(message))
            session.add_turn(Role.ASSISTANT, reply)
        self.state.mark_done(self.settings.bot_id, update_id, keep_until=self._keep_until())

    def _session(self, chat_id: int) -> ChatState:
        """The chat's state for a message now, saved; re-read when another delivery won."""
        for _ in range(_SESSION_ATTEMPTS):
            current = self.state.chat(self.settings.bot_id, chat_id)
            state = next_chat_state(current, chat_id, self.clock.now(), self.settings.sessions)
            try:
                self.state.save_chat(self.settings.bot_id, state)
            except ConflictError:
                continue
            return state
        raise ConflictError("the chat's session kept moving; Telegram will redeliver")

    def _memory(self, actor_id: str, session_id: str) -> MemorySession:
        return MemorySession.local(
            self.stores,
            memory_id=self.settings.memory_id,
            actor_id=actor_id,
            session_id=session_id,
            embedder=self.embedder,
            clock=self.clock,
            options=self.settings.memory,
            appender=self.appender,
        )

    def _history(self, scope: Scope, session_id: str) -> list[Event]:
        events: list[Event] = []
        cursor: str | None = None
        while True:
            page = self.stores.events.list_events(
                scope, session_id, limit=MAX_PAGE_SIZE, cursor=cursor
            )
            events.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                return events

    def _keep_until(self) -> datetime:
        return self.clock.now() + timedelta(hours=self.settings.keep_claims_hours)
