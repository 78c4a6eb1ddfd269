"""The staged rollout payload, schema ``cairn.rollout/1``: what an extractor is handed.

A rollout is the batch of a session's messages that a trigger released, plus up to N earlier
messages of the same session as context (the historical window). It is staged as ONE JSON object
(``encode_payload``) in the staging store (S3 or the embedded blob directory) under
``cairn.rollout.staging_keys.staging_key(scope, rollout_id)``, then announced on the notification
topic. Any extractor, cairn's own or a user's, reads it back with ``decode_payload``.

Contract (documented in docs/extraction.md; change it only by adding a new schema version):

- ``schema`` is ``"cairn.rollout/1"``; a reader refuses any other value.
- Only conversational payloads are messages. Blob and JSON payloads of an event are never
  staged nor counted by triggers (they carry no turn text to extract from); an event holding
  only blobs is acknowledged and never appears in a rollout.
- One entry per message: an event with several conversational payloads gives several entries
  with the same ``event_id`` and increasing ``index`` (the payload's position in the event).
- ``sha256`` is the hex digest of the message text's exact UTF-8 bytes, so an extractor can cite
  exactly what it read and an auditor can check it.
- ``events`` (at least one) and ``history`` are each in session order, (event time, event id,
  index); every history entry precedes the batch and never repeats one of its messages.
- The encoding is canonical (sorted keys, no spaces, UTF-8): staging the same rollout twice
  yields the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Final, Literal, Self

from pydantic import ConfigDict, Field, ValidationError, model_validator

from cairn.errors import InvalidInputError
from cairn.models import (
    ActorId,
    Frozen,
    Label,
    MemoryId,
    Role,
    Scope,
    SessionId,
    UtcDatetime,
)

ROLLOUT_SCHEMA: Final = "cairn.rollout/1"

Trigger = Literal["message_count", "token_count", "idle_timeout", "batch_limit", "session_closed"]


def text_sha256(text: str) -> str:
    """sha256 hex of the exact UTF-8 bytes of ``text`` (not canonicalised)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RolloutMessage(Frozen):
    """One conversational payload of one event, as an extractor reads it."""

    event_id: Label
    index: int = Field(ge=0, le=99)
    event_timestamp: UtcDatetime
    role: Role
    text: str = Field(min_length=1, max_length=100_000)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    # Who said it, where several people talk (the event's ``speaker_id`` metadata).
    speaker_id: Label | None = None

    @model_validator(mode="after")
    def _digest_matches_text(self) -> Self:
        if self.sha256 != text_sha256(self.text):
            raise ValueError("sha256 is not the digest of the message text")
        return self


class RolloutPayload(Frozen):
    """A staged rollout: the released batch of messages and the history before it.

    ``strategy_ids`` are the memory's strategies the rollout is for (every strategy whose
    trigger conditions took part in releasing it); ``trigger`` says which condition fired.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_id: Literal["cairn.rollout/1"] = Field(default=ROLLOUT_SCHEMA, alias="schema")
    rollout_id: Label
    memory_id: MemoryId
    actor_id: ActorId
    session_id: SessionId
    strategy_ids: tuple[Label, ...]
    trigger: Trigger
    events: tuple[RolloutMessage, ...] = Field(min_length=1)
    history: tuple[RolloutMessage, ...] = ()
    created_at: UtcDatetime

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)


def encode_payload(payload: RolloutPayload) -> bytes:
    """The canonical JSON bytes of ``payload``: equal payloads always give equal bytes."""
    document = payload.model_dump(mode="json", by_alias=True)
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def decode_payload(data: bytes) -> RolloutPayload:
    """The payload in ``data``; ``InvalidInputError`` if it is not a ``cairn.rollout/1`` object."""
    try:
        return RolloutPayload.model_validate_json(data)
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in error["loc"]) for error in exc.errors()})
        raise InvalidInputError(
            f"the staged rollout is not a valid {ROLLOUT_SCHEMA} payload (check: "
            f"{', '.join(fields)[:300]}); stage it again with cairn.rollout.payload"
        ) from None


NOTICE_SCHEMA: Final = "cairn.rollout-notice/1"


class RolloutNotice(Frozen):
    """The message announcing a staged rollout: where to read it, never what it says.

    It is the SNS/SQS message body (and what the embedded worker is handed). ``staging_key``
    is the payload's key in the staging store (an S3 object key in cairn's rollout bucket).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_id: Literal["cairn.rollout-notice/1"] = Field(default=NOTICE_SCHEMA, alias="schema")
    memory_id: MemoryId
    actor_id: ActorId
    rollout_id: Label
    staging_key: Annotated[str, Field(min_length=1, max_length=1024)]

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)

    @classmethod
    def of(cls, scope: Scope, rollout_id: str, staging_key: str) -> Self:
        """The notice of the rollout ``rollout_id`` of ``scope``, staged at ``staging_key``."""
        return cls(
            memory_id=scope.memory_id,
            actor_id=scope.actor_id,
            rollout_id=rollout_id,
            staging_key=staging_key,
        )


def encode_notice(notice: RolloutNotice) -> str:
    """The notice as compact JSON text (a message body)."""
    document = notice.model_dump(mode="json", by_alias=True)
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def decode_notice(body: str | bytes) -> RolloutNotice:
    """The notice in a message body; ``InvalidInputError`` if it is not a rollout notice."""
    try:
        return RolloutNotice.model_validate_json(body)
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in error["loc"]) for error in exc.errors()})
        raise InvalidInputError(
            f"the message is not a {NOTICE_SCHEMA} notice (check: {', '.join(fields)[:300]}); "
            "only cairn's stager publishes on this topic"
        ) from None
