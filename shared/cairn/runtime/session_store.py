"""What a ``MemorySession`` needs from wherever memory lives: the ``SessionStore`` port.

Two implementations, so the session never branches on where memory is:

- ``cairn.runtime.in_process.InProcessSessionStore``: a ``cairn.ports.Stores`` bundle and
  ``cairn.recall`` in this process (the embedded SQLite store, or DynamoDB with the caller's
  IAM credentials);
- ``cairn.runtime.agentcore.AgentCoreSessionStore``: a ``bedrock-agentcore`` client pointed at a
  cairn HTTP endpoint (``cairn serve`` or the deployed API), its errors translated by
  ``cairn.aws.agentcore_client``.

Every method takes the scope the session is pinned to; an id that lives outside it is reported
as ``RecordNotFoundError``, exactly like an id that does not exist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from cairn.changes import NewRecord
from cairn.models import EventInput, Scope, Source, Status, Trust
from cairn.recall import RecallPolicy, RecallQuery
from cairn.recall.render import BlockEntry


@dataclass(frozen=True, slots=True)
class RecalledItem:
    """One recalled record: its full content, how the block shows it, and the semantic evidence
    for it (``evidence``: the cosine locally, the retrieval score remotely; ``None`` when it was
    ranked by keywords alone)."""

    record_id: str
    version: int | None
    content: str
    entry: BlockEntry
    evidence: float | None
    # The events the record was derived from (its sources' event ids), where the store knows.
    source_events: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Recalled:
    """A recall's answer: the rendered block, its items in block order, and its journal id."""

    block: str
    items: tuple[RecalledItem, ...]
    journal_id: str | None


@dataclass(frozen=True, slots=True)
class RecalledHit:
    """One line of a recall over records, turns and chunks: its kind, its id (record, event or
    chunk id), its session (turns and chunks), its date (YYYY-MM-DD), its text and trust."""

    kind: str
    ref: str
    session_id: str | None
    date: str
    text: str
    trust: Trust


@dataclass(frozen=True, slots=True)
class RecalledHistory:
    """A recall over records, turns and chunks: the block, its hits in order, its journal id."""

    block: str
    hits: tuple[RecalledHit, ...]
    journal_id: str | None


def as_hit(item: RecalledItem) -> RecalledHit:
    """A recalled record as a line of a recall over channels."""
    return RecalledHit(
        "records", item.record_id, None, item.entry.date, item.content, item.entry.trust
    )


@dataclass(frozen=True, slots=True)
class Written:
    """What a tool's write left as the record's head; ``version`` is ``None`` where the store
    does not expose versions (the AgentCore wire API), ``confirmed`` when an exact repeat
    confirmed an existing record instead of adding one."""

    record_id: str
    version: int | None
    status: Status
    trust: Trust
    confirmed: bool = False


class SessionStore(Protocol):
    """Durable memory as one session sees it: turns in, recall out, and the tools' writes."""

    @property
    def can_curate(self) -> bool:
        """Whether records can be revised and retracted here (``memory_edit`` is offered)."""
        ...

    def append(self, scope: Scope, turn: EventInput, *, token: str) -> None:
        """Append one turn as an event; ``token`` is unique per turn, so a store that can
        deduplicate a retried append by it does."""
        ...

    def append_batch(self, scope: Scope, turns: Sequence[tuple[EventInput, str]]) -> None:
        """Append each ``(turn, token)`` in order, in as few writes as the store allows (one
        transaction per batch in process); every turn is written or the call raises, and a
        batch written again after a failure stores only the turns that had not landed."""
        ...

    def recall(
        self, scope: Scope, query: RecallQuery, policy: RecallPolicy, *, journal: bool
    ) -> Recalled:
        """The block of the scope's live memories most relevant to ``query``, within ``policy``."""
        ...

    def recall_channels(
        self, scope: Scope, query: RecallQuery, policy: RecallPolicy, channels: frozenset[str]
    ) -> RecalledHistory:
        """Records, turns and/or chunks (``channels``) most relevant to ``query`` in one ranking
        (``cairn.history.recall_both``), journalled; ``InvalidInputError`` for a channel this
        store cannot search."""
        ...

    def journal_injection(
        self, scope: Scope, query: RecallQuery, shown: Sequence[RecalledItem], policy: RecallPolicy
    ) -> str | None:
        """Journal a block made of exactly ``shown`` (rendered as ``policy`` renders entries);
        return the journal id, or ``None`` where the store journals its own retrievals."""
        ...

    def journal_release(
        self,
        scope: Scope,
        filters: Mapping[str, str],
        released: Sequence[RecalledItem],
        policy: RecallPolicy,
    ) -> str | None:
        """Journal a host's release of ``released`` (``filters`` say what was released, by
        whom, from which recall: ``cairn.runtime.release``); return the journal id, or ``None``
        where the store keeps no journal the session can write."""
        ...

    def learn(self, scope: Scope, record: NewRecord) -> Written:
        """File ``record``; an exact repeat of a live record in its namespace confirms that
        record instead of adding a copy."""
        ...

    def revise(self, scope: Scope, record_id: str, content: str, source: Source) -> Written:
        """A new version of the live record with ``content``, citing ``source`` (trust can only
        fall); ``RecordNotFoundError`` outside the scope, ``InvalidChangeError`` if not live."""
        ...

    def retract(self, scope: Scope, record_id: str, reason: str) -> Written:
        """Retract the live record softly (recall stops returning it; content is kept)."""
        ...
