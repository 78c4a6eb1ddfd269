"""Index rows from a shared index object, current by the store's generation; else the table.

The deployed recall index (docs/dynamodb.md, "Recall over DynamoDB"): a warm process keeps
each scope's snapshot in memory (``EmbeddedRecallIndex``, checked per recall against the scope's
generation); when that moved, or the process is cold, ``ObjectRowSource.rows`` is asked for the
rows at the generation just read:

1. the scope's object (``IndexObjectStore``), fetched with ``If-None-Match`` the ETag this
   process saw last, is used if its generation is exactly that one;
2. anything else (no object, an older generation, unchanged since we saw it stale, unreadable,
   corrupt, the object store down) reads the rows from the store itself, strongly consistent,
   which answers this recall; the reader then writes the object, tagged with the generation it
   read BEFORE the rows, so a write landing meanwhile leaves the object stale, never wrong;
3. after writing, the reader reads the generation again: if it moved, the write it raced may
   be an erase whose object delete ran before our put landed, so it overwrites its own object
   with nothing (an overwrite, not a delete: a role that only recalls needs no
   ``s3:DeleteObject``; the bucket is unversioned, so the bytes are gone either way). The erase
   deletes objects after its commit, so one of the two always runs after the last put, unless
   this process dies between its put and that check (docs/dynamodb.md says what bounds that).

The first reader that finds an object stale rebuilds it: writes stay one transaction, no
stream or extra function, and only scopes somebody recalls pay for an object.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Hashable

from cairn.errors import CairnError
from cairn.models import EmbedderId, Scope
from cairn.ports import IndexObjectStore, IndexRow, QuarantineList, RecordGenerations, RecordStore
from cairn.quarantine import QuarantineEntry
from cairn.recall.index.object_codec import CorruptIndexObjectError, DecodedObject, decode, encode
from cairn.recall.index.rows import read_rows

log = logging.getLogger(__name__)
# ETags remembered per (scope, space); one entry is a few hundred bytes.
_MAX_REMEMBERED = 4096
NO_VECTORS = "-"


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
    ) -> None:
        self._records = records
        self._quarantine = quarantine
        self._bulk = bulk
        self._generations = generations
        self._objects = objects
        self._seen: OrderedDict[tuple[Scope, str], tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()
        self.fetched = 0  # rows answered from an object (counts for benchmarks and tests)
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
        if found is not None:
            self.fetched += 1
            return found.rows, found.quarantine
        listed = self._quarantine
        quarantine = listed.entries(scope.memory_id) if listed is not None else ()
        rows = read_rows(self._records, scope, embedder, bulk=self._bulk)
        self.rebuilt += 1
        self._publish(scope, space, embedder, wanted, rows, quarantine)
        return rows, quarantine

    def _fetch(
        self, scope: Scope, space: str, embedder: EmbedderId | None, wanted: str
    ) -> DecodedObject | None:
        with self._lock:
            seen = self._seen.get((scope, space))
        etag, seen_generation = seen if seen is not None else (None, None)
        if seen_generation == wanted:
            etag = None  # we hold that object's bytes no longer: download it
        try:
            stored = self._objects.read(scope, space, if_none_match=etag)
        except CairnError as exc:
            log.warning(
                "recall index object unreadable (%s); reading the store", type(exc).__name__
            )
            return None
        if stored is None or not stored.body:
            return None  # none, emptied (step 3), or still the one we saw at an older generation
        try:
            decoded = decode(stored.body, embedder)
        except CorruptIndexObjectError:
            log.warning("recall index object is corrupt; reading the store and rewriting it")
            return None
        self._remember(scope, space, stored.etag, decoded.generation)
        return decoded if decoded.generation == wanted else None

    def _publish(
        self,
        scope: Scope,
        space: str,
        embedder: EmbedderId | None,
        generation: str,
        rows: list[IndexRow],
        quarantine: tuple[QuarantineEntry, ...],
    ) -> None:
        try:
            body = encode(rows, generation, embedder, quarantine)
            etag = self._objects.write(scope, space, body)
            if str(self._generations.generation(scope)) != generation:
                self._objects.write(scope, space, b"")  # see the module docstring, step 3
                return
        except CairnError as exc:  # the answer stands; the next cold reader rebuilds again
            log.warning("recall index object not written (%s)", type(exc).__name__)
            return
        self._remember(scope, space, etag, generation)

    def _remember(self, scope: Scope, space: str, etag: str, generation: str) -> None:
        with self._lock:
            self._seen[(scope, space)] = (etag, generation)
            self._seen.move_to_end((scope, space))
            while len(self._seen) > _MAX_REMEMBERED:
                self._seen.popitem(last=False)
