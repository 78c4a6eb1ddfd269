"""The data contract: pydantic models for whatever crosses a port or the API boundary.

Every model is frozen and refuses unknown fields. Timestamps are timezone-aware UTC.
A record is a chain of immutable versions; the newest is its head (see ``RecordVersion``).

Longer than 300 lines because the data contract (DESIGN §4) is one module: the record
version, its sources and derived trust, events and journal entries validate against each other,
and splitting them would scatter the validators that keep them consistent.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Generic, Self, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

# Patterns follow the AgentCore Memory wire model so ids round-trip through its API unchanged.
ACTOR_ID_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9\-_/]*(?::[a-zA-Z0-9\-_/]+)*[a-zA-Z0-9\-_/]*$"
SESSION_ID_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9\-_]*$"
NAMESPACE_PATTERN = r"^[a-zA-Z0-9/][a-zA-Z0-9\-_/]*(?::[a-zA-Z0-9\-_/]+)*[a-zA-Z0-9\-_/]*$"
RECORD_ID_PATTERN = r"^mem-[a-zA-Z0-9\-_]{36,46}$"
MEMORY_ID_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9\-_:/.]*$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9_\-]*$"

MAX_CONTENT_CHARS = 16_000
MAX_BODY_CHARS = 64_000
# A record's context line: what it bears on among the records linked to it (evolution writes
# it, cairn.history.evolution); one sentence, never the record's statement.
MAX_CONTEXT_CHARS = 300


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware (UTC); naive datetimes are ambiguous")
    return value.astimezone(UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_utc)]
MemoryId = Annotated[str, Field(min_length=1, max_length=256, pattern=MEMORY_ID_PATTERN)]
ActorId = Annotated[str, Field(min_length=1, max_length=255, pattern=ACTOR_ID_PATTERN)]
SessionId = Annotated[str, Field(min_length=1, max_length=100, pattern=SESSION_ID_PATTERN)]
Namespace = Annotated[str, Field(min_length=1, max_length=1024, pattern=NAMESPACE_PATTERN)]
RecordId = Annotated[str, Field(pattern=RECORD_ID_PATTERN)]
Slug = Annotated[str, Field(min_length=1, max_length=64, pattern=SLUG_PATTERN)]
Unit = Annotated[float, Field(ge=0.0, le=1.0)]
Label = Annotated[str, Field(min_length=1, max_length=128)]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=False)


class Scope(Frozen):
    """The isolation unit of long-term memory: nothing crosses ``(memory_id, actor_id)``."""

    memory_id: MemoryId
    actor_id: ActorId

    def __str__(self) -> str:
        return f"{self.memory_id}|{self.actor_id}"


def namespace_matches(namespace: str, prefix: str) -> bool:
    """True when ``prefix`` names ``namespace`` or one of its ancestors, on segment boundaries.

    ``/facts/a1`` and ``/facts/a1/`` both match ``/facts/a1/x/`` but never ``/facts/a10/``.
    """
    if namespace == prefix or prefix == "/":
        return True
    anchored = prefix if prefix.endswith("/") else prefix + "/"
    return namespace.startswith(anchored) or namespace == prefix.rstrip("/")


# --- provenance -----------------------------------------------------------------------------


class SourceKind(StrEnum):
    USER = "user"
    MODEL = "model"
    TOOL = "tool"
    IMPORT = "import"
    SYSTEM = "system"


class Trust(StrEnum):
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


TRUSTED_KINDS = frozenset({SourceKind.USER, SourceKind.SYSTEM})


class Role(StrEnum):
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    TOOL = "TOOL"
    OTHER = "OTHER"


class Source(Frozen):
    """Where a record's content came from: a kind, plus the event, rollout or run it cites.

    ``speaker``: the role of whoever said the cited message (a model source extracted from the
    user's own turn says ``USER``); it decides the evidence's authority (``cairn.authority``),
    never the trust label, which stays the join of the kinds. ``speaker_id``: in a conversation
    with several people (a group chat), the platform's id of the person who said it (the event's
    ``speaker_id`` metadata, set by the host); ``None`` is the actor themself. Authority is per
    speaker: one person's statement never replaces another's.
    """

    kind: SourceKind
    event_id: Label | None = None
    session_id: SessionId | None = None
    rollout_id: Label | None = None
    run_id: Label | None = None
    speaker: Role | None = None
    speaker_id: Label | None = None


def derive_trust(sources: tuple[Source, ...] | list[Source]) -> Trust:
    """``trusted`` only if there is a source and every source is ``user`` or ``system``."""
    if sources and all(s.kind in TRUSTED_KINDS for s in sources):
        return Trust.TRUSTED
    return Trust.UNTRUSTED


def union_sources(*groups: tuple[Source, ...]) -> tuple[Source, ...]:
    """Sources of every group, first occurrence kept, order preserved (trust can only fall)."""
    seen: dict[Source, None] = {}
    for group in groups:
        for source in group:
            seen.setdefault(source, None)
    return tuple(seen)


# --- records --------------------------------------------------------------------------------


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    RETRACTED = "retracted"
    ERASED = "erased"


class EdgeKind(StrEnum):
    RELATES_TO = "relates_to"
    CAUSED_BY = "caused_by"
    SUPERSEDES = "supersedes"
    DECIDED_IN = "decided_in"
    PART_OF = "part_of"
    OWNED_BY = "owned_by"
    DISCUSSED_IN = "discussed_in"
    # Two live records that make incompatible claims the evidence could not decide between;
    # each carries one to the other, and recall labels both "contested" (cairn.consolidate).
    CONTRADICTS = "contradicts"


class Edge(Frozen):
    kind: EdgeKind
    target: Label


class EmbedderId(Frozen):
    """Identity of an embedding space: vectors with different identities are never compared."""

    model_id: Label
    dims: int = Field(ge=1, le=8192)

    @property
    def key(self) -> str:
        return f"{self.model_id}@{self.dims}"


def canonical_content(text: str) -> str:
    """The form a digest is taken over: NFC, whitespace runs collapsed, trimmed, casefolded."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip().casefold()


def content_digest(text: str) -> str:
    """sha256 hex of the canonical content; equal digests mean an exact repeat."""
    return hashlib.sha256(canonical_content(text).encode("utf-8")).hexdigest()


class RecordFields(Frozen):
    """What a writer says about a record; the store adds identity, version and bookkeeping."""

    namespace: Namespace
    strategy: Slug = "custom"
    category: Slug = "fact"
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    body: str | None = Field(default=None, max_length=MAX_BODY_CHARS)
    context: str | None = Field(default=None, min_length=1, max_length=MAX_CONTEXT_CHARS)
    confidence: Unit = 0.7
    importance: Unit = 0.5
    tags: tuple[Label, ...] = ()
    entities: tuple[Label, ...] = ()
    keywords: tuple[Label, ...] = ()
    edges: tuple[Edge, ...] = ()
    sources: tuple[Source, ...] = Field(min_length=1)
    valid_from: UtcDatetime | None = None
    metadata: dict[str, str] = Field(default_factory=dict, max_length=20)

    @model_validator(mode="after")
    def _content_is_not_blank(self) -> Self:
        if not self.content.strip():
            raise ValueError("content must contain text, not only whitespace")
        return self


class RecordVersion(RecordFields):
    """One immutable revision of a record. The newest version of a record is its head.

    ``trust`` is derived from ``sources`` and validated, never supplied independently.
    An ``erased`` version keeps its digest but no content (``content`` is ``"∅"``).
    """

    memory_id: MemoryId
    actor_id: ActorId
    record_id: RecordId
    version: int = Field(ge=1)
    trust: Trust
    status: Status = Status.ACTIVE
    supersedes: RecordId | None = None
    superseded_by: RecordId | None = None
    seen_count: int = Field(default=1, ge=1)
    first_seen_at: UtcDatetime
    last_seen_at: UtcDatetime
    created_at: UtcDatetime
    content_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    embedding: EmbedderId | None = None

    @model_validator(mode="after")
    def _derived_fields_agree(self) -> Self:
        if self.trust is not derive_trust(self.sources):
            raise ValueError("trust must equal the join of the sources")
        if self.status is not Status.ERASED and self.content_digest != content_digest(self.content):
            raise ValueError("content_digest does not match content")
        if self.last_seen_at < self.first_seen_at:
            raise ValueError("last_seen_at precedes first_seen_at")
        return self

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)

    @property
    def live(self) -> bool:
        return self.status is Status.ACTIVE

    @property
    def ref(self) -> VersionRef:
        return VersionRef(record_id=self.record_id, version=self.version)


ERASED_CONTENT = "∅"


class VersionRef(Frozen):
    """Names one exact version of one record."""

    record_id: RecordId
    version: int = Field(ge=1)


# --- events (short-term memory) -------------------------------------------------------------

# The event metadata key a host sets to the platform id of the person who said the turn, in a
# conversation with several people; extraction carries it into each source (``speaker_id``).
SPEAKER_METADATA_KEY = "speaker_id"


class Conversational(Frozen):
    role: Role
    text: str = Field(min_length=1, max_length=100_000)


class BlobPayload(Frozen):
    """A free JSON document, kept exactly as given."""

    blob: Any


class JsonPayload(Frozen):
    """A structured JSON document (AgentCore's ``json`` payload), kept exactly as given."""

    document: Any


Payload = Conversational | BlobPayload | JsonPayload


class Branch(Frozen):
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=SESSION_ID_PATTERN)]
    root_event_id: Label | None = None


class EventInput(Frozen):
    """One turn (or batch of payloads) to append to a session."""

    session_id: SessionId
    event_timestamp: UtcDatetime
    payload: tuple[Payload, ...] = Field(max_length=100)
    branch: Branch | None = None
    metadata: dict[Annotated[str, Field(min_length=1, max_length=128)], str] = Field(
        default_factory=dict, max_length=15
    )


class Event(EventInput):
    """An appended event: immutable, ordered within its session by (timestamp, event_id)."""

    memory_id: MemoryId
    actor_id: ActorId
    event_id: Label
    created_at: UtcDatetime


class SessionSummary(Frozen):
    actor_id: ActorId
    session_id: SessionId
    created_at: UtcDatetime


# --- recall journal -------------------------------------------------------------------------


class SelectedEntry(Frozen):
    """One recalled record as the journal pins it: exact version and the digest it had."""

    record_id: RecordId
    version: int = Field(ge=1)
    content_digest: str
    score: float


class ShownHit(Frozen):
    """One line of a recall over records, turns and chunks as the journal pins it: a record by
    id, version and content digest; a turn (event id) or a chunk (chunk id) by its session and
    the sha256 of its text (both are immutable under their ids)."""

    kind: Annotated[str, Field(pattern=r"^(records|turns|chunks)$")]
    ref: Label
    session_id: SessionId | None = None
    version: int | None = Field(default=None, ge=1)
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    in_period: bool = False
    score: float


class JournalEntry(Frozen):
    """The record of one recall; replay re-materialises exactly ``selected``, never searches."""

    journal_id: Label
    memory_id: MemoryId
    actor_id: ActorId
    created_at: UtcDatetime
    query: str
    filters: dict[str, str] = Field(default_factory=dict)
    embedder: EmbedderId | None = None
    policy: dict[str, float | int | str | None] = Field(default_factory=dict)
    selected: tuple[SelectedEntry, ...] = ()
    block_digest: str
    # The block carried recall's fixed weak-matches line (replay renders it again).
    weak: bool = False
    # A recall over records, turns and chunks (``cairn.history.recall_both``): the kinds it
    # searched and every line it showed, in order (``selected`` holds its records too).
    channels: tuple[str, ...] = ()
    shown: tuple[ShownHit, ...] = ()
    # The scope's hash chain (``cairn.journal_chain``), set by the store when it files the
    # entry: its place in the scope (1, 2, ...; 0 for an entry filed before chains) and the
    # chain digest of the entry before it (``None`` for the first).
    sequence: int = Field(default=0, ge=0)
    previous: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)


T = TypeVar("T")


class Page(Frozen, Generic[T]):
    """One page of results; ``next_cursor`` is opaque and valid only for the same scope/query."""

    items: tuple[T, ...]
    next_cursor: str | None = None
