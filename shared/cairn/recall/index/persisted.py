"""Snapshots persisted beside the store, so a fresh process maps a scope's index, not builds it.

The embedded recall index (``cairn.recall.index.embedded``) asks here before it reads a
scope's rows, with the generation it has just read:

1. the scope's file (``IndexSnapshotFolder.path``) is mapped if it is whole and stamped with
   exactly that generation, this scope and this embedding space (``snapshot_file.load``);
   anything else — missing, torn, truncated, foreign, stale — is rebuilt, never trusted;
2. else the snapshot is built from the rows, read after that generation, one at a time
   (``streamed``: no row is held once read), and published: written to a temporary file,
   fsynced, renamed over the old one, and then mapped back, so the process holds the mapped
   file, not the arrays it was written from;
3. after the rename the generation is read again: if it moved, the write it raced may be an
   erase whose deletion of the scope's files ran before the rename, so this writer destroys
   its own file and answers from the snapshot it built. The erase deletes the scope's files
   after its commit (``SQLiteRecordStore.erase``), so one of the two always runs after the
   last rename, unless this process dies between the rename and that check: then the file,
   stamped with a generation that moved, is never used again and is destroyed by the next
   erase of the scope, and replaced by the next recall's rebuild.

A folder that cannot be written (a read-only store) publishes nothing: each process then
builds its index in memory, as it did before snapshots were persisted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager

from cairn.models import EmbedderId, Scope
from cairn.ports import BuildProgress, IndexRow, IndexSnapshotFolder, RecordGenerations
from cairn.recall.index.mapped import mapped_snapshot
from cairn.recall.index.objects import space_of
from cairn.recall.index.snapshot import Snapshot
from cairn.recall.index.snapshot_file import (
    ANY_GENERATION,
    Position,
    Stamp,
    encode,
    load,
    load_stamped,
)
from cairn.recall.index.streamed import Sections, build_sections


def stamp_of(scope: Scope, embedder: EmbedderId | None, generation: Hashable) -> Stamp:
    material = json.dumps([scope.memory_id, scope.actor_id], separators=(",", ":"))
    digest = hashlib.sha256(material.encode("utf-8")).hexdigest()
    return Stamp(scope=digest, generation=str(generation), embedder=embedder)


class PersistedSnapshots:
    """The snapshot files of one store: mapped when current, written after a rebuild."""

    def __init__(self, folder: IndexSnapshotFolder, generations: RecordGenerations) -> None:
        self._folder = folder
        self._generations = generations
        self.mapped = 0  # snapshots answered from a file (counts for benchmarks and tests)
        self.published = 0  # snapshots written after a rebuild

    def load(
        self, scope: Scope, embedder: EmbedderId | None, generation: Hashable
    ) -> Snapshot | None:
        """The scope's persisted snapshot at exactly ``generation``, or ``None``."""
        found = self.load_at(scope, embedder, generation)
        return found[0] if found is not None else None

    def load_at(
        self, scope: Scope, embedder: EmbedderId | None, generation: Hashable
    ) -> tuple[Snapshot, Position | None] | None:
        """``load``, with the change feed position the file's rows were read after (if it
        says)."""
        path = self._folder.path(scope, space_of(embedder))
        found = load_stamped(path, stamp_of(scope, embedder, generation))
        if found is None:
            return None
        self.mapped += 1
        return found[0], found[2]

    def load_stale(
        self, scope: Scope, embedder: EmbedderId | None
    ) -> tuple[Snapshot, Position] | None:
        """The scope's persisted snapshot at whatever generation, with the change feed position
        its rows were read after, or ``None`` (no whole file of this scope and space, or one
        that does not say a position past the scope's first change): a recall brings it up to
        date from the change feed (``cairn.recall.index.catch_up``), which checks the feed
        still holds that position's change."""
        path = self._folder.path(scope, space_of(embedder))
        found = load_stamped(path, stamp_of(scope, embedder, ANY_GENERATION))
        if found is None or found[2] is None or not found[2][0]:
            return None
        return found[0], found[2]  # counted in ``mapped`` by the caller once it is caught up

    def build(
        self,
        scope: Scope,
        embedder: EmbedderId | None,
        generation: Hashable,
        stream: Callable[[], AbstractContextManager[tuple[int, Iterator[IndexRow]]]],
        *,
        progress: BuildProgress | None = None,
        position: Position | None = None,
    ) -> Snapshot:
        """Build the scope's snapshot from ``stream()`` (its rows, read after ``generation``),
        one row at a time (``streamed``), publish it, and return it mapped back from its file;
        the snapshot over the built arrays when it could not be written or was raced.
        ``position`` is the scope's change feed position read before the rows (the file
        notes it, so a later reader catches up from it)."""
        sections = _sections(embedder, stream, progress)
        built = _over(sections, embedder)
        space, stamp = space_of(embedder), stamp_of(scope, embedder, generation)
        inode = self._folder.publish(scope, space, encode(sections, stamp, position))
        if inode is None:
            return built
        if self._generations.generation(scope) != generation:
            self._folder.discard(scope, space, inode)  # see the module docstring, step 3
            return built
        self.published += 1
        del built, sections  # the mapped file replaces the arrays it was written from
        mapped = load(self._folder.path(scope, space), stamp)
        # Unreadable right after its write (replaced meanwhile by a newer writer's): this
        # recall builds in memory once more rather than hold both copies while it maps.
        return mapped if mapped is not None else _over(_sections(embedder, stream), embedder)


def _sections(
    embedder: EmbedderId | None,
    stream: Callable[[], AbstractContextManager[tuple[int, Iterator[IndexRow]]]],
    progress: BuildProgress | None = None,
) -> Sections:
    with stream() as (count, rows):
        return build_sections(rows, embedder, count, progress)


def _over(sections: Sections, embedder: EmbedderId | None) -> Snapshot:
    held = sum(a.nbytes for a in [*sections.arrays.values(), sections.matrix])
    return mapped_snapshot(sections, embedder, held)
