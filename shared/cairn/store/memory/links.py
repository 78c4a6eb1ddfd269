"""``LinkStore`` and ``AccessCounts`` in process memory, guarded by the backend's lock.

The reference reading of ``cairn.links``: a link is stored once per (scope, from, kind, to),
only between two records of the scope that are not erased; counts move with their cursor.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence

from cairn.errors import CountedMeanwhileError, RecordNotFoundError
from cairn.links import (
    MAX_LINKS_LISTED,
    Link,
    Salience,
    check_add,
    check_counts,
    check_link,
    check_salience,
)
from cairn.models import Scope, Status

# The head status of a record of the scope, or None when the scope has no such record.
HeadStatus = Callable[[Scope, str], Status | None]


def check_ends(scope: Scope, link: Link, status: HeadStatus) -> None:
    for record_id in (link.from_id, link.to_id):
        if status(scope, record_id) in (None, Status.ERASED):
            raise RecordNotFoundError(record_id)


class InMemoryLinkStore:
    def __init__(self, lock: threading.RLock, status: HeadStatus) -> None:
        self._lock = lock
        self._status = status
        self._links: dict[Scope, dict[tuple[str, str, str], Link]] = {}

    def put(self, scope: Scope, link: Link) -> Link:
        check_link(scope, link)
        with self._lock:
            check_ends(scope, link, self._status)
            return self._links.setdefault(scope, {}).setdefault(link.key, link)

    def links_of(self, scope: Scope, record_id: str) -> tuple[Link, ...]:
        with self._lock:
            stored = self._links.get(scope, {})
            keys = sorted(k for k in stored if record_id in (k[0], k[2]))
            return tuple(stored[k] for k in keys[:MAX_LINKS_LISTED])

    def every_link(self, scope: Scope) -> Iterator[Link]:
        with self._lock:
            stored = dict(self._links.get(scope, {}))
        return iter([stored[k] for k in sorted(stored)])

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        gone = set(record_ids)
        with self._lock:
            stored = self._links.get(scope, {})
            doomed = [k for k in stored if k[0] in gone or k[2] in gone]
            for k in doomed:
                del stored[k]
            return len(doomed)

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            return len(self._links.pop(scope, {}))


class InMemoryAccessCounts:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._counts: dict[Scope, dict[str, int]] = {}
        self._cursors: dict[Scope, int] = {}
        self._salience: dict[Scope, dict[str, Salience]] = {}

    def cursor(self, scope: Scope) -> int:
        with self._lock:
            return self._cursors.get(scope, 0)

    def counts(self, scope: Scope) -> dict[str, int]:
        with self._lock:
            return dict(self._counts.get(scope, {}))

    def add(self, scope: Scope, counts: Mapping[str, int], *, after: int, upto: int) -> None:
        check_add(counts, after, upto)
        with self._lock:
            found = self._cursors.get(scope, 0)
            if found != after:
                raise CountedMeanwhileError(after, found)
            stored = self._counts.setdefault(scope, {})
            for record_id, count in counts.items():
                stored[record_id] = stored.get(record_id, 0) + count
            self._cursors[scope] = upto

    def raise_counts(self, scope: Scope, counts: Mapping[str, int]) -> int:
        check_counts(counts)
        with self._lock:
            stored = self._counts.setdefault(scope, {})
            rising = {rid: count for rid, count in counts.items() if stored.get(rid, 0) < count}
            stored.update(rising)
            return len(rising)

    def salience(self, scope: Scope) -> dict[str, Salience]:
        with self._lock:
            return dict(self._salience.get(scope, {}))

    def put_salience(self, scope: Scope, values: Sequence[Salience]) -> None:
        check_salience(values)
        with self._lock:
            stored = self._salience.setdefault(scope, {})
            stored.update({value.record_id: value for value in values})

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        with self._lock:
            measured = self._salience.get(scope, {})
            for rid in record_ids:
                measured.pop(rid, None)
            stored = self._counts.get(scope, {})
            return sum(stored.pop(rid, None) is not None for rid in record_ids)

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            self._cursors.pop(scope, None)
            self._salience.pop(scope, None)
            return len(self._counts.pop(scope, {}))
