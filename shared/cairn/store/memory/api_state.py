"""The reference ``MemoryConfigStore``, ``IdempotencyStore`` and ``RecordDirectory``, in memory.

What the AgentCore API keeps beside records and events: memory configurations, client-token
claims and record placements. Guarded by the owning ``InMemoryBackend``'s lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cairn.erasure_fence import check_fence, placement_scope
from cairn.errors import (
    ConflictError,
    MemoryDeletingError,
    MemoryNameTakenError,
    MemoryNotFoundError,
    RecordNotFoundError,
)
from cairn.memories import MemoryConfig
from cairn.models import Page, Scope, namespace_matches
from cairn.paging import check_limit, page_after
from cairn.ports import DEFAULT_PAGE_SIZE, IdempotencyClaim, RecordPlacement


@dataclass
class ApiState:
    """The in-memory tables, shared by the stores of one backend."""

    lock: threading.RLock
    memories: dict[str, MemoryConfig] = field(default_factory=dict)
    claims: dict[str, IdempotencyClaim] = field(default_factory=dict)
    placements: dict[str, dict[str, RecordPlacement]] = field(default_factory=dict)
    # Memories DeleteMemory marked (``MemoryConfigStore.mark_deleting``); never unmarked.
    deleting: set[str] = field(default_factory=set)

    def check_not_deleting(self, memory_id: str) -> None:
        """``MemoryDeletingError`` if the memory is marked (the caller holds the lock)."""
        if memory_id in self.deleting:
            raise MemoryDeletingError(memory_id)


class InMemoryMemoryConfigStore:
    def __init__(self, state: ApiState) -> None:
        self._s = state

    def create(self, memory: MemoryConfig) -> None:
        with self._s.lock:
            if any(m.name == memory.name for m in self._s.memories.values()):
                raise MemoryNameTakenError(memory.name)
            if memory.memory_id in self._s.memories:
                raise ConflictError(f"memory id {memory.memory_id!r} is taken; create it again")
            self._s.memories[memory.memory_id] = memory

    def get(self, memory_id: str) -> MemoryConfig:
        with self._s.lock:
            found = self._s.memories.get(memory_id)
        if found is None:
            raise MemoryNotFoundError(memory_id)
        return found

    def replace(self, memory: MemoryConfig, *, expected_revision: int) -> None:
        with self._s.lock:
            current = self.get(memory.memory_id)
            if current.revision != expected_revision:
                raise ConflictError(
                    f"memory {memory.memory_id!r} changed while this update was prepared "
                    f"(revision {current.revision}, expected {expected_revision}); retry it"
                )
            self._s.memories[memory.memory_id] = memory

    def mark_deleting(self, memory_id: str) -> None:
        with self._s.lock:
            self._s.deleting.add(memory_id)

    def delete(self, memory_id: str) -> None:
        with self._s.lock:
            if self._s.memories.pop(memory_id, None) is None:
                raise MemoryNotFoundError(memory_id)

    def list_memories(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[MemoryConfig]:
        check_limit(limit)
        with self._s.lock:
            memories = sorted(self._s.memories.values(), key=lambda m: m.memory_id)
        return page_after(
            "memories", {}, memories, key=lambda m: m.memory_id, limit=limit, cursor=cursor
        )


class InMemoryIdempotencyStore:
    def __init__(self, state: ApiState) -> None:
        self._s = state

    def claim(
        self,
        key: str,
        fingerprint: str,
        *,
        now: datetime,
        expires_at: datetime,
        durable: bool = True,
    ) -> IdempotencyClaim | None:
        del durable  # nothing here outlives the process
        with self._s.lock:
            existing = self._s.claims.get(key)
            if existing is not None and existing.expires_at > now:
                return existing
            self._s.claims[key] = IdempotencyClaim(
                key=key, fingerprint=fingerprint, expires_at=expires_at
            )
            return None

    def complete(
        self,
        key: str,
        outcome: Mapping[str, Any],
        *,
        expires_at: datetime,
        durable: bool = True,
    ) -> None:
        del durable
        with self._s.lock:
            claim = self._s.claims.get(key)
            if claim is not None:
                self._s.claims[key] = claim.model_copy(
                    update={"outcome": dict(outcome), "expires_at": expires_at}
                )

    def release(self, key: str) -> None:
        with self._s.lock:
            self._s.claims.pop(key, None)


class InMemoryRecordDirectory:
    def __init__(self, state: ApiState, *, erasures: Mapping[Scope, int] | None = None) -> None:
        self._s = state
        # The record store's erasure counts, guarded by the same lock.
        self._erasures: Mapping[Scope, int] = erasures if erasures is not None else {}

    def place(
        self,
        memory_id: str,
        placements: Sequence[RecordPlacement],
        *,
        erasures: int | None = None,
        deletion_fence: bool = False,
    ) -> None:
        with self._s.lock:
            if deletion_fence and placements:
                self._s.check_not_deleting(memory_id)
            if erasures is not None and placements:
                scope = placement_scope(memory_id, (p.actor_id for p in placements))
                check_fence(erasures, self._erasures.get(scope, 0))
            table = self._s.placements.setdefault(memory_id, {})
            for placement in placements:
                table[placement.record_id] = placement

    def locate(self, memory_id: str, record_id: str) -> RecordPlacement:
        with self._s.lock:
            found = self._s.placements.get(memory_id, {}).get(record_id)
        if found is None:
            raise RecordNotFoundError(record_id)
        return found

    def actors(self, memory_id: str, *, namespace_prefix: str | None = None) -> tuple[str, ...]:
        with self._s.lock:
            placed = list(self._s.placements.get(memory_id, {}).values())
        return tuple(
            sorted(
                {
                    p.actor_id
                    for p in placed
                    if not namespace_prefix or namespace_matches(p.namespace, namespace_prefix)
                }
            )
        )

    def erase_scope(self, scope: Scope) -> int:
        with self._s.lock:
            table = self._s.placements.get(scope.memory_id, {})
            gone = [rid for rid, p in table.items() if p.actor_id == scope.actor_id]
            for record_id in gone:
                del table[record_id]
        return len(gone)
