"""Index rows from a shared index object, current by the store's generation; else the table.

The deployed recall index (docs/dynamodb.md, "Recall over DynamoDB"): a warm process keeps
each scope's snapshot in memory (``EmbeddedRecallIndex``, checked per recall against the scope's
generation); when that moved, or the process is cold, ``ObjectRowSource.rows`` is asked for the
rows at the generation just read:

1. the scope's object (``IndexObjectStore``) is used if its generation is exactly that one. It
   is fetched with ``If-None-Match`` the ETag of the object this process holds the rows of
   (within ``hold_bytes``), so an object unchanged since is not downloaded again;
2. an object at another generation (fetched, or the one held) is caught up with the scope's
   change feed (``object_patch``: the changes since the object's sequence, and the heads of
   just the records they name), which answers this recall; an object whose rows were read
   whole more than an hour ago is not (step 3), so no catch-up outlives that;
3. anything else (no object, one too far behind or with no sequence, corrupt, the object store
   or the feed out of reach) reads the rows from the store itself, strongly consistent, with
   the feed's position read before them;
4. after 2 or 3 the reader writes the object, tagged with the generation it read BEFORE the
   feed or the rows, so a write landing meanwhile leaves the object stale, never wrong; then
   it reads the generation again: if it moved, the write it raced may be an erase whose object
   delete ran before our put landed, so it overwrites its own object with nothing (an
   overwrite, not a delete: a role that only recalls needs no ``s3:DeleteObject``; the bucket
   is unversioned, so the bytes are gone either way) and holds no rows. The erase deletes
   objects after its commit, so one of the two always runs after the last put, unless this
   process dies between its put and that check (docs/dynamodb.md says what bounds that). A
   catch-up never writes an erased record back: the erase's changes commit in the transaction
   that moves the generation, so a catch-up that starts after it drops the record (its head
   is a tombstone), and one that races it is this step's case. Rows held from before an erase
   are read past (the erase deleted their object, so the next read finds none); were the
   delete lost, their catch-up drops the record just the same.

The first reader that finds an object stale brings it up to date: writes stay one transaction,
no stream or extra function, and only scopes somebody recalls pay for an object.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from cairn.errors import CairnError
from cairn.models import EmbedderId, Scope
from cairn.ports import (
    HeadRowReader,
    IndexObjectStore,
    IndexRow,
    QuarantineList,
    RecordChangeFeed,
    RecordGenerations,
    RecordStore,
)
from cairn.quarantine import QuarantineEntry
from cairn.recall.index.object_codec import CorruptIndexObjectError, DecodedObject, decode, encode
from cairn.recall.index.object_patch import Patched, patch, position
from cairn.recall.index.rows import read_rows

log = logging.getLogger(__name__)
# The objects whose rows a process keeps, with their ETags, to catch up from without
# downloading them again: at most this many bytes of objects (least recently written or read
# out first; the snapshots built from them are held by the index besides).
DEFAULT_HOLD_BYTES = 64 * 2**20
NO_VECTORS = "-"
_Key = tuple[Scope, str]


@dataclass(frozen=True, slots=True)
class _Held:
    etag: str
    rows: DecodedObject
    nbytes: int


def space_of(embedder: EmbedderId | None) -> str:
    """The object space of an embedder: its key, or ``-`` for rows without vectors."""
    return embedder.key if embedder is not None else NO_VECTORS


class ObjectRowSource:
    """A scope's index rows at a generation: from its index object, or from the store."""

    def __init__(
        self,
        records: RecordStore,
        generations: RecordGenerations,
        objects: IndexObjectStore,
        *,
        bulk: bool,
        quarantine: QuarantineList | None = None,
        changes: RecordChangeFeed | None = None,
        hold_bytes: int = DEFAULT_HOLD_BYTES,
    ) -> None:
        self._records = records
        self._quarantine = quarantine
        self._bulk = bulk
        self._generations = generations
        self._objects = objects
        # Catching up needs the feed's last sequence and the store's own head rows (``bulk``:
        # a wrapper store that changes ``list_records`` is read whole, through it).
        self._feed = changes
        self._heads = records if bulk and isinstance(records, HeadRowReader) else None
        self._hold_bytes = hold_bytes
        self._held_bytes = 0
        self._held: OrderedDict[_Key, _Held] = OrderedDict()
        self._lock = threading.Lock()
        self.fetched = 0  # rows answered from an object (counts for benchmarks and tests)
        self.patched = 0  # rows of a stale object caught up with the feed, object rewritten
        self.rebuilt = 0  # rows read from the store, object rewritten

    def rows(
        self, scope: Scope, embedder: EmbedderId | None, generation: Hashable
    ) -> list[IndexRow]:
        """The live heads of ``scope`` as of ``generation`` (read before this call)."""
        return self.read(scope, embedder, generation)[0]

    def read(
        self, scope: Scope, embedder: EmbedderId | None, generation: Hashable
    ) -> tuple[list[IndexRow], tuple[QuarantineEntry, ...]]:
        """``rows``, and the memory's quarantine list as of then (a change to it moves every
        generation of the memory, so an object at ``generation`` carries the list that holds
        for it)."""
        wanted, space = str(generation), space_of(embedder)
        found = self._fetch(scope, space, embedder, wanted)
        if found is not None and found.generation == wanted:
            self.fetched += 1
            return found.rows, found.quarantine
        listed = self._quarantine
        quarantine = listed.entries(scope.memory_id) if listed is not None else ()
        caught_up = self._patch(scope, embedder, found)
        if caught_up is not None:
            self.patched += 1
        else:
            whole_at = time.time()
            sequence, change = position(self._feed, scope) if self._feed else (None, None)
            rows = read_rows(self._records, scope, embedder, bulk=self._bulk)
            caught_up = Patched(rows, sequence, change, whole_at)
            self.rebuilt += 1
        current = DecodedObject(
            wanted,
            caught_up.rows,
            quarantine,
            caught_up.sequence,
            caught_up.change,
            caught_up.whole_at,
        )
        self._publish(scope, space, embedder, current)
        return current.rows, quarantine

    def _patch(
        self, scope: Scope, embedder: EmbedderId | None, base: DecodedObject | None
    ) -> Patched | None:
        if base is None or self._feed is None or self._heads is None:
            return None
        try:
            return patch(base, scope, embedder, self._feed, self._heads, time.time())
        except CairnError as exc:  # the feed or a head out of reach: the full read answers
            log.warning("recall index object not caught up (%s)", type(exc).__name__)
            return None

    def _fetch(
        self, scope: Scope, space: str, embedder: EmbedderId | None, wanted: str
    ) -> DecodedObject | None:
        """The scope's object as stored now (the rows held when it is still the one held)."""
        with self._lock:
            found = self._held.get((scope, space))
        held = found.rows if found is not None else None
        if held is not None and held.generation == wanted:
            return held  # exactly the object at that generation, still in memory
        try:
            etag = found.etag if found is not None else None
            stored = self._objects.read(scope, space, if_none_match=etag)
        except CairnError as exc:
            log.warning(
                "recall index object unreadable (%s); reading the store", type(exc).__name__
            )
            return None
        if stored is not None and stored.body is None:
            return held  # unchanged since: the one held
        if stored is None or not stored.body:
            self._forget((scope, space))
            return None  # none, or emptied (step 4)
        try:
            decoded = decode(stored.body, embedder)
        except CorruptIndexObjectError:
            log.warning(
                "recall index object not readable here (corrupt, or of another format or "
                "embedding space: after an upgrade each scope's object is rebuilt once); "
                "reading the store and rewriting it"
            )
            return None
        self._remember((scope, space), stored.etag, decoded, len(stored.body))
        return decoded

    def _publish(
        self, scope: Scope, space: str, embedder: EmbedderId | None, current: DecodedObject
    ) -> None:
        try:
            body = encode(
                current.rows,
                current.generation,
                embedder,
                current.quarantine,
                current.sequence,
                current.change,
                current.whole_at,
            )
            etag = self._objects.write(scope, space, body)
            if str(self._generations.generation(scope)) != current.generation:
                self._objects.write(scope, space, b"")  # see the module docstring, step 4
                self._forget((scope, space))
                return
        except CairnError as exc:  # the answer stands; the next cold reader rebuilds again
            log.warning("recall index object not written (%s)", type(exc).__name__)
            self._forget((scope, space))
            return
        self._remember((scope, space), etag, current, len(body))

    def _remember(self, key: _Key, etag: str, decoded: DecodedObject, nbytes: int) -> None:
        with self._lock:
            self._drop(key)
            if nbytes > self._hold_bytes:
                return  # too large to keep: the next catch-up downloads it
            self._held[key] = _Held(etag, decoded, nbytes)
            self._held_bytes += nbytes
            while self._held_bytes > self._hold_bytes:
                self._drop(next(iter(self._held)))

    def _forget(self, key: _Key) -> None:
        with self._lock:
            self._drop(key)

    def _drop(self, key: _Key) -> None:
        old = self._held.pop(key, None)
        if old is not None:
            self._held_bytes -= old.nbytes
