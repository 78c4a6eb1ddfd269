"""A scope's live heads by date and by the targets their edges name, for recall by time and
by link (``cairn.history.axes``), kept current as the recall index is.

Like the recall index it is derived and rebuildable, never the truth: built from
``list_records`` and thrown away when the store's generation of the scope moves
(``cairn.ports.RecordGenerations``: an epoch read on every call, the scope's generation read
only when the epoch moved). A backend without generations gets a view built afresh for each
call, which is the scan itself. Within a view, ``between`` is a bisection over the heads in
(date, record id) order and ``inbound`` one dictionary lookup, so a period or a record's
incoming links no longer cost a pass over every head.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from cairn.models import EdgeKind, RecordVersion, Scope
from cairn.ports import MAX_PAGE_SIZE, RecordGenerations, RecordStore, Stores
from cairn.recall.signals import record_date
from cairn.scope_guard import in_scope

# Heads held in process across scopes (parsed versions, a few KB each): least recent first out.
DEFAULT_MAX_HEADS = 200_000


@dataclass(frozen=True, slots=True)
class HeadsView:
    """One scope's live heads: by id, by (date, record id), and by the targets of their edges
    (each target's (source head, edge kind) pairs in source record-id order, edges in order)."""

    by_id: dict[str, RecordVersion]
    dated: tuple[RecordVersion, ...]
    dates: tuple[datetime, ...]
    inbound: dict[str, tuple[tuple[RecordVersion, EdgeKind], ...]]

    def between(self, start: datetime, end: datetime) -> tuple[RecordVersion, ...]:
        """The heads dated from ``start`` to ``end``, both included, in (date, id) order."""
        low = bisect.bisect_left(self.dates, start)
        high = bisect.bisect_right(self.dates, end)
        return self.dated[low:high]


def build_view(records: RecordStore, scope: Scope) -> HeadsView:
    """The view of what ``list_records`` holds live for ``scope`` now.

    Read with ``include_inactive`` and filtered here: that listing is strongly consistent on
    every backend (DynamoDB's live listing reads an eventually consistent index), so a view
    cached at a generation never lacks a write acknowledged before that generation was read.
    """
    heads: list[RecordVersion] = []
    cursor: str | None = None
    while True:
        page = records.list_records(
            scope, include_inactive=True, limit=MAX_PAGE_SIZE, cursor=cursor
        )
        heads.extend(v for v in in_scope(page.items, scope, where="history") if v.live)
        cursor = page.next_cursor
        if cursor is None:
            break
    dated = sorted(heads, key=lambda v: (record_date(v), v.record_id))
    inbound: dict[str, list[tuple[RecordVersion, EdgeKind]]] = {}
    for head in heads:  # record-id order, as list_records returns them
        for edge in head.edges:
            inbound.setdefault(edge.target, []).append((head, edge.kind))
    return HeadsView(
        by_id={v.record_id: v for v in heads},
        dated=tuple(dated),
        dates=tuple(record_date(v) for v in dated),
        inbound={target: tuple(found) for target, found in inbound.items()},
    )


@dataclass
class _Cached:
    view: HeadsView
    generation: Hashable
    epoch: Hashable


class HeadIndex:
    """Views per scope, current with the store's generations (or, without them, built for
    each call), at most ``max_heads`` heads held in all."""

    def __init__(
        self,
        records: RecordStore,
        generations: RecordGenerations | None,
        *,
        max_heads: int = DEFAULT_MAX_HEADS,
    ) -> None:
        self._records = records
        self._generations = generations
        self._max_heads = max_heads
        self._cache: OrderedDict[Scope, _Cached] = OrderedDict()
        self._lock = threading.Lock()

    def view(self, scope: Scope) -> HeadsView:
        """The scope's live heads as of a moment no earlier than this call's start."""
        generations = self._generations
        if generations is None:
            return build_view(self._records, scope)
        epoch = generations.epoch()
        with self._lock:
            cached = self._cache.get(scope)
            if cached is not None and cached.epoch == epoch:
                self._cache.move_to_end(scope)
                return cached.view
        # The generation before the rows: a write in between is a rebuild too many next time,
        # never a stale answer (as the recall index reads it).
        generation = generations.generation(scope)
        if cached is not None and cached.generation == generation:
            with self._lock:
                cached.epoch = epoch
            return cached.view
        view = build_view(self._records, scope)
        with self._lock:
            self._cache.pop(scope, None)
            if len(view.by_id) <= self._max_heads:
                self._cache[scope] = _Cached(view, generation, epoch)
            held = sum(len(c.view.by_id) for c in self._cache.values())
            while held > self._max_heads:
                _, evicted = self._cache.popitem(last=False)
                held -= len(evicted.view.by_id)
        return view


_Shared = tuple["weakref.ReferenceType[RecordStore]", HeadIndex]
_SHARED: weakref.WeakKeyDictionary[RecordGenerations, _Shared] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def heads_of(stores: Stores) -> HeadIndex:
    """The head index for ``stores``: one per backend in this process when it keeps
    generations (held through weak proxies, as ``index_of`` holds its index), else one that
    reads the heads afresh for each call."""
    generations = stores.generations
    if generations is None:
        return HeadIndex(stores.records, None)
    with _SHARED_LOCK:
        shared = _SHARED.get(generations)
        if shared is None or shared[0]() is not stores.records:
            index = HeadIndex(
                cast(RecordStore, weakref.proxy(stores.records)),
                cast(RecordGenerations, weakref.proxy(generations)),
            )
            shared = (weakref.ref(stores.records), index)
            _SHARED[generations] = shared
        return shared[1]
