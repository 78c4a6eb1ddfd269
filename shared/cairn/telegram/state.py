"""What the Telegram backend keeps between deliveries: each chat's session, each update's claim.

``TelegramState`` is the port; ``InMemoryTelegramState`` is the reference implementation (tests,
a single process) and ``cairn.telegram.state_dynamodb.DynamoDBTelegramState`` the one a
deployment uses (the items table). Both pass ``tests/unit/test_runtime_telegram_state.py``.

An update is answered once however often Telegram delivers it: the first delivery claims it
(``in_progress``, under a short lease), records the reply once sent (``replied``, with the
session and the reply, so a retry after a failed append only appends), and marks it ``done``.
A later delivery finds the claim and answers nothing. A claim whose lease ran out while still
``in_progress`` (the function crashed or timed out) can be taken over by the next delivery.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Literal, Protocol

from cairn.errors import ConflictError
from cairn.models import Frozen, UtcDatetime
from cairn.telegram.sessions import ChatState

ClaimStatus = Literal["in_progress", "replied", "done"]


class UpdateClaim(Frozen):
    update_id: int
    status: ClaimStatus
    lease_until: UtcDatetime
    session_id: str | None = None
    reply: str | None = None


class TelegramState(Protocol):
    def chat(self, bot_id: str, chat_id: int) -> ChatState | None:
        """The chat's state, or ``None`` if the bot never heard from it."""
        ...

    def save_chat(self, bot_id: str, state: ChatState) -> None:
        """Store ``state`` if the stored revision is ``state.revision - 1`` (absent for 1),
        else ``ConflictError`` and nothing changes."""
        ...

    def claim_update(
        self, bot_id: str, update_id: int, *, now: datetime, lease_until: datetime
    ) -> UpdateClaim | None:
        """Claim the update and return ``None``; if it is claimed already (and not an
        in-progress claim whose lease ended before ``now``), change nothing and return it."""
        ...

    def mark_replied(
        self, bot_id: str, update_id: int, *, session_id: str, reply: str, keep_until: datetime
    ) -> None:
        """The reply was sent: keep it (and the session) until the turns are appended."""
        ...

    def mark_done(self, bot_id: str, update_id: int, *, keep_until: datetime) -> None:
        """Fully handled; later deliveries are answered with nothing until ``keep_until``."""
        ...

    def release_update(self, bot_id: str, update_id: int) -> None:
        """Drop an in-progress claim so a redelivery handles the update; no-op if absent."""
        ...


class InMemoryTelegramState:
    """``TelegramState`` in process memory; thread-safe."""

    def __init__(self) -> None:
        self._chats: dict[tuple[str, int], ChatState] = {}
        self._claims: dict[tuple[str, int], UpdateClaim] = {}
        self._lock = threading.Lock()

    def chat(self, bot_id: str, chat_id: int) -> ChatState | None:
        with self._lock:
            return self._chats.get((bot_id, chat_id))

    def save_chat(self, bot_id: str, state: ChatState) -> None:
        with self._lock:
            stored = self._chats.get((bot_id, state.chat_id))
            if (stored.revision if stored else 0) != state.revision - 1:
                raise ConflictError("the chat's session moved meanwhile; read it again")
            self._chats[(bot_id, state.chat_id)] = state

    def claim_update(
        self, bot_id: str, update_id: int, *, now: datetime, lease_until: datetime
    ) -> UpdateClaim | None:
        with self._lock:
            existing = self._claims.get((bot_id, update_id))
            if existing is not None and not _abandoned(existing, now):
                return existing
            self._claims[(bot_id, update_id)] = UpdateClaim(
                update_id=update_id, status="in_progress", lease_until=lease_until
            )
            return None

    def mark_replied(
        self, bot_id: str, update_id: int, *, session_id: str, reply: str, keep_until: datetime
    ) -> None:
        with self._lock:
            self._claims[(bot_id, update_id)] = UpdateClaim(
                update_id=update_id,
                status="replied",
                lease_until=keep_until,
                session_id=session_id,
                reply=reply,
            )

    def mark_done(self, bot_id: str, update_id: int, *, keep_until: datetime) -> None:
        with self._lock:
            self._claims[(bot_id, update_id)] = UpdateClaim(
                update_id=update_id, status="done", lease_until=keep_until
            )

    def release_update(self, bot_id: str, update_id: int) -> None:
        with self._lock:
            claim = self._claims.get((bot_id, update_id))
            if claim is not None and claim.status == "in_progress":
                del self._claims[(bot_id, update_id)]


def _abandoned(claim: UpdateClaim, now: datetime) -> bool:
    return claim.status == "in_progress" and claim.lease_until < now
