"""Run evidence, schema ``cairn.evidence/1``: what a completed agent run leaves for consolidation.

When a root run completes successfully its transcript is staged as a pending ``evidence``
rollout (``EvidenceStager``): one JSON object in the staging store, under the same key scheme as
extraction rollouts, announced on the same notifier. It is bounded whatever the run was:

- at most ``MAX_MESSAGES`` (32) messages whose texts hold at most ``MAX_MESSAGES_BYTES`` (32 KB)
  of UTF-8 in all, the newest kept; a message's tool-call annotations are joined to its text
  once, before any truncation, and one message is cut to at most ``MAX_MESSAGE_BYTES``;
- the final answer apart, cut to at most ``MAX_ANSWER_BYTES`` (8 KB).

The transcript is hashed one message at a time (``transcript_sha256`` chains each message's
digest), and only the bounded window is ever copied: staging never holds a second full copy of
the transcript. ``sha256`` of a message is taken over its whole joined text, so an auditor can
tell a cut message from the one the run saw. The encoding is canonical (sorted keys, no
spaces), so staging the same run again under the same rollout id gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from pydantic import ConfigDict, Field, ValidationError

from cairn.errors import CairnError, InvalidInputError, RolloutConflictError
from cairn.models import ActorId, Frozen, Label, MemoryId, Role, Scope, SessionId, UtcDatetime
from cairn.ports import Clock, Notifier, RolloutStore, StagingStore, SweepTimer
from cairn.rollout.index import STALL_AFTER, Rollout, RolloutState, due_at
from cairn.rollout.payload import RolloutNotice
from cairn.rollout.staging_keys import staging_key

log = logging.getLogger(__name__)

EVIDENCE_SCHEMA: Final = "cairn.evidence/1"
MAX_MESSAGES = 32
MAX_MESSAGES_BYTES = 32 * 1024
MAX_MESSAGE_BYTES = 8 * 1024
MAX_ANSWER_BYTES = 8 * 1024
TRUNCATION_MARK = "…"


class TranscriptMessage(Frozen):
    """One message of a run as the runtime saw it; ``tool_calls`` name the tools it called."""

    role: Role
    text: str
    tool_calls: tuple[str, ...] = ()


class EvidenceMessage(Frozen):
    """One staged message: ``index`` in the transcript, the (possibly cut) text, and the
    digest of the whole joined text."""

    index: int = Field(ge=0)
    role: Role
    text: str = Field(max_length=MAX_MESSAGE_BYTES)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    truncated: bool = False


class EvidencePayload(Frozen):
    """A completed run's bounded evidence, staged as one pending rollout."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_id: Literal["cairn.evidence/1"] = Field(default=EVIDENCE_SCHEMA, alias="schema")
    rollout_id: Label
    memory_id: MemoryId
    actor_id: ActorId
    session_id: SessionId
    run_id: Label
    completed_at: UtcDatetime
    messages: tuple[EvidenceMessage, ...] = Field(default=(), max_length=MAX_MESSAGES)
    final_answer: str | None = Field(default=None, max_length=MAX_ANSWER_BYTES)
    final_answer_truncated: bool = False
    transcript_messages: int = Field(ge=0)
    transcript_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)


def clip_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    """``text`` if it fits in ``max_bytes`` of UTF-8, else its longest prefix that fits with
    ``TRUNCATION_MARK`` appended; never splits a character."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text, False
    room = max(0, max_bytes - len(TRUNCATION_MARK.encode("utf-8")))
    return encoded[:room].decode("utf-8", errors="ignore") + TRUNCATION_MARK, True


def joined_text(message: TranscriptMessage) -> str:
    """The text with its tool-call annotations, joined once (before any truncation)."""
    if not message.tool_calls:
        return message.text
    calls = ", ".join(message.tool_calls)
    return f"{message.text}\n[tool calls: {calls}]" if message.text else f"[tool calls: {calls}]"


@dataclass(frozen=True, slots=True)
class RunIdentity:
    """Which run the evidence is of, and where it is staged."""

    scope: Scope
    session_id: str
    run_id: str
    rollout_id: str
    completed_at: datetime


def build_evidence(
    run: RunIdentity, transcript: Iterable[TranscriptMessage], final_answer: str | None
) -> EvidencePayload:
    """The bounded evidence of ``run``: the newest messages of ``transcript`` within the
    bounds, and the final answer apart. When the transcript ends with that answer, it is
    staged once, as the final answer, with its tool-call annotations."""
    chain = hashlib.sha256()
    window: deque[EvidenceMessage] = deque()
    used = count = 0
    last: TranscriptMessage | None = None
    for index, message in enumerate(transcript):
        text = joined_text(message)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        chain.update(f"{message.role.value}:{digest}\n".encode())
        count, last = count + 1, message
        shown, cut = clip_utf8(text, MAX_MESSAGE_BYTES)
        window.append(
            EvidenceMessage(
                index=index, role=message.role, text=shown, sha256=digest, truncated=cut
            )
        )
        used += len(shown.encode("utf-8"))
        while len(window) > MAX_MESSAGES or used > MAX_MESSAGES_BYTES:
            used -= len(window.popleft().text.encode("utf-8"))
    answer = final_answer
    if _ends_with(last, final_answer) and window and window[-1].index == count - 1:
        window.pop()  # staged once, as the final answer, annotations included
        answer = joined_text(last) if last is not None else answer
    clipped, answer_cut = clip_utf8(answer, MAX_ANSWER_BYTES) if answer else (None, False)
    return EvidencePayload(
        rollout_id=run.rollout_id,
        memory_id=run.scope.memory_id,
        actor_id=run.scope.actor_id,
        session_id=run.session_id,
        run_id=run.run_id,
        completed_at=run.completed_at,
        messages=tuple(window),
        final_answer=clipped,
        final_answer_truncated=answer_cut,
        transcript_messages=count,
        transcript_sha256=chain.hexdigest(),
    )


def _ends_with(last: TranscriptMessage | None, answer: str | None) -> bool:
    return bool(answer) and last is not None and last.role is Role.ASSISTANT and last.text == answer


def encode_evidence(payload: EvidencePayload) -> bytes:
    """The canonical JSON bytes of ``payload``: equal payloads always give equal bytes."""
    document = payload.model_dump(mode="json", by_alias=True)
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def decode_evidence(data: bytes) -> EvidencePayload:
    """The payload in ``data``; ``InvalidInputError`` if it is not ``cairn.evidence/1``."""
    try:
        return EvidencePayload.model_validate_json(data)
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in error["loc"]) for error in exc.errors()})
        raise InvalidInputError(
            f"the staged evidence is not a valid {EVIDENCE_SCHEMA} payload (check: "
            f"{', '.join(fields)[:300]}); it cannot be consolidated"
        ) from None


@dataclass(frozen=True)
class EvidenceStager:
    """Stages a run's evidence: payload put, rollout stored ``staged``, notice announced.

    Every step is idempotent per rollout id, so staging again (a retry, a restage) finishes
    what an earlier attempt left: a payload already staged stands (``RolloutConflictError`` on
    the put means other bytes were staged first, and those win), a stored rollout is kept as
    it is, and a rollout already announced or consumed is not announced again. A failure to
    announce leaves the rollout ``staged``; the sweep announces it within ``STALL_AFTER``.
    """

    rollouts: RolloutStore
    staging: StagingStore
    notifier: Notifier
    clock: Clock
    timer: SweepTimer | None = None  # armed for the rollout's due time, as an append arms it

    def stage(self, payload: EvidencePayload) -> Rollout:
        """Stage and announce ``payload``; return its rollout as stored afterwards."""
        try:
            stored = self._stage(payload)
        except CairnError:
            self._arm(self.clock.now() + STALL_AFTER)  # left staged: the sweep announces it
            raise
        self._arm(due_at(stored))
        return stored

    def _arm(self, at: datetime | None) -> None:
        if self.timer is None or at is None:
            return
        try:
            self.timer.arm(at)
        except CairnError as exc:
            log.warning("sweep not armed (%s); the safety sweep will find it", type(exc).__name__)

    def _stage(self, payload: EvidencePayload) -> Rollout:
        scope, rid = payload.scope, payload.rollout_id
        try:
            key = self.staging.put(scope, rid, encode_evidence(payload))
        except RolloutConflictError:
            key = staging_key(scope, rid)
        rollout = Rollout(
            rollout_id=rid,
            memory_id=scope.memory_id,
            actor_id=scope.actor_id,
            session_id=payload.session_id,
            trigger="run_completed",
            state=RolloutState.STAGED,
            staging_key=key,
            claimed_at=payload.completed_at,
            updated_at=self.clock.now(),
        )
        stored = self.rollouts.add_staged(scope, rollout)
        if stored.state is not RolloutState.STAGED:
            return stored
        self.notifier.announce(RolloutNotice.of(scope, rid, key))
        return self.rollouts.mark(scope, rid, RolloutState.ANNOUNCED, now=self.clock.now())
