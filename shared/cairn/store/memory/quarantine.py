"""``QuarantineList`` in process memory: entries by memory, guarded by the backend's lock."""

from __future__ import annotations

import threading

from cairn.quarantine import QuarantineEntry, SourceSelector


def ordered(entries: list[QuarantineEntry]) -> tuple[QuarantineEntry, ...]:
    """A memory's entries oldest first, then by selector (the port's order)."""
    return tuple(sorted(entries, key=lambda e: (e.added_at, str(e.selector))))


class InMemoryQuarantineList:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._lists: dict[str, dict[SourceSelector, QuarantineEntry]] = {}

    def add(self, entry: QuarantineEntry) -> bool:
        with self._lock:
            held = self._lists.setdefault(entry.memory_id, {})
            if entry.selector in held:
                return False
            held[entry.selector] = entry
            return True

    def remove(self, memory_id: str, selector: SourceSelector) -> bool:
        with self._lock:
            return self._lists.get(memory_id, {}).pop(selector, None) is not None

    def entries(self, memory_id: str) -> tuple[QuarantineEntry, ...]:
        with self._lock:
            return ordered(list(self._lists.get(memory_id, {}).values()))
