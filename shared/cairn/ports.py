"""The ports: what the core needs from the outside world, as Protocols.

Every backend (``cairn.testing.InMemoryBackend``, ``cairn.store.sqlite.SQLiteBackend``, the AWS
adapters) implements these and passes ``tests/conformance`` unchanged. Every store call is pinned
to a ``Scope``; an id that lives in another scope is reported as not found.

Longer than 300 lines because every Protocol stays in this one module, as httpx and
LangGraph keep theirs: a backend author reads the whole contract in one place, and each method's
docstring is the normative sentence its conformance test pins.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from pydantic import Field

from cairn.changes import Change, Vector
from cairn.chunks import Chunk
from cairn.errors import InvalidInputError
from cairn.jobs import JobName, JobRun, JobSwitches
from cairn.links import Link, Salience
from cairn.memories import MemoryConfig
from cairn.model_request import ModelRequest, ModelResponse
from cairn.models import (
    ActorId,
    EdgeKind,
    EmbedderId,
    Event,
    EventInput,
    Frozen,
    JournalEntry,
    Label,
    Namespace,
    Page,
    RecordId,
    RecordVersion,
    Scope,
    SessionSummary,
    Status,
    UtcDatetime,
    VersionRef,
)
from cairn.quarantine import QuarantineEntry, SourceSelector
from cairn.rollout.index import (
    Appended,
    EventRef,
    Rollout,
    RolloutKind,
    RolloutState,
    SessionCounters,
    TriggerPolicy,
)
from cairn.rollout.payload import RolloutNotice

FloatMatrix = npt.NDArray[np.float32]
# One vector (a row of a FloatMatrix).
FloatVector = npt.NDArray[np.float32]

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
APPEND_KEY_KEPT_FOR = timedelta(hours=24)
"""How long a store remembers an append's idempotency key, at least (the API's token window)."""
MAX_APPEND_KEY = 128


# Events one ``RolloutStore.append_counted_batch`` takes: with a key and a claim each, a batch
# stays within one DynamoDB TransactWriteItems (100 actions).
MAX_APPEND_BATCH = 25


def check_append_batch(events: Sequence[object], keys: Sequence[str | None] | None) -> None:
    """Refuse a batch too long, keys not aligned with its events, or a key given twice."""
    if len(events) > MAX_APPEND_BATCH:
        raise InvalidInputError(
            f"a batch append takes at most {MAX_APPEND_BATCH} events, not {len(events)}; "
            "split it; nothing was stored"
        )
    if keys is None:
        return
    if len(keys) != len(events):
        raise InvalidInputError(
            f"a batch append of {len(events)} events was given {len(keys)} idempotency keys; "
            "give one (or None) per event; nothing was stored"
        )
    for key in keys:
        check_append_key(key)
    given = [key for key in keys if key is not None]
    if len(set(given)) != len(given):
        raise InvalidInputError(
            "a batch append names one idempotency key twice; each event needs its own; "
            "nothing was stored"
        )


def check_append_key(key: str | None) -> None:
    """Refuse an idempotency key that is empty or longer than ``MAX_APPEND_KEY`` characters."""
    if key is not None and not 0 < len(key) <= MAX_APPEND_KEY:
        raise InvalidInputError(
            f"an append's idempotency key must be 1-{MAX_APPEND_KEY} characters (a digest of "
            "the request's client token); nothing was stored"
        )


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


@runtime_checkable
class Embedder(Protocol):
    @property
    def identity(self) -> EmbedderId:
        """The model id and dimensions every vector from this embedder carries."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """One L2-normalised float32 row per text, shape ``(len(texts), identity.dims)``."""
        ...


class ModelProvider(Protocol):
    def complete(self, request: ModelRequest) -> ModelResponse:
        """One answer within the request's token and time bounds, with its usage.

        Raises ``ModelTimeoutError`` past ``timeout_seconds`` and ``ModelUnavailableError`` when
        throttled or unreachable (both retryable), ``ModelRejectedError`` when the provider
        refuses the request, ``InvalidModelOutputError`` when no answer text can be read.
        """
        ...


ChangeKind = Literal["created", "updated", "deleted", "erased", "re-embedded"]


class RecordChange(Frozen):
    """One committed record write, as a change feed delivers it: never content, only which
    version of which record changed and how (read the version to see it; an erased one reads
    as its tombstone).

    ``sequence`` increases strictly in commit order within the change's scope (memory and
    actor), never reused; a store that keeps one sequence for all its scopes
    (``StoreChangeFeed``) orders every change of the store by it. ``created``: a record's
    first version; ``updated``: a new live version (revised, folded in); ``deleted``: a
    version that leaves every live read (retracted, superseded); ``erased``: the record's
    content destroyed (one change per record, its head's version); ``re-embedded``: a vector
    of another embedder stored for the version named (``VectorWriter.add_vectors``: no new
    version, nothing else of the record changed; read its vectors to see it).
    """

    sequence: int = Field(ge=1)
    memory_id: str
    actor_id: ActorId
    record_id: RecordId
    version: int = Field(ge=1)
    kind: ChangeKind
    at: UtcDatetime

    @property
    def event_id(self) -> str:
        """The same for every delivery of this change, different for any other change: a
        version is written once and a record erased once, so a consumer that has seen this id
        has seen this change (at-least-once delivery, recognisable redelivery). A version may
        be re-embedded once per embedder, so a ``re-embedded`` change's id names its sequence
        too."""
        named = f"{self.memory_id}/{self.actor_id}/{self.record_id}/{self.version}/{self.kind}"
        return f"{named}/{self.sequence}" if self.kind == "re-embedded" else named


def change_kind(version: RecordVersion) -> ChangeKind:
    """How a written version changes its record (``RecordChange.kind``, erasure aside)."""
    if version.status in (Status.RETRACTED, Status.SUPERSEDED):
        return "deleted"
    return "created" if version.version == 1 else "updated"


@runtime_checkable
class RecordChangeFeed(Protocol):
    """Every committed record write of a scope, in commit order, from a cursor.

    A change is recorded in the transaction of the write it describes, so a change is listed
    if and only if its write committed; ``after`` is the last sequence a reader of the scope
    has seen.
    """

    def scope_changes(
        self, scope: Scope, after: int = 0, *, limit: int = 100
    ) -> tuple[RecordChange, ...]:
        """Up to ``limit`` (1-1000) changes of ``scope`` with a sequence above ``after``,
        oldest first."""
        ...

    def last_sequence(self, scope: Scope) -> int:
        """The sequence of ``scope``'s last committed change (0 before its first): a reader
        that takes it before reading the scope and then reads ``scope_changes`` after it
        misses no write that the read did not see."""
        ...


@runtime_checkable
class StoreChangeFeed(RecordChangeFeed, Protocol):
    """A change feed with one sequence for the whole store (SQLite, in memory): one cursor
    follows every scope (``cairn changes``). DynamoDB keeps a sequence per scope instead, so
    writers of different scopes never contend on one item (docs/dynamodb.md)."""

    def changes_after(
        self, sequence: int = 0, *, limit: int = 100, memory_id: str | None = None
    ) -> tuple[RecordChange, ...]:
        """Up to ``limit`` (1-1000) changes with a sequence above ``sequence``, oldest
        first, of one memory or all."""
        ...


class EraseReport(Frozen):
    """What an erase destroyed; tombstones keep ids and content digests for audit."""

    record_ids: tuple[str, ...] = ()
    versions: int = 0
    events: int = 0
    journal_entries: int = 0


class RecordStore(Protocol):
    def apply(
        self,
        scope: Scope,
        changes: Sequence[Change],
        *,
        snapshot: Mapping[str, int] | None = None,
        consume_rollouts: Sequence[str] = (),
        erasures: int | None = None,
        deletion_fence: bool = False,
    ) -> tuple[RecordVersion, ...]:
        """Append the versions ``changes`` imply, all or nothing; return them in order.

        Every record in ``snapshot`` must still have exactly that head version, else
        ``SnapshotConflictError`` is raised and nothing is written. The rollouts named by
        ``consume_rollouts`` (at most ``MAX_CONSUMED_ROLLOUTS``, of this scope's rollout index)
        move to ``consumed`` in the same transaction
        (``cairn.rollout.consumption.plan_consumption``): a rollout consumed already raises
        ``ConflictError`` and nothing is written. With ``erasures`` (what ``erasures(scope)``
        answered before the plan's inputs were read), an erase or retract committed since
        raises ``ErasedMeanwhileError`` and nothing is written, checked in the same
        transaction. An apply that retracts counts as an erasure itself. With
        ``deletion_fence``, nothing is written and ``MemoryDeletingError`` is raised once
        DeleteMemory has marked the scope's memory (``MemoryConfigStore.mark_deleting``),
        checked in the same transaction.
        """
        ...

    def actors(self, memory_id: str) -> tuple[str, ...]:
        """Every actor of ``memory_id`` holding a record, sorted: none is missed (erasing a
        memory relies on it); an actor whose records were each erased one by one may still be
        listed, one whose scope was erased is not."""
        ...

    def erasures(self, scope: Scope) -> int:
        """How many erases, erase_scopes and retracting applies have committed in ``scope``;
        never decreases, not even when the scope is erased (issue 17, class 7)."""
        ...

    def restore(
        self,
        scope: Scope,
        history: Sequence[RecordVersion],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> tuple[RecordVersion, ...]:
        """Write one record's ``history`` exactly as it was (an export's versions, oldest
        first), all or nothing, each vector of ``vectors`` (by content digest) beside the
        first version of its words; return the versions written.

        ``InvalidInputError`` (nothing written) unless ``cairn.restoring.check_history``
        passes; ``RecordTakenError`` (nothing written) if the scope holds the record id.
        """
        ...

    def get(self, scope: Scope, record_id: str) -> RecordVersion:
        """The record's head, whatever its status; ``RecordNotFoundError`` outside the scope."""
        ...

    def get_version(self, scope: Scope, record_id: str, version: int) -> RecordVersion:
        """Exactly that version (a tombstone if erased); ``RecordNotFoundError`` if absent."""
        ...

    def history(self, scope: Scope, record_id: str) -> tuple[RecordVersion, ...]:
        """Every version of the record, oldest first."""
        ...

    def list_records(
        self,
        scope: Scope,
        *,
        namespace_prefix: str | None = None,
        as_of: datetime | None = None,
        include_inactive: bool = False,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page[RecordVersion]:
        """Heads (or, with ``as_of``, the versions current at that time), ordered by record id.

        Erased records are never listed (their tombstones stay readable through ``history``).

        Only ``active`` ones unless ``include_inactive``. ``namespace_prefix`` matches on
        segment boundaries. ``cursor`` must come from the same scope and the same arguments.
        """
        ...

    def vectors(
        self, scope: Scope, refs: Sequence[VersionRef], embedder: EmbedderId
    ) -> dict[VersionRef, npt.NDArray[np.float32]]:
        """Stored vectors of those versions' words made by ``embedder`` (whichever embedder
        wrote the version: a re-embedded one has both); missing or foreign are absent."""
        ...

    def erase(self, scope: Scope, record_id: str) -> EraseReport:
        """Destroy the content of every version of the record and of every record derived
        from it, leaving tombstones with their digests."""
        ...

    def erase_scope(self, scope: Scope) -> EraseReport:
        """Destroy the content of every record in the scope, leaving tombstones."""
        ...


class EventStore(Protocol):
    def append(
        self,
        scope: Scope,
        event: EventInput,
        *,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Event:
        """Store one immutable event and return it with its id. Under an ``idempotency_key``
        the scope stored an event with (within ``APPEND_KEY_KEPT_FOR``), store nothing and
        return that event (``EventNotFoundError`` if it was deleted since): a caller that
        cannot tell whether its append landed appends again and never doubles it. With
        ``deletion_fence``, nothing is stored once DeleteMemory marked the memory
        (``MemoryDeletingError``, checked in the same transaction)."""
        ...

    def get_event(self, scope: Scope, session_id: str, event_id: str) -> Event: ...

    def list_events(
        self,
        scope: Scope,
        session_id: str,
        *,
        branch: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page[Event]:
        """The session's events in (timestamp, event id) order."""
        ...

    def list_sessions(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[SessionSummary]:
        """The actor's sessions that hold events, by session id."""
        ...

    def list_actors(
        self, memory_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[str]:
        """Actor ids with events in this memory, sorted."""
        ...

    def delete_event(self, scope: Scope, session_id: str, event_id: str) -> None: ...

    def erase_scope(self, scope: Scope) -> int:
        """Delete every event of the actor; returns how many were deleted."""
        ...


class ChainHead(Frozen):
    """The last link of a scope's journal chain: its sequence and chain digest."""

    sequence: int
    digest: str


class JournalStore(Protocol):
    def put(self, entry: JournalEntry) -> None:
        """File a journal entry as the next link of its scope's hash chain, in one transaction
        with the scope's head (``cairn.journal_chain.link``: the entry's own ``sequence`` and
        ``previous`` are replaced). Entries are immutable: a second put of an id already filed
        changes nothing."""
        ...

    def get(self, scope: Scope, journal_id: str) -> JournalEntry: ...

    def chain(self, scope: Scope, *, after: int = 0, limit: int = 100) -> tuple[JournalEntry, ...]:
        """The scope's chained entries with a sequence above ``after``, in sequence order, at
        most ``limit`` of them."""
        ...

    def head(self, scope: Scope) -> ChainHead | None:
        """The scope's chain head; ``None`` before the first chained entry."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Delete every journal entry of the scope (they hold queries) and its chain head;
        returns the count of entries."""
        ...


class StagingStore(Protocol):
    """Write-once blobs of staged rollout evidence, one per ``(scope, rollout_id)``.

    Object keys are derived from a digest of the scope and the validated rollout id
    (``cairn.rollout.staging_keys``), so they never carry user text. Every backend returns the
    same key for the same scope and rollout id.
    """

    def put(self, scope: Scope, rollout_id: str, payload: bytes) -> str:
        """Stage ``payload`` and return its key; the same bytes again are a no-op, different
        bytes under a staged id raise ``RolloutConflictError`` and change nothing."""
        ...

    def get(self, scope: Scope, rollout_id: str) -> bytes:
        """The staged bytes, exactly as put; ``RolloutNotFoundError`` if absent in this scope."""
        ...

    def delete(self, scope: Scope, rollout_id: str) -> None:
        """Remove the staged payload (a consumed rollout); deleting an absent one is a no-op."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Delete every payload staged in the scope; returns how many were deleted."""
        ...


class MemoryConfigStore(Protocol):
    """Memory resources (their configuration), one per ``memory_id``; names are unique."""

    def create(self, memory: MemoryConfig) -> None:
        """Store a new memory; ``MemoryNameTakenError`` if an existing memory has its name."""
        ...

    def get(self, memory_id: str) -> MemoryConfig:
        """The memory's configuration; ``MemoryNotFoundError`` if there is none."""
        ...

    def replace(self, memory: MemoryConfig, *, expected_revision: int) -> None:
        """Store ``memory`` over the stored one only if that still has ``expected_revision``,
        else ``ConflictError`` and nothing changes; ``MemoryNotFoundError`` if it is gone."""
        ...

    def delete(self, memory_id: str) -> None:
        """Forget the memory's configuration; ``MemoryNotFoundError`` if there is none."""
        ...

    def mark_deleting(self, memory_id: str) -> None:
        """Set the memory's deletion mark, for good (memory ids are never reused; marking
        twice is a no-op): from then on every write made with ``deletion_fence`` (the
        API's own record applies and placements) writes nothing in it, however early it
        began. DeleteMemory sets it before it erases anything."""
        ...

    def list_memories(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[MemoryConfig]:
        """Every memory, by memory id."""
        ...


class IdempotencyClaim(Frozen):
    """A client token's claim: the request's fingerprint and, once done, what it produced.

    ``key`` and ``fingerprint`` are digests (they never carry request content); ``outcome`` is
    ``None`` while the request is in progress.
    """

    key: Label
    fingerprint: Label
    outcome: dict[str, Any] | None = None
    expires_at: UtcDatetime


class IdempotencyStore(Protocol):
    """Claims on client tokens, so a retried write is answered, not repeated."""

    def claim(
        self,
        key: str,
        fingerprint: str,
        *,
        now: datetime,
        expires_at: datetime,
        durable: bool = True,
    ) -> IdempotencyClaim | None:
        """Claim ``key`` (in progress until ``expires_at``) and return ``None``; if an unexpired
        claim exists, change nothing and return it. An expired claim is replaced.
        ``durable=False``: the claim survives a crash of the process but may be lost to a
        power failure until the store's next durable write -- for a request whose own write
        is idempotent under a key, so a lost claim re-runs it harmlessly."""
        ...

    def complete(
        self,
        key: str,
        outcome: Mapping[str, Any],
        *,
        expires_at: datetime,
        durable: bool = True,
    ) -> None:
        """Record what the claimed request produced, kept until ``expires_at`` (``durable`` as
        in ``claim``)."""
        ...

    def release(self, key: str) -> None:
        """Drop the claim (its request failed), so the token can be used again; no-op if absent."""
        ...


class RecordPlacement(Frozen):
    """Which actor's scope holds a record of a memory, and under which namespace."""

    record_id: RecordId
    actor_id: ActorId
    namespace: Namespace


class RecordDirectory(Protocol):
    """Where each record of a memory lives, for callers that know a record id but no actor
    (AgentCore's record API), and which actors hold records under a namespace."""

    def place(
        self,
        memory_id: str,
        placements: Sequence[RecordPlacement],
        *,
        erasures: int | None = None,
        deletion_fence: bool = False,
    ) -> None:
        """Record where these records live; placing a record again overwrites its entry.

        ``erasures``: the erasure count (``RecordStore.erasures``) of the placements' one scope
        that the placer read before the reads its plan was built from; if an erasure of that
        scope has committed since, nothing is placed and ``ErasedMeanwhileError`` is raised,
        checked in the placement's own transaction (``cairn.erasure_fence``). Placements of
        several actors with ``erasures`` are an ``InvalidInputError``. ``deletion_fence``:
        nothing is placed once DeleteMemory marked the memory (``MemoryDeletingError``),
        checked in the same transaction."""
        ...

    def locate(self, memory_id: str, record_id: str) -> RecordPlacement:
        """Where the record lives; ``RecordNotFoundError`` if it was never placed here."""
        ...

    def actors(self, memory_id: str, *, namespace_prefix: str | None = None) -> tuple[str, ...]:
        """Actors, sorted, holding a placed record whose namespace lies under the prefix
        (segment boundaries, as ``namespace_matches``)."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Forget every placement in the scope; returns how many were forgotten."""
        ...


class RolloutStore(Protocol):
    """The rollout index: per-session trigger counters and the rollouts they release.

    Counting is atomic with the append: an acknowledged event is always counted, and a count
    trigger that fires claims exactly one rollout, however many writers append to the session
    at once. Rows move only through the planners of ``cairn.rollout.index``; no row holds message
    content. ``tests/conformance/test_rollouts*.py`` pins the contract.
    """

    def append_counted(
        self,
        scope: Scope,
        event: EventInput,
        *,
        policy: TriggerPolicy | None,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Appended:
        """Append ``event`` (as ``EventStore.append``, ``deletion_fence`` too) and, in the same
        transaction, count it
        toward its session's triggers (``count_append``); a fired trigger's rollout is claimed
        and returned. With no ``policy`` the event is appended and not counted. A repeat under
        an ``idempotency_key`` returns the stored event, counts nothing and claims nothing."""
        ...

    def append_counted_batch(
        self,
        scope: Scope,
        events: Sequence[EventInput],
        *,
        policy: TriggerPolicy | None,
        idempotency_keys: Sequence[str | None] | None = None,
    ) -> tuple[Appended, ...]:
        """``append_counted`` of each of ``events`` in order (each under its key in
        ``idempotency_keys``, aligned with ``events``), all in one transaction: every event is
        appended and counted or none is; the counters and claims are exactly those of the
        appends one by one. At most ``MAX_APPEND_BATCH`` events with distinct keys, else
        ``InvalidInputError`` and nothing stored. A repeated key returns its stored event and
        counts nothing, so a retried batch stores only what did not land."""
        ...

    def events_for(
        self, scope: Scope, session_id: str, refs: Sequence[EventRef]
    ) -> tuple[Event, ...]:
        """The session's events named by ``refs``, in the order given; deleted ones are absent."""
        ...

    def counters(self, scope: Scope, session_id: str) -> SessionCounters | None:
        """The session's trigger counters; ``None`` if nothing was ever counted in it."""
        ...

    def get(self, scope: Scope, rollout_id: str) -> Rollout:
        """The rollout, whatever its state; ``RolloutNotFoundError`` outside the scope."""
        ...

    def list_pending(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, kind: RolloutKind | None = None
    ) -> tuple[Rollout, ...]:
        """The scope's rollouts not yet consumed (failed ones included), by rollout id: oldest
        claim first within a kind (``kind``: only those)."""
        ...

    def add_staged(self, scope: Scope, rollout: Rollout) -> Rollout:
        """Store ``rollout`` (an evidence rollout, already ``staged``) and return it; if its id
        is stored already, change nothing and return the stored one (a restage)."""
        ...

    def mark(
        self,
        scope: Scope,
        rollout_id: str,
        state: RolloutState,
        *,
        now: datetime,
        staging_key: str | None = None,
        reason: str | None = None,
    ) -> Rollout:
        """Move the rollout to ``state`` as ``cairn.rollout.index.advance`` plans, conditional on
        the state it was read in, and return it; a step it is past already changes nothing."""
        ...

    def claim_idle(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        """Claim a rollout for each session (any scope) idle past its timeout at ``now`` with
        messages pending (``claim_idle_session``); at most ``limit`` sessions a call."""
        ...

    def claim_session(self, scope: Scope, session_id: str, now: datetime) -> Rollout | None:
        """Claim a rollout for the session's messages pending at ``now``, whatever its triggers
        (its agent closed it: ``claim_closed_session``); ``None`` if nothing is pending."""
        ...

    def list_due(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        """Rollouts (any scope) whose ``cairn.rollout.index.due_at`` has passed at ``now``: stalled
        before announcement, or announced and never consumed. Oldest due first."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Forget the scope's counters and rollouts (events and payloads are erased by their
        own stores); returns how many rows were forgotten."""
        ...

    def next_due(self) -> datetime | None:
        """The earliest time (any scope) the sweep has something to do: an idle deadline of a
        session with messages pending, or a rollout's ``due_at``; ``None`` when nothing waits.
        It may be in the past (work the last pass left over)."""
        ...


class Notifier(Protocol):
    """Tells extractors that a rollout is staged (an SNS FIFO topic, or an in-process queue).

    The caller (the rollout pipeline, the evidence stager, the sweep) builds the notice; a
    notifier only delivers it."""

    def announce(self, notice: RolloutNotice) -> None:
        """Publish ``notice``; announcing the same rollout again within the deduplication
        window delivers it once. Raises a retryable error if not published."""
        ...


class SweepTimer(Protocol):
    """Wakes the sweep when something falls due, so an idle deployment runs no sweep at all
    (an EventBridge Scheduler one-time schedule on AWS; nothing embedded, whose worker sweeps
    on its own timer)."""

    def arm(self, at: datetime) -> None:
        """Make a sweep run at ``at`` or within a minute after it (at the next minute when
        ``at`` has passed); arming a minute already armed changes nothing. Raises a retryable
        ``CairnError`` when the timer could not be armed."""
        ...


class ChunkStore(Protocol):
    """The history pyramid of each session: immutable chunks (``cairn.chunks``), by level.

    Every backend refuses, through ``cairn.chunks.check_extends`` and ``check_children``, a
    chunk that would leave a gap or an overlap in its level or whose children are not the level
    below over its span. ``tests/conformance/test_chunks.py`` pins the contract.
    """

    def put(self, scope: Scope, chunk: Chunk) -> Chunk:
        """Store ``chunk`` and return it. The same chunk again (a retry) changes nothing and
        returns the stored one; one that does not extend its level, or another chunk under a
        stored id, raises ``ChunkConflictError`` and changes nothing. A chunk of another scope
        is ``InvalidInputError``."""
        ...

    def get_chunk(self, scope: Scope, session_id: str, chunk_id: str) -> Chunk:
        """The chunk; ``ChunkNotFoundError`` outside this scope and session."""
        ...

    def list_chunks(
        self, scope: Scope, session_id: str, *, level: int | None = None
    ) -> tuple[Chunk, ...]:
        """The session's chunks (only ``level``'s, if given) by (level, from_seq)."""
        ...

    def chunk_sessions(self, scope: Scope) -> tuple[str, ...]:
        """The actor's sessions that hold chunks, sorted."""
        ...

    def forget_turn(self, scope: Scope, session_id: str, event_id: str) -> int:
        """Delete the chunks that summarise the turn and every later chunk of each level
        (``cairn.chunks.summarising``), so no summary outlives a deleted turn and every level
        stays contiguous; returns how many were deleted. Every backend's
        ``EventStore.delete_event`` does this too."""
        ...

    def erase_session(self, scope: Scope, session_id: str) -> int:
        """Delete every chunk of the session; returns how many were deleted."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Delete every chunk of the actor, in every session; returns how many were deleted."""
        ...


class JobLog(Protocol):
    """Background jobs' switches per memory, and their run log (``cairn.jobs``).

    ``tests/conformance/test_job_log.py`` pins the contract."""

    def switches(self, memory_id: str) -> JobSwitches:
        """The memory's switches; a memory never switched has none set (every job default)."""
        ...

    def set_switches(self, switches: JobSwitches) -> None:
        """Store the memory's switches, replacing what was stored."""
        ...

    def record_run(self, run: JobRun) -> None:
        """Append a run to the log; the same run id again replaces it (a retried record)."""
        ...

    def runs(self, memory_id: str, job: JobName, *, limit: int = 10) -> tuple[JobRun, ...]:
        """The job's runs over the memory, newest first, at most ``limit`` (1 to 100)."""
        ...

    def marker(self, scope: Scope, job: JobName, key: str = "") -> str | None:
        """What ``job`` last noted under ``key`` for ``scope`` (a cursor, the generation it
        finished at, a digest of what it last saw; never content); ``None`` if nothing."""
        ...

    def set_marker(self, scope: Scope, job: JobName, value: str, key: str = "") -> None:
        """Note ``value`` under ``key``, replacing what was noted (``cairn.jobs.check_marker``:
        ``InvalidInputError`` for a key or value too long, and nothing noted)."""
        ...

    def erase_markers(self, scope: Scope) -> int:
        """Forget every marker of ``scope`` (the actor's erasure); returns how many went."""


class QuarantineList(Protocol):
    """The sources an operator marked compromised, per memory (``cairn.quarantine``).

    ``tests/conformance/test_quarantine.py`` pins the contract."""

    def add(self, entry: QuarantineEntry) -> bool:
        """Put ``entry`` on its memory's list; ``False`` (and nothing changed, the first entry's
        reason and time kept) when that selector is on it already."""
        ...

    def remove(self, memory_id: str, selector: SourceSelector) -> bool:
        """Take ``selector`` off the memory's list; ``False`` when it was not on it."""
        ...

    def entries(self, memory_id: str) -> tuple[QuarantineEntry, ...]:
        """The memory's list, oldest first (then by selector); empty for a memory with none."""
        ...


class LinkStore(Protocol):
    """Typed links between two records of one scope, kept beside the records (``cairn.links``).

    ``tests/conformance/test_links.py`` pins the contract."""

    def put(self, scope: Scope, link: Link) -> Link:
        """Store the link unless (scope, from, kind, to) is stored already; returns the stored
        one (the first, unchanged). ``InvalidInputError`` for a kind outside ``LINK_KINDS``, a
        link of another scope or onto itself; ``RecordNotFoundError`` unless both ends are
        live (not erased) records of ``scope``. A refused link changes nothing."""
        ...

    def links_of(self, scope: Scope, record_id: str) -> tuple[Link, ...]:
        """Every link from or to the record, by (from, kind, to), at most ``MAX_LINKS_LISTED``."""
        ...

    def every_link(self, scope: Scope) -> Iterator[Link]:
        """Every link of the scope, each once, by (from, kind, to), however many (an export)."""
        ...

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        """Delete every link from or to one of ``record_ids``; returns how many went."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Delete every link of the scope; returns how many went."""
        ...


class AccessCounts(Protocol):
    """How many recalls showed each record of a scope, counted from the recall journal up to a
    cursor (a journal chain sequence) committed with the counts (``cairn.history.access``)."""

    def cursor(self, scope: Scope) -> int:
        """The journal sequence counted up to; 0 before the first count."""
        ...

    def counts(self, scope: Scope) -> dict[str, int]:
        """Every counted record of the scope and its count (records never shown are absent)."""
        ...

    def add(self, scope: Scope, counts: Mapping[str, int], *, after: int, upto: int) -> None:
        """Add ``counts`` and move the cursor from ``after`` to ``upto``, in one transaction;
        ``CountedMeanwhileError`` (nothing added) when the cursor is not ``after``, so a rerun
        never counts an entry twice. At most ``MAX_COUNTS_PER_ADD`` records."""
        ...

    def raise_counts(self, scope: Scope, counts: Mapping[str, int]) -> int:
        """Raise each record's count to at least the given one (an import restoring counts):
        never lowered, never added to, so a second call changes nothing; the cursor stays.
        At most ``MAX_COUNTS_PER_ADD`` records, each at least 1; returns how many rose."""
        ...

    def salience(self, scope: Scope) -> dict[str, Salience]:
        """Every measured record of the scope and its salience (``cairn.history.decay``)."""
        ...

    def put_salience(self, scope: Scope, values: Sequence[Salience]) -> None:
        """Store each record's salience, replacing its last; at most ``MAX_COUNTS_PER_ADD``
        records, each once."""
        ...

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        """Forget the counts and salience of ``record_ids`` (the cursor stays); returns how
        many counts went."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Forget every count, salience and the cursor of the scope; returns how many counts
        went."""
        ...


class RecordGenerations(Protocol):
    """How a derived index of records knows it is stale: generations the store keeps itself."""

    def epoch(self) -> Hashable:
        """A value that changes whenever a record write may have committed in any scope (by
        this process or another); cheap enough to read on every recall."""
        ...

    def generation(self, scope: Scope) -> Hashable:
        """A value that changes with every committed record write in ``scope`` (apply, erase,
        erase_scope), whichever process made it."""
        ...


class HistoryGenerations(Protocol):
    """How a derived index of turns and chunks knows it is stale (``cairn.history.search``)."""

    def generation(self, scope: Scope) -> Hashable:
        """A value that changes with every committed event append or deletion and every chunk
        written or deleted in ``scope`` (erasures included), whichever process made it."""
        ...


Thread = tuple[str, str]
"""A thread a record belongs to: ("session", session id) or (edge kind, edge target)."""

THREAD_EDGES = frozenset({EdgeKind.PART_OF.value, EdgeKind.DISCUSSED_IN.value})
"""The edge kinds that make a thread (``cairn.recall.expansion``), by their stored value."""


def stored_threads(sources: list[dict[str, Any]], edges: list[dict[str, Any]]) -> frozenset[Thread]:
    """``cairn.recall.expansion.threads`` of a stored row's sources and edges (their JSON):
    none for a record distilled by extraction (a source cites a rollout)."""
    if any(source.get("rollout_id") for source in sources):
        return frozenset()
    found: list[Thread] = []
    for source in sources:
        session = source.get("session_id")
        if session:
            found.append(("session", session))
    for edge in edges:
        if edge["kind"] in THREAD_EDGES:
            found.append((edge["kind"], edge["target"]))
    return frozenset(found)


RowLoader = Callable[[], RecordVersion]
# How far a long build has come, for a caller that shows it (the CLI's bar on a terminal):
# called with (steps done, steps in all) as the work goes, at least every ``PROGRESS_EVERY``
# steps, and last with the two equal. Counts only, never content.
BuildProgress = Callable[[int, int], None]
PROGRESS_EVERY = 1_000
"""Parses one row's version when a recall needs it (the store's own JSON, not re-checked)."""


@dataclass(frozen=True, slots=True)
class IndexRow:
    """One live head as a recall index is built from it (``cairn.recall.index.snapshot``)."""

    record_id: str
    namespace: str
    strategy: str
    searchable: str
    content: str
    confidence: float
    first_seen_at: datetime
    last_seen_at: datetime
    threads: frozenset[Thread]
    trusted: bool
    load: RowLoader
    vector: npt.NDArray[np.float32] | None = None
    # The version's JSON as the store holds it, when the store hands it over (a recall index
    # object keeps it, so a row is parsed only when shown); ``load`` parses the same version.
    data: str | None = None


@runtime_checkable
class VectorWriter(Protocol):
    """A record store that takes more vectors for versions it holds (an optional capability of
    a RecordStore): vectors are derived data, so re-embedding a store with another embedder
    writes no version and changes no content, trust or history (``cairn reindex``)."""

    def add_vectors(self, scope: Scope, vectors: Sequence[tuple[VersionRef, Vector]]) -> int:
        """Store each vector for the words of the version it names, under its embedder, in one
        transaction, and return how many were stored. A ref that is not a record's active head,
        or whose words already have a vector of that embedder, is skipped (a rerun stores
        nothing twice). Moves the scope's record generation when anything was stored, so every
        recall index built before sees it, and puts one ``re-embedded`` change per vector stored
        in the record change feed in the same transaction (none when nothing was stored), so a
        follower of the feed re-reads that head. The vector is promised for the version it names; a
        later version with other words never has it, one keeping the words may (SQLite and the
        memory store key vectors by words) or may not (DynamoDB keeps it on the head item),
        and is then re-embedded like any head without one."""
        ...


@runtime_checkable
class IndexRowReader(Protocol):
    """A record store that hands a recall index its live heads in one ordered read, without
    parsing or re-checking rows it wrote itself (an optional capability of a RecordStore)."""

    def index_rows(
        self, scope: Scope, embedder: EmbedderId | None, progress: BuildProgress | None = None
    ) -> list[IndexRow]:
        """Every active head of ``scope`` in record-id order, each with its stored vector made
        by ``embedder`` (if any): ``searchable`` is the content, keywords, entities and tags
        joined by spaces, ``threads`` its source sessions and part_of/discussed_in targets
        (``cairn.recall.expansion.threads``: none for a record distilled from a rollout).
        ``progress`` hears (rows read, rows in all); a reader that cannot count ahead calls it
        once, at the end."""
        ...


@runtime_checkable
class IndexRowStream(Protocol):
    """A record store that hands a recall index its live heads one row at a time (an optional
    capability of a RecordStore, beside ``IndexRowReader``)."""

    def index_row_stream(
        self, scope: Scope, embedder: EmbedderId | None
    ) -> AbstractContextManager[tuple[int, Iterator[IndexRow]]]:
        """``index_rows``' rows as (how many, an iterator over them), valid inside the block."""
        ...


@runtime_checkable
class HeadRowReader(Protocol):
    """A record store that hands a recall index the rows of named records only (an optional
    capability beside ``IndexRowReader``): what a deployed index object needs to catch up
    with the change feed instead of reading the whole scope."""

    def index_rows_of(
        self, scope: Scope, embedder: EmbedderId | None, record_ids: Sequence[str]
    ) -> dict[str, IndexRow]:
        """The rows ``index_rows`` would give for those of ``record_ids`` whose head is active
        now, read strongly consistent, by record id; the others (retracted, superseded,
        erased, never written) are absent."""
        ...


@dataclass(frozen=True, slots=True)
class IndexObject:
    """A stored recall index object as read: its bytes (``None`` when it is still at the ETag
    the caller held: nothing was downloaded) and its ETag."""

    body: bytes | None
    etag: str


class IndexObjectStore(Protocol):
    """Where a deployed recall index keeps one object per (scope, embedding space): derived,
    rebuildable bytes, never the truth (``cairn.recall.index.objects``). ``space`` is an
    embedder key, or ``"-"`` for rows without vectors; keys never carry ids in the clear."""

    def read(
        self, scope: Scope, space: str, *, if_none_match: str | None = None
    ) -> IndexObject | None:
        """The object, or ``None`` if there is none; with ``if_none_match`` an object still at
        that ETag comes back without its body."""
        ...

    def write(self, scope: Scope, space: str, body: bytes) -> str:
        """Store ``body`` as the object, replacing any; returns its ETag."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Delete every object of ``scope`` (every space); returns how many were deleted."""
        ...


class IndexSnapshotFolder(Protocol):
    """Where an embedded recall index keeps one snapshot file per (scope, embedding space)
    beside its store (``cairn.recall.index.persisted``): derived, rebuildable, never the truth,
    and holding the content and vectors of every head, so an erase destroys it. ``space`` is an
    embedder key, or ``"-"`` for rows without vectors; file names never carry ids in the clear.
    """

    def path(self, scope: Scope, space: str) -> Path:
        """Where the scope's snapshot file is (it may not exist)."""
        ...

    def publish(self, scope: Scope, space: str, parts: Sequence[bytes | memoryview]) -> int | None:
        """Write ``parts`` as the snapshot file: to a temporary file, fsynced, renamed over
        the old one. Returns the new file's inode, or ``None`` when nothing could be written
        (a read-only store, a full disk): recall then answers without a persisted snapshot."""
        ...

    def discard(self, scope: Scope, space: str, inode: int) -> None:
        """Destroy the scope's file if it is still the one published as ``inode`` (a writer
        that raced an erase deletes its own file)."""
        ...

    def erase_scope(self, scope: Scope) -> int:
        """Overwrite and delete every snapshot file of ``scope`` (every space, and any
        temporary file a writer left); returns how many files were destroyed."""
        ...

    def erase_records(self, scope: Scope, record_ids: Collection[str]) -> int:
        """Leave no content of ``record_ids`` in the scope's files: each is written again
        without their rows by the compactor (``use_compactor``) and the old one overwritten,
        or, without a compactor or when that fails, destroyed as ``erase_scope`` does; returns
        how many files were rewritten or destroyed."""
        ...

    def use_compactor(self, compactor: SnapshotCompactor) -> None:
        """What ``erase_records`` writes a file again with (the recall index's file format)."""
        ...


# A snapshot file written again without some records' rows: its new bytes, ``True`` when it
# holds none of them, ``False`` when it cannot be read whole (``cairn.recall.index.compact``).
SnapshotCompactor = Callable[[Path, Collection[str]], Sequence[bytes | memoryview] | bool]


class Closeable(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True)
class Stores:
    """The stores of one backend, opened together and closed together."""

    records: RecordStore
    events: EventStore
    journal: JournalStore
    owner: Closeable | None = None
    # Optional capabilities (the AgentCore API needs them); a backend without them leaves None.
    memories: MemoryConfigStore | None = None
    idempotency: IdempotencyStore | None = None
    directory: RecordDirectory | None = None
    # Optional capability: the extraction pipeline's rollout index (cairn.rollout.index).
    rollouts: RolloutStore | None = None
    # Optional capability: the history pyramid (cairn.history); erasure reaches it.
    chunks: ChunkStore | None = None
    # Optional capability: background jobs' switches and run log (cairn.jobs).
    jobs: JobLog | None = None
    # Optional capability: the operator's quarantine list (cairn.quarantine); every shipped
    # backend keeps one, and reads relabel what it covers.
    quarantine: QuarantineList | None = None
    # Optional capability: record generations, so recall can keep an index of each scope in
    # process (cairn.recall.index); without them each recall builds its index afresh.
    generations: RecordGenerations | None = None
    # Optional capability: generations of the scope's turns and chunks, so recall over
    # history can keep what it listed while nothing changed (``cairn.history.search``).
    history_generations: HistoryGenerations | None = None
    # Optional capability: the record change feed (``cairn changes --follow``).
    changes: RecordChangeFeed | None = None
    # Optional capability: a shared store of recall index objects (one per scope and embedding
    # space), so a process that starts cold fetches a scope's index instead of reading every
    # record; only with ``generations``, which say whether an object is current.
    index_objects: IndexObjectStore | None = None
    # Optional capability: a folder of persisted recall index snapshots beside the store, so a
    # fresh process maps a scope's index from disk instead of rebuilding it (SQLite).
    index_snapshots: IndexSnapshotFolder | None = None
    # Optional capability: links between records, beside them (cairn.links); erasure reaches
    # them, and ``neighbors`` walks them.
    links: LinkStore | None = None
    # Optional capability: access counts from the recall journal (cairn.history.access).
    access: AccessCounts | None = None

    def close(self) -> None:
        if self.owner is not None:
            self.owner.close()
