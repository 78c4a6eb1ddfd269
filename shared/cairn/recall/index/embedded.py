"""The recall indexes: one cached in process per scope, one built afresh for each recall.

``EmbeddedRecallIndex`` keeps a snapshot per (scope, embedding space), least recently used
first out, within a byte budget. It is kept current by the store's generations
(``cairn.ports.RecordGenerations``): each recall reads the store's epoch (SQLite: ``PRAGMA
data_version``, which moves when another connection commits, plus a count of this process's own
record writes; a few microseconds); only when the epoch moved does it read the scope's
generation, and only when that moved does it catch up: with the store's change feed
(``Stores.changes``) the held snapshot takes in just the records changed since it was built
(``cairn.recall.index.catch_up``: an in-memory delta over the base), else it is rebuilt. So a
write by another process is seen on the next recall, and erase and retract are visible at once.

With a folder of persisted snapshots beside the store (``Stores.index_snapshots``: SQLite),
a rebuild first maps the scope's file at the generation just read, and a rebuild from the rows
writes it (``cairn.recall.index.persisted``), so a fresh process maps its index from disk.

With a shared store of index objects (``Stores.index_objects``: S3 on AWS), a rebuild first
fetches the scope's object at the generation just read (``cairn.recall.index.objects``), so a
process that starts cold reads one object, not every record; an object behind that generation
is caught up with the store's change feed (``Stores.changes``) rather than rebuilt.

``TransientRecallIndex`` builds the snapshot of just the filtered rows for one recall and
drops it: the uncached path (a backend without generations, an as-of recall). ``index_of``
picks the one a backend's ``Stores`` call for. A build reports how far it has come to whoever
listens (``cairn.recall.index.progress``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from cairn.models import EmbedderId, Scope
from cairn.ports import (
    Embedder,
    IndexObjectStore,
    IndexSnapshotFolder,
    QuarantineList,
    RecordChangeFeed,
    RecordGenerations,
    RecordStore,
)
from cairn.quarantine import QuarantineEntry
from cairn.recall.candidates import RecordFilter
from cairn.recall.index.catch_up import Delta, advance, position
from cairn.recall.index.compact import compact_file
from cairn.recall.index.mapped import SnapshotGoneError
from cairn.recall.index.objects import ObjectRowSource
from cairn.recall.index.persisted import PersistedSnapshots
from cairn.recall.index.progress import build_pass, build_passes
from cairn.recall.index.rows import bulk_reads, read_rows, row_stream
from cairn.recall.index.shortlist import FIRST_SHORTLIST, Search, search
from cairn.recall.index.snapshot import Snapshot, build_snapshot
from cairn.recall.index.transient import RecallIndex, TransientRecallIndex
from cairn.recall.query import RecallPolicy, RecallQuery

__all__ = ["EmbeddedRecallIndex", "RecallIndex", "TransientRecallIndex"]

# A 100k-record scope of 384-d vectors holds ~150 MB of matrix plus its rows
# (docs/benchmarks.md, speed): the default keeps one such scope, or many small ones.
DEFAULT_MAX_BYTES = 512 * 2**20
DEFAULT_MAX_SCOPES = 256


@dataclass
class _Cached:
    snapshot: Snapshot
    generation: Hashable
    epoch: Hashable
    # The memory's quarantine list as read with the rows (only with index objects).
    quarantine: tuple[QuarantineEntry, ...] | None = None
    # The base and what changed since (``catch_up``), when the store has a change feed.
    delta: Delta | None = None
    nbytes: int = 0  # set when kept (``_keep``)


_Key = tuple[Scope, str | None]


class EmbeddedRecallIndex:
    """Snapshots per (scope, embedding space) in this process, current with the store's
    generations, at most ``max_scopes`` of them within ``max_bytes`` (least recently used
    evicted first; a snapshot larger than the budget is used once and not kept)."""

    def __init__(
        self,
        records: RecordStore,
        generations: RecordGenerations,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_scopes: int = DEFAULT_MAX_SCOPES,
        shortlist: int = FIRST_SHORTLIST,
        bulk: bool | None = None,
        objects: IndexObjectStore | None = None,
        quarantine: QuarantineList | None = None,
        snapshots: IndexSnapshotFolder | None = None,
        changes: RecordChangeFeed | None = None,
    ) -> None:
        self._records = records
        self._generations = generations
        # Objects carry their own quarantine list as of their rows: those are rebuilt instead.
        self._changes = changes if objects is None else None
        self.caught_up = 0  # recalls answered by a delta over the held snapshot (benchmarks)
        self.persisted = (
            PersistedSnapshots(snapshots, generations) if snapshots is not None else None
        )
        if snapshots is not None:  # an erase writes the files again without its records
            snapshots.use_compactor(compact_file)

        self._max_bytes = max_bytes
        self._max_scopes = max_scopes
        self._cache: OrderedDict[_Key, _Cached] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._shortlist = shortlist
        self._bulk = bulk_reads(records) if bulk is None else bulk
        self.source = (
            ObjectRowSource(
                records,
                generations,
                objects,
                bulk=self._bulk,
                quarantine=quarantine,
                changes=changes,
            )
            if objects is not None
            else None
        )
        self._transient = TransientRecallIndex(records, shortlist=shortlist, bulk=self._bulk)

    @property
    def held_bytes(self) -> int:
        """The estimated bytes of every snapshot held now."""
        return self._bytes

    def held_scopes(self) -> Sequence[_Key]:
        """The (scope, embedder key) pairs held now, least recently used first."""
        with self._lock:
            return tuple(self._cache)

    def snapshot(self, scope: Scope, embedder: EmbedderId | None) -> Snapshot:
        """The scope's current snapshot in ``embedder``'s space, as ``search`` would use it
        (kept, or rebuilt when the scope's generation moved): for a reader of the whole index,
        such as the link job pairing new records against the scope."""
        return self._current(scope, embedder)[0]

    def search(
        self,
        scope: Scope,
        query: RecallQuery,
        *,
        embedder: Embedder | None,
        policy: RecallPolicy,
        now: datetime,
        where: RecordFilter | None = None,
    ) -> Search:
        if query.as_of is not None:  # heads are indexed; the past is read as the scan reads it
            return self._transient.search(
                scope, query, embedder=embedder, policy=policy, now=now, where=where
            )
        identity = embedder.identity if embedder is not None else None
        for attempt in range(2):
            snapshot, quarantine = self._current(scope, identity)
            try:
                found = search(
                    snapshot,
                    query,
                    embedder=embedder,
                    policy=policy,
                    now=now,
                    shortlist=self._shortlist,
                    where=where,
                )
                if snapshot.intact():
                    return found if quarantine is None else replace(found, quarantine=quarantine)
            except SnapshotGoneError:
                pass
            if attempt:  # its file was erased under this recall (``mapped``): answer afresh
                raise SnapshotGoneError("the recall index snapshot was erased twice meanwhile")
            self._drop((scope, identity.key if identity is not None else None))
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _current(
        self, scope: Scope, identity: EmbedderId | None
    ) -> tuple[Snapshot, tuple[QuarantineEntry, ...] | None]:
        key: _Key = (scope, identity.key if identity is not None else None)
        epoch = self._generations.epoch()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached.epoch == epoch:
                self._cache.move_to_end(key)
                return cached.snapshot, cached.quarantine
        # Read the generation before the rows: a write landing in between is then seen as a
        # newer generation next time (a rebuild too many, never a stale answer).
        generation = self._generations.generation(scope)
        if cached is not None and cached.generation == generation:
            with self._lock:
                cached.epoch = epoch
            return cached.snapshot, cached.quarantine
        held = cached.delta if cached is not None else None
        caught = self._catch_up(scope, identity, held)
        if caught is not None:
            return self._keep(key, _Cached(caught.snapshot(), generation, epoch, delta=caught))
        # A delta that declined was over the file's own base: mapping that file again is no use,
        # unless that base is gone (an erase wrote the file again without its records).
        stale = held is None or not held.base.intact()
        return self._rebuilt(key, scope, identity, generation, epoch, stale=stale)

    def _catch_up(
        self, scope: Scope, identity: EmbedderId | None, delta: Delta | None
    ) -> Delta | None:
        if self._changes is None or delta is None:
            return None
        caught = advance(delta, self._changes, self._records, scope, identity)
        if caught is not None:
            self.caught_up += 1
        return caught

    def _rebuilt(
        self,
        key: _Key,
        scope: Scope,
        identity: EmbedderId | None,
        generation: Hashable,
        epoch: Hashable,
        *,
        stale: bool,
    ) -> tuple[Snapshot, tuple[QuarantineEntry, ...] | None]:
        quarantine: tuple[QuarantineEntry, ...] | None = None
        persisted, changes = self.persisted, self._changes
        found = persisted.load_at(scope, identity, generation) if persisted else None
        snapshot, at = found if found is not None else (None, None)
        if snapshot is None and persisted is not None and changes is not None and stale:
            behind = persisted.load_stale(scope, identity)  # a file behind the store: catch up
            caught = self._catch_up(
                scope, identity, Delta(behind[0], *behind[1]) if behind else None
            )
            if caught is not None:
                persisted.mapped += 1
                return self._keep(key, _Cached(caught.snapshot(), generation, epoch, delta=caught))
        if snapshot is None:
            # Read before the rows: a write the rows miss has a later sequence.
            at = position(changes, scope) if changes is not None else None
        if snapshot is None and persisted is not None and self.source is None:
            records, bulk = self._records, self._bulk
            snapshot = persisted.build(
                scope,
                identity,
                generation,
                lambda: row_stream(records, scope, identity, bulk=bulk),
                progress=build_pass(),
                position=at,
            )
        elif snapshot is None:
            reading, tokenising = build_passes()
            if self.source is not None:
                rows, quarantine = self.source.read(scope, identity, generation)
            else:
                rows = read_rows(self._records, scope, identity, bulk=self._bulk, progress=reading)
            snapshot = build_snapshot(rows, identity, tokenising)
        delta = Delta(snapshot, *at) if at is not None else None
        return self._keep(key, _Cached(snapshot, generation, epoch, quarantine, delta))

    def _drop(self, key: _Key) -> None:
        with self._lock:
            old = self._cache.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes

    def _keep(
        self, key: _Key, entry: _Cached
    ) -> tuple[Snapshot, tuple[QuarantineEntry, ...] | None]:
        """Hold ``entry`` (unless it alone exceeds the budget) and return what it answers."""
        entry.nbytes = entry.snapshot.nbytes()
        with self._lock:
            old = self._cache.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            if entry.nbytes > self._max_bytes:
                return entry.snapshot, entry.quarantine
            self._cache[key] = entry
            self._bytes += entry.nbytes
            while self._bytes > self._max_bytes or len(self._cache) > self._max_scopes:
                _, evicted = self._cache.popitem(last=False)
                self._bytes -= evicted.nbytes
        return entry.snapshot, entry.quarantine
