"""Facts about a snapshot's layout that every recall over it would otherwise recompute.

A recall over a whole scope (no namespace prefix, no strategy, no filter) views every row; a
snapshot whose rows all have vectors, in row order, scores its view straight off the matrix.
Both are O(rows) to establish, so they are worked out once per snapshot and kept beside it
(weakly: they go with the snapshot) instead of on every recall; so are the hour each row was
last seen in (the shortlist's recency bound) and the views of the last few namespace prefixes
and strategies asked.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot

_HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class Layout:
    """``everything``: every row, in order (the view of an unfiltered recall; compare with
    ``is``); ``aligned``: row i's vector is matrix row i for every row."""

    everything: IntArray
    aligned: bool


_LAYOUTS: weakref.WeakKeyDictionary[Snapshot, Layout] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def layout(snapshot: Snapshot) -> Layout:
    """The snapshot's layout, worked out on first use."""
    found = _LAYOUTS.get(snapshot)
    if found is not None:
        return found
    everything = np.arange(snapshot.size, dtype=np.int64)
    everything.setflags(write=False)
    aligned = snapshot.matrix.shape[0] == snapshot.size and bool(
        np.array_equal(snapshot.vector_rows, everything)
    )
    made = Layout(everything=everything, aligned=aligned)
    with _LOCK:
        try:
            return _LAYOUTS.setdefault(snapshot, made)
        except TypeError:  # a snapshot that cannot be weakly referenced: worked out each time
            return made


def whole(snapshot: Snapshot, view: IntArray) -> bool:
    """Whether ``view`` is the snapshot's every row (``layout(snapshot).everything``)."""
    return view is layout(snapshot).everything


@dataclass(frozen=True, slots=True)
class Hours:
    """The snapshot's rows by the hour they were last seen in: ``ends[hour[row]]`` is the
    first instant (epoch seconds) after ``row``'s hour, so a row is at least ``now - ends``
    old. The shortlist's recency bound is then one power per hour, not one per row."""

    ends: FloatArray
    hour: IntArray


_HOURS: weakref.WeakKeyDictionary[Snapshot, Hours] = weakref.WeakKeyDictionary()


def hours(snapshot: Snapshot) -> Hours:
    """The snapshot's hours, worked out on first use."""
    found = _HOURS.get(snapshot)
    if found is not None:
        return found
    starts, hour = np.unique(np.floor(snapshot.last_seen / _HOUR), return_inverse=True)
    made = Hours(ends=(starts + 1) * _HOUR, hour=hour.astype(np.int64).reshape(-1))
    with _LOCK:
        try:
            return _HOURS.setdefault(snapshot, made)
        except TypeError:
            return made


# A recall under a namespace prefix or strategy views the same rows every time until the
# snapshot changes: the last few views asked of each snapshot are kept beside it.
_VIEWS_KEPT = 8
_VIEWS: weakref.WeakKeyDictionary[Snapshot, dict[tuple[str | None, str | None], IntArray]] = (
    weakref.WeakKeyDictionary()
)


def view_of(snapshot: Snapshot, namespace_prefix: str | None, strategy: str | None) -> IntArray:
    """``snapshot.view(namespace_prefix, strategy)``, read-only, worked out once per snapshot
    (of the last ``_VIEWS_KEPT`` asked)."""
    key = (namespace_prefix, strategy)
    with _LOCK:
        found = _VIEWS.get(snapshot, {}).get(key)
    if found is not None:
        return found
    made = snapshot.view(namespace_prefix, strategy)
    made.setflags(write=False)
    with _LOCK:
        try:
            views = _VIEWS.setdefault(snapshot, {})
        except TypeError:  # a snapshot that cannot be weakly referenced: worked out each time
            return made
        views[key] = made
        while len(views) > _VIEWS_KEPT:
            del views[next(iter(views))]
    return made
