"""The reference backend: every port in process memory, guarded by one lock.

It is the executable reading of the contract: the conformance suite runs against it first, and
every other backend must behave exactly like it. It is also the test fake (``cairn.testing``).
Nothing survives the process.

Longer than 300 lines because the reference backend is meant to be read whole: it is the
executable reading of every port the conformance suite pins, with nothing but dictionaries under it.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.changes import Change, Vector
from cairn.clock import SystemClock
from cairn.erasure_fence import check_fence, erases
from cairn.errors import (
    EventNotFoundError,
    InvalidInputError,
    JournalNotFoundError,
    RecordNotFoundError,
    RecordTakenError,
)
from cairn.ids import new_event_id
from cairn.journal_chain import link
from cairn.models import (
    EmbedderId,
    Event,
    EventInput,
    JournalEntry,
    Page,
    RecordVersion,
    Scope,
    SessionSummary,
    Status,
    VersionRef,
    namespace_matches,
)
from cairn.paging import check_limit, event_sort_key, page_after
from cairn.ports import (
    DEFAULT_PAGE_SIZE,
    ChainHead,
    Clock,
    EraseReport,
    Stores,
    check_append_key,
)
from cairn.restoring import plan_restore
from cairn.rollout.consumption import plan_consumption
from cairn.store.memory.api_state import (
    ApiState,
    InMemoryIdempotencyStore,
    InMemoryMemoryConfigStore,
    InMemoryRecordDirectory,
)
from cairn.store.memory.append_keys import AppendKeys
from cairn.store.memory.changes import InMemoryChangeFeed
from cairn.store.memory.chunks import InMemoryChunkStore, InMemoryHistoryGenerations, chunk_rows
from cairn.store.memory.jobs import InMemoryJobLog
from cairn.store.memory.links import InMemoryAccessCounts, InMemoryLinkStore
from cairn.store.memory.quarantine import InMemoryQuarantineList
from cairn.store.memory.rollouts import InMemoryRolloutStore, RolloutRows
from cairn.versioning import lineage, plan_writes, tombstone, touched_ids

VectorKey = tuple[str, str, str]  # (record_id, content_digest, embedder key)


class InMemoryBackend:
    """Records, events and journal for any number of scopes, in memory."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.lock = threading.RLock()
        self.versions: dict[Scope, dict[str, list[RecordVersion]]] = defaultdict(dict)
        self.vectors: dict[Scope, dict[VectorKey, npt.NDArray[np.float32]]] = defaultdict(dict)
        self.events: dict[Scope, dict[str, dict[str, Event]]] = defaultdict(dict)
        self.append_keys = AppendKeys(self.events, self.clock)
        self.journal: dict[Scope, dict[str, JournalEntry]] = defaultdict(dict)
        self.journal_heads: dict[Scope, ChainHead] = {}
        self.api_state = ApiState(lock=self.lock)
        self.rollout_rows = RolloutRows()
        self.chunk_rows = chunk_rows()
        self.history_generations = InMemoryHistoryGenerations(self.lock)
        self.chunk_store = InMemoryChunkStore(self.lock, self.chunk_rows, self.history_generations)
        self.job_log = InMemoryJobLog(self.lock)
        self.quarantine = InMemoryQuarantineList(self.lock)
        self.link_store = InMemoryLinkStore(self.lock, self._head_status)
        self.access_counts = InMemoryAccessCounts(self.lock)
        self.record_generations: dict[Scope, int] = defaultdict(int)
        self.record_epoch = 0
        self.change_log = InMemoryChangeFeed(self.lock)
        self.record_erasures: dict[Scope, int] = defaultdict(int)
        self._generations = InMemoryRecordGenerations(self)
        # One record store for every ``stores()`` bundle, so they share one recall index.
        self._records = InMemoryRecordStore(self)

    def generations(self) -> InMemoryRecordGenerations:
        """The record generations a recall index checks (``cairn.ports.RecordGenerations``)."""
        return self._generations

    def bump_generation(self, scope: Scope) -> None:
        """Count one committed record write in ``scope`` (the caller holds the lock)."""
        self.record_generations[scope] += 1
        self.record_epoch += 1

    def stores(self) -> Stores:
        return Stores(
            records=self._records,
            events=InMemoryEventStore(self),
            journal=InMemoryJournalStore(self),
            owner=self,
            memories=InMemoryMemoryConfigStore(self.api_state),
            idempotency=InMemoryIdempotencyStore(self.api_state),
            directory=InMemoryRecordDirectory(self.api_state, erasures=self.record_erasures),
            rollouts=InMemoryRolloutStore(
                self.lock,
                InMemoryEventStore(self),
                self.events,
                self.rollout_rows,
                keys=self.append_keys,
            ),
            chunks=self.chunk_store,
            jobs=self.job_log,
            quarantine=self.quarantine,
            generations=self._generations,
            history_generations=self.history_generations,
            changes=self.change_log,
            links=self.link_store,
            access=self.access_counts,
        )

    def _head_status(self, scope: Scope, record_id: str) -> Status | None:
        versions = self.versions.get(scope, {}).get(record_id)
        return versions[-1].status if versions else None

    def close(self) -> None:
        """Nothing to release; present so every backend closes the same way."""


class InMemoryRecordGenerations:
    """Write counters of the backend's records: one per scope, one for all scopes."""

    def __init__(self, backend: InMemoryBackend) -> None:
        self._b = backend

    def epoch(self) -> int:
        with self._b.lock:
            return self._b.record_epoch

    def generation(self, scope: Scope) -> int:
        with self._b.lock:
            return self._b.record_generations[scope]


class InMemoryRecordStore:
    def __init__(self, backend: InMemoryBackend) -> None:
        self._b = backend

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
        with self._b.lock:
            check_fence(erasures, self._b.record_erasures[scope])
            if deletion_fence:
                self._b.api_state.check_not_deleting(scope.memory_id)
            records = self._b.versions[scope]
            wanted = set(touched_ids(changes)) | set(snapshot or {})
            heads = {rid: records[rid][-1] for rid in wanted if rid in records}
            now = self._b.clock.now()
            writes = plan_writes(scope, changes, heads, now, snapshot)
            rollouts = self._b.rollout_rows.rollouts.setdefault(scope, {})
            consumed = plan_consumption(rollouts, consume_rollouts, now)
            for rollout in consumed:
                rollouts[rollout.rollout_id] = rollout
            for write in writes:  # plan_writes raised already if anything was wrong
                version = write.version
                records.setdefault(version.record_id, []).append(version)
                if write.vector is not None:
                    key = (version.record_id, version.content_digest, write.vector.embedder.key)
                    values = np.asarray(write.vector.values, dtype=np.float32)
                    self._b.vectors[scope][key] = values
            if writes:  # a rollout consumed alone is no record write: the generation stays
                self._b.bump_generation(scope)
            self._b.change_log.record_writes(scope, [w.version for w in writes], now)
            if erases(changes):
                self._b.record_erasures[scope] += 1
            return tuple(w.version for w in writes)

    def actors(self, memory_id: str) -> tuple[str, ...]:
        with self._b.lock:
            return tuple(
                sorted(
                    scope.actor_id
                    for scope, records in self._b.versions.items()
                    if scope.memory_id == memory_id
                    and any(chain[-1].status is not Status.ERASED for chain in records.values())
                )
            )

    def erasures(self, scope: Scope) -> int:
        with self._b.lock:
            return self._b.record_erasures[scope]

    def restore(
        self,
        scope: Scope,
        history: Sequence[RecordVersion],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> tuple[RecordVersion, ...]:
        writes = plan_restore(scope, history, vectors or {})
        with self._b.lock:
            records = self._b.versions[scope]
            if history[0].record_id in records:
                raise RecordTakenError(history[0].record_id)
            records[history[0].record_id] = [write.version for write in writes]
            for write in writes:
                if write.vector is not None:
                    version = write.version
                    key = (version.record_id, version.content_digest, write.vector.embedder.key)
                    values = np.asarray(write.vector.values, dtype=np.float32)
                    self._b.vectors[scope][key] = values
            self._b.bump_generation(scope)
            head, now = history[-1], self._b.clock.now()
            if head.status is Status.ERASED:  # the feed tells an erasure as erase does
                self._b.change_log.record_erased(scope, [(head.record_id, head.version)], now)
            else:
                self._b.change_log.record_writes(scope, [w.version for w in writes], now)
        return tuple(write.version for write in writes)

    def _versions(self, scope: Scope, record_id: str) -> list[RecordVersion]:
        found = self._b.versions.get(scope, {}).get(record_id)
        if not found:
            raise RecordNotFoundError(record_id)
        return found

    def get(self, scope: Scope, record_id: str) -> RecordVersion:
        with self._b.lock:
            return self._versions(scope, record_id)[-1]

    def get_version(self, scope: Scope, record_id: str, version: int) -> RecordVersion:
        with self._b.lock:
            versions = self._versions(scope, record_id)
            if not 1 <= version <= len(versions):
                raise RecordNotFoundError(record_id, version)
            return versions[version - 1]

    def history(self, scope: Scope, record_id: str) -> tuple[RecordVersion, ...]:
        with self._b.lock:
            return tuple(self._versions(scope, record_id))

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
        check_limit(limit)
        if as_of is not None and as_of.tzinfo is None:
            raise InvalidInputError("as_of must be timezone-aware (UTC); attach a tzinfo")
        query = {"ns": namespace_prefix, "as_of": as_of, "inactive": include_inactive}
        with self._b.lock:
            current: list[RecordVersion] = []
            for rid in sorted(self._b.versions.get(scope, {})):
                version = _current(self._b.versions[scope][rid], as_of)
                if version is None or version.status is Status.ERASED:
                    continue  # tombstones are for history and audit, never for listings
                if not (include_inactive or version.live):
                    continue
                if namespace_prefix and not namespace_matches(version.namespace, namespace_prefix):
                    continue
                current.append(version)
        return page_after(
            str(scope), query, current, key=lambda v: v.record_id, limit=limit, cursor=cursor
        )

    def vectors(
        self, scope: Scope, refs: Sequence[VersionRef], embedder: EmbedderId
    ) -> dict[VersionRef, npt.NDArray[np.float32]]:
        found: dict[VersionRef, npt.NDArray[np.float32]] = {}
        with self._b.lock:
            stored = self._b.vectors.get(scope, {})
            for ref in refs:
                versions = self._b.versions.get(scope, {}).get(ref.record_id, [])
                if not 1 <= ref.version <= len(versions):
                    continue
                version = versions[ref.version - 1]
                vector = stored.get((ref.record_id, version.content_digest, embedder.key))
                if vector is not None:
                    found[ref] = vector.copy()
        return found

    def add_vectors(self, scope: Scope, vectors: Sequence[tuple[VersionRef, Vector]]) -> int:
        stored: list[VersionRef] = []
        with self._b.lock:
            held = self._b.vectors[scope]
            for ref, vector in vectors:
                versions = self._b.versions.get(scope, {}).get(ref.record_id, [])
                head = versions[-1] if versions else None
                if head is None or head.version != ref.version or head.status is not Status.ACTIVE:
                    continue
                key = (ref.record_id, head.content_digest, vector.embedder.key)
                if key not in held:
                    held[key] = np.asarray(vector.values, dtype=np.float32)
                    stored.append(ref)
            if stored:
                self._b.bump_generation(scope)
                self._b.change_log.record_reembedded(scope, stored, self._b.clock.now())
        return len(stored)

    def erase(self, scope: Scope, record_id: str) -> EraseReport:
        with self._b.lock:
            records = self._b.versions.get(scope, {})
            if record_id not in records:
                raise RecordNotFoundError(record_id)
            return self._erase(scope, lineage(record_id, records))

    def erase_scope(self, scope: Scope) -> EraseReport:
        with self._b.lock:
            return self._erase(scope, sorted(self._b.versions.get(scope, {})))

    def _erase(self, scope: Scope, record_ids: list[str]) -> EraseReport:
        records = self._b.versions[scope]
        self._b.bump_generation(scope)
        heads = [(rid, records[rid][-1].version) for rid in record_ids]
        self._b.change_log.record_erased(scope, heads, self._b.clock.now())
        self._b.record_erasures[scope] += 1
        count = 0
        for rid in record_ids:
            records[rid] = [tombstone(v) for v in records[rid]]
            count += len(records[rid])
        vectors = self._b.vectors.get(scope, {})
        for key in [k for k in vectors if k[0] in set(record_ids)]:
            del vectors[key]
        return EraseReport(record_ids=tuple(record_ids), versions=count)


def _current(versions: list[RecordVersion], as_of: datetime | None) -> RecordVersion | None:
    """The head, or the latest version created at or before ``as_of``."""
    if as_of is None:
        return versions[-1]
    eligible = [v for v in versions if v.created_at <= as_of]
    return eligible[-1] if eligible else None


class InMemoryEventStore:
    def __init__(self, backend: InMemoryBackend) -> None:
        self._b = backend

    def append(
        self,
        scope: Scope,
        event: EventInput,
        *,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Event:
        check_append_key(idempotency_key)
        with self._b.lock:
            if deletion_fence:
                self._b.api_state.check_not_deleting(scope.memory_id)
            now = self._b.clock.now()
            known = self._b.append_keys.stored(scope, idempotency_key)
            if known is not None:
                return known
            stored = Event(
                **{name: getattr(event, name) for name in EventInput.model_fields},
                memory_id=scope.memory_id,
                actor_id=scope.actor_id,
                event_id=new_event_id(event.event_timestamp),
                created_at=now,
            )
            session = self._b.events[scope].setdefault(event.session_id, {})
            session[stored.event_id] = stored
            self._b.history_generations.bump(scope)
            self._b.append_keys.remember(scope, idempotency_key, stored)
            return stored

    def get_event(self, scope: Scope, session_id: str, event_id: str) -> Event:
        with self._b.lock:
            found = self._b.events.get(scope, {}).get(session_id, {}).get(event_id)
        if found is None:
            raise EventNotFoundError(event_id)
        return found

    def list_events(
        self,
        scope: Scope,
        session_id: str,
        *,
        branch: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page[Event]:
        check_limit(limit)
        with self._b.lock:
            events = list(self._b.events.get(scope, {}).get(session_id, {}).values())
        if branch is not None:
            events = [e for e in events if e.branch is not None and e.branch.name == branch]
        events.sort(key=_event_key)
        query: dict[str, Any] = {"session": session_id, "branch": branch}
        return page_after(str(scope), query, events, key=_event_key, limit=limit, cursor=cursor)

    def list_sessions(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[SessionSummary]:
        check_limit(limit)
        with self._b.lock:
            sessions = [
                SessionSummary(
                    actor_id=scope.actor_id,
                    session_id=sid,
                    created_at=min(e.created_at for e in events.values()),
                )
                for sid, events in sorted(self._b.events.get(scope, {}).items())
                if events
            ]
        return page_after(
            str(scope), {}, sessions, key=lambda s: s.session_id, limit=limit, cursor=cursor
        )

    def list_actors(
        self, memory_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[str]:
        check_limit(limit)
        with self._b.lock:
            actors = sorted(
                scope.actor_id
                for scope, sessions in self._b.events.items()
                if scope.memory_id == memory_id and any(sessions.values())
            )
        return page_after(
            f"memory:{memory_id}", {}, actors, key=lambda a: a, limit=limit, cursor=cursor
        )

    def delete_event(self, scope: Scope, session_id: str, event_id: str) -> None:
        with self._b.lock:
            session = self._b.events.get(scope, {}).get(session_id, {})
            if event_id not in session:
                raise EventNotFoundError(event_id)
            del session[event_id]
            self._b.history_generations.bump(scope)
            self._b.chunk_store.forget_turn(scope, session_id, event_id)  # no summary outlives it

    def erase_scope(self, scope: Scope) -> int:
        with self._b.lock:
            sessions = self._b.events.pop(scope, {})
            self._b.append_keys.forget_scope(scope)
            self._b.history_generations.bump(scope)
        return sum(len(events) for events in sessions.values())


def _event_key(event: Event) -> str:
    return event_sort_key(event.event_timestamp, event.event_id)


class InMemoryJournalStore:
    def __init__(self, backend: InMemoryBackend) -> None:
        self._b = backend

    def put(self, entry: JournalEntry) -> None:
        with self._b.lock:
            filed = self._b.journal[entry.scope]
            if entry.journal_id in filed:
                return  # immutable: the first filing stands
            linked, head = link(entry, self._b.journal_heads.get(entry.scope))
            filed[entry.journal_id] = linked
            self._b.journal_heads[entry.scope] = head

    def chain(self, scope: Scope, *, after: int = 0, limit: int = 100) -> tuple[JournalEntry, ...]:
        with self._b.lock:
            found = [e for e in self._b.journal.get(scope, {}).values() if e.sequence > after]
        return tuple(sorted(found, key=lambda e: e.sequence)[:limit])

    def head(self, scope: Scope) -> ChainHead | None:
        with self._b.lock:
            return self._b.journal_heads.get(scope)

    def get(self, scope: Scope, journal_id: str) -> JournalEntry:
        with self._b.lock:
            found = self._b.journal.get(scope, {}).get(journal_id)
        if found is None:
            raise JournalNotFoundError(journal_id)
        return found

    def erase_scope(self, scope: Scope) -> int:
        with self._b.lock:
            self._b.journal_heads.pop(scope, None)
            return len(self._b.journal.pop(scope, {}))
