"""The ports: what the core needs from the outside world, as Protocols.

Every backend (``cairn.testing.InMemoryBackend``, ``cairn.store.sqlite.SQLiteBackend``, the AWS
adapters) implements these and passes ``tests/conformance`` unchanged. Every store call is pinned
to a ``Scope``; an id that lives in another scope is reported as not found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from cairn.changes import Change
from cairn.models import (
    EmbedderId,
    Event,
    EventInput,
    Frozen,
    JournalEntry,
    Page,
    RecordVersion,
    Scope,
    SessionSummary,
    VersionRef,
)

FloatMatrix = npt.NDArray[np.float32]

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


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
    ) -> tuple[RecordVersion, ...]:
        """Append the versions ``changes`` imply, all or nothing; return them in order.

        Every record in ``snapshot`` must still have exactly that head version, else
        ``SnapshotConflictError`` is raised and nothing is written.
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
        """Stored vectors of those versions made by ``embedder``; missing or foreign are absent."""
        ...

    def erase(self, scope: Scope, record_id: str) -> EraseReport:
        """Destroy the content of every version of the record and of every record derived
        from it, leaving tombstones with their digests."""
        ...

    def erase_scope(self, scope: Scope) -> EraseReport:
        """Destroy the content of every record in the scope, leaving tombstones."""
        ...


class EventStore(Protocol):
    def append(self, scope: Scope, event: EventInput) -> Event:
        """Store one immutable event and return it with its id."""
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


class JournalStore(Protocol):
    def put(self, entry: JournalEntry) -> None:
        """Store a journal entry; entries are immutable."""
        ...

    def get(self, scope: Scope, journal_id: str) -> JournalEntry: ...

    def erase_scope(self, scope: Scope) -> int:
        """Delete every journal entry of the scope (they hold queries); returns the count."""
        ...


class Closeable(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True)
class Stores:
    """The stores of one backend, opened together and closed together."""

    records: RecordStore
    events: EventStore
    journal: JournalStore
    owner: Closeable | None = None

    def close(self) -> None:
        if self.owner is not None:
            self.owner.close()
