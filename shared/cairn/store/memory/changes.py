"""The in-memory record change feed: a list appended under the backend's lock by the same call
that commits each write, so it holds a change if and only if its write happened."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime

from cairn.models import RecordVersion, Scope, VersionRef
from cairn.ports import RecordChange, change_kind

MAX_CHANGES = 1000


class InMemoryChangeFeed:
    """``cairn.ports.StoreChangeFeed`` over a list; the writer holds ``lock`` while it appends."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._changes: list[RecordChange] = []

    def record_writes(self, scope: Scope, versions: Sequence[RecordVersion], at: datetime) -> None:
        """One change per version written (the caller holds the lock and has committed)."""
        for version in versions:
            self._append(scope, version.record_id, version.version, change_kind(version), at)

    def record_erased(self, scope: Scope, heads: Iterable[tuple[str, int]], at: datetime) -> None:
        """One ``erased`` change per record, at its head's version."""
        for record_id, version in heads:
            self._append(scope, record_id, version, "erased", at)

    def record_reembedded(self, scope: Scope, refs: Iterable[VersionRef], at: datetime) -> None:
        """One ``re-embedded`` change per version given a vector."""
        for ref in refs:
            self._append(scope, ref.record_id, ref.version, "re-embedded", at)

    def _append(self, scope: Scope, record_id: str, version: int, kind: str, at: datetime) -> None:
        self._changes.append(
            RecordChange.model_validate(
                {
                    "sequence": len(self._changes) + 1,
                    "memory_id": scope.memory_id,
                    "actor_id": scope.actor_id,
                    "record_id": record_id,
                    "version": version,
                    "kind": kind,
                    "at": at,
                }
            )
        )

    def changes_after(
        self, sequence: int = 0, *, limit: int = 100, memory_id: str | None = None
    ) -> tuple[RecordChange, ...]:
        if not 1 <= limit <= MAX_CHANGES:
            raise ValueError(f"limit must be 1-{MAX_CHANGES}, not {limit}")
        with self._lock:
            later = self._changes[max(0, sequence) :]
        wanted = [c for c in later if memory_id is None or c.memory_id == memory_id]
        return tuple(wanted[:limit])

    def scope_changes(
        self, scope: Scope, after: int = 0, *, limit: int = 100
    ) -> tuple[RecordChange, ...]:
        if not 1 <= limit <= MAX_CHANGES:
            raise ValueError(f"limit must be 1-{MAX_CHANGES}, not {limit}")
        with self._lock:
            later = self._changes[max(0, after) :]
        mine = [c for c in later if (c.memory_id, c.actor_id) == (scope.memory_id, scope.actor_id)]
        return tuple(mine[:limit])

    def last_sequence(self, scope: Scope) -> int:
        wanted = (scope.memory_id, scope.actor_id)
        with self._lock:
            return next(
                (
                    c.sequence
                    for c in reversed(self._changes)
                    if (c.memory_id, c.actor_id) == wanted
                ),
                0,
            )
