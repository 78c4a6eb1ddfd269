"""The persisted recall index snapshot on SQLite: mapped when current, rebuilt otherwise,
destroyed by erase.

A fresh handle on the store maps the scope's file instead of reading its rows; a file that is
truncated, torn or foreign (another magic, format or scope) is never an answer: the rows are
read and the file rewritten; a file behind the store (another generation) is mapped and caught
up from the change feed (``cairn.recall.index.catch_up``). An erase overwrites and deletes the
scope's files, a rebuild that raced the erase deletes its own, and a recall whose mapped file
is erased under it answers again from the store. A read-only store recalls without writing.
"""

from __future__ import annotations

import mmap
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
import pytest

from cairn.clock import FixedClock
from cairn.models import RecordVersion, Scope
from cairn.recall import RecallQuery, Recollection, recall
from cairn.recall.index import EmbeddedRecallIndex, index_of, read_rows
from cairn.recall.index.mapped import SnapshotGoneError
from cairn.recall.scan import ScanningRecallIndex
from cairn.store.snapshot_folder import SnapshotFolder
from cairn.store.sqlite import SQLiteBackend
from cairn.store.sqlite.backend import snapshot_folder_of
from tests.unit.snapshot_support import (
    EMBEDDER,
    PRIVATE,
    QUERY,
    SCOPE,
    asked,
    folder_bytes,
    persisted,
    scanned,
    seen,
    the_file,
    write,
)

NEIGHBOUR = Scope(memory_id="m1", actor_id="a2")
# Distinctive ASCII, so it cannot occur in a file by accident.
KEPT = "Plays-Ukulele-On-Thursdays-5127"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "cairn.db"
    with SQLiteBackend(path, FixedClock()) as backend:
        stores = backend.stores()
        write(stores, [f"Has {PRIVATE}", "Prefers green tea", "Drinks tea at noon"])
        write(stores, [KEPT], scope=NEIGHBOUR)
    return path


def test_a_fresh_handle_maps_the_file_and_answers_as_the_scan(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as first:
        built = seen(asked(first.stores(), clock))
        assert persisted(first.stores()).published == 1
        assert PRIVATE.encode() in the_file(store).read_bytes()
    with SQLiteBackend(store, clock) as second:
        stores = second.stores()
        assert seen(asked(stores, clock)) == built == scanned(stores, clock)
        assert (persisted(stores).mapped, persisted(stores).published) == (1, 0)


def test_the_mapped_matrix_is_an_aligned_view_of_the_file_not_a_heap_copy(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        asked(stores, clock)
        generation = stores.generations.generation(SCOPE)  # type: ignore[union-attr]
        snapshot = persisted(stores).load(SCOPE, EMBEDDER.identity, generation)
        assert snapshot is not None
        matrix = snapshot.matrix
        assert matrix.shape == (3, EMBEDDER.identity.dims)
        assert not matrix.flags.owndata
        assert not matrix.flags.writeable  # a read-only mapping
        base = matrix
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base, memoryview)
        assert isinstance(base.obj, mmap.mmap)
        assert matrix.ctypes.data % 64 == 0  # unaligned, a pass over it was 6x slower


@pytest.mark.parametrize(
    "damage", ["truncated", "one byte flipped", "other magic", "longer", "empty"]
)
def test_a_damaged_file_is_rebuilt_never_trusted(store: Path, damage: str) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as first:
        expected = seen(asked(first.stores(), clock))
    path = the_file(store)
    body = bytearray(path.read_bytes())
    if damage == "truncated":
        body = body[:-1]
    elif damage == "one byte flipped":
        body[-5] ^= 0x40  # in the last section (the names): parsed, not only checked
    elif damage == "other magic":
        body[:8] = b"CAIRNSN9"
    elif damage == "longer":
        body += b"\0"
    else:
        body = bytearray()
    path.write_bytes(bytes(body))
    with SQLiteBackend(store, clock) as second:
        stores = second.stores()
        assert seen(asked(stores, clock)) == expected
        assert (persisted(stores).mapped, persisted(stores).published) == (0, 1)
    with SQLiteBackend(store, clock) as third:  # rewritten whole: the next process maps it
        assert seen(asked(third.stores(), clock)) == expected
        assert persisted(third.stores()).mapped == 1


def test_a_stale_file_is_caught_up_and_a_foreign_one_is_not_used(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        asked(stores, clock)
        old = the_file(store).read_bytes()
        write(stores, ["Now drinks only tea with aubergine"])
    the_file(store).write_bytes(old)  # stamped with the generation before that write
    with SQLiteBackend(store, clock) as reopened:
        stores = reopened.stores()
        found = asked(stores, clock)
        assert "Now drinks only tea with aubergine" in {e.version.content for e in found.entries}
        assert seen(found) == scanned(stores, clock)
        # Mapped, then brought up to date by the one change since (``catch_up``), not rewritten.
        index = index_of(stores)
        assert isinstance(index, EmbeddedRecallIndex)
        assert (persisted(stores).mapped, persisted(stores).published, index.caught_up) == (1, 0, 1)
        # The neighbour's name holding this scope's (current) file: another scope's stamp.
        neighbour = reopened.snapshots.path(NEIGHBOUR, EMBEDDER.identity.key)
        shutil.copy(the_file(store), neighbour)
        ukulele = RecallQuery(text="plays ukulele on thursdays")

        def neighbours(index: ScanningRecallIndex | None = None) -> Recollection:
            return recall(
                NEIGHBOUR,
                ukulele,
                stores=stores,
                embedder=EMBEDDER,
                clock=clock,
                journal=False,
                index=index,
            )

        found = neighbours()
        assert [e.version.content for e in found.entries] == [KEPT]
        assert seen(found) == seen(neighbours(ScanningRecallIndex(stores.records)))
        assert persisted(stores).mapped == 1  # the neighbour's answer was not the copied file


def test_an_erase_leaves_no_erased_byte_in_the_folder(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        asked(stores, clock)
        recall(NEIGHBOUR, QUERY, stores=stores, embedder=EMBEDDER, clock=clock, journal=False)
        vector = np.asarray(EMBEDDER.embed([f"Has {PRIVATE}"])[0], dtype="<f4")
        unit = (vector / np.linalg.norm(vector)).astype("<f4").tobytes()
        before = folder_bytes(store)
        assert PRIVATE.encode() in before
        assert unit in before  # the snapshot's matrix holds the unit vector
        rows = read_rows(stores.records, SCOPE, None)
        private = next(r.record_id for r in rows if PRIVATE in r.content)
        stores.records.erase(SCOPE, private)
        after = folder_bytes(store)
        assert PRIVATE.encode() not in after
        assert unit not in after
        assert KEPT.encode() in after  # the neighbour's snapshot is untouched
        # The neighbour's, and the scope's written again without the erased row (``compact``).
        assert len(list(snapshot_folder_of(store).glob("*.snapshot"))) == 2
        assert seen(asked(stores, clock)) == scanned(stores, clock)
        stores.records.erase_scope(SCOPE)
        assert b"green tea" not in folder_bytes(store)


def test_a_rebuild_that_raced_an_erase_deletes_its_own_file(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        generation = stores.generations.generation(SCOPE)  # type: ignore[union-attr]
        rows = read_rows(stores.records, SCOPE, EMBEDDER.identity, bulk=True)
        private = next(r.record_id for r in rows if PRIVATE in r.content)
        stores.records.erase(SCOPE, private)  # commits, deletes files, before our rename
        index = persisted(stores)
        built = index.build(
            SCOPE, EMBEDDER.identity, generation, lambda: nullcontext((len(rows), iter(rows)))
        )
        assert any(PRIVATE in c for c in built.contents)  # the answer as read before the erase
        assert index.published == 0
        assert PRIVATE.encode() not in folder_bytes(store)
        assert list(snapshot_folder_of(store).glob("*")) == []


def test_a_recall_whose_file_is_erased_under_it_answers_again(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as reader, SQLiteBackend(store, clock) as eraser:
        stores = reader.stores()
        asked(stores, clock)  # published and mapped
        private = next(
            r.record_id for r in read_rows(stores.records, SCOPE, None) if PRIVATE in r.content
        )
        calls = []

        def erase_on_first_look(version: RecordVersion) -> bool:
            if not calls:  # another process erases while this recall reads the mapped file
                eraser.stores().records.erase(SCOPE, private)
            calls.append(version.record_id)
            return True

        found = recall(
            SCOPE,
            QUERY,
            stores=stores,
            embedder=EMBEDDER,
            clock=clock,
            journal=False,
            where=erase_on_first_look,
        )
        assert PRIVATE not in found.block
        assert len(calls) > 1  # the first version read after the erase found zeros
        scan = recall(
            SCOPE,
            QUERY,
            stores=stores,
            embedder=EMBEDDER,
            clock=clock,
            journal=False,
            where=erase_on_first_look,
            index=ScanningRecallIndex(stores.records),
        )
        assert seen(found) == seen(scan)
        assert persisted(stores).published == 2  # answered again from a rebuild


def test_a_mapped_snapshot_zeroed_by_an_erase_raises_rather_than_answers(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        asked(stores, clock)
        snapshot = persisted(stores).load(
            SCOPE,
            EMBEDDER.identity,
            stores.generations.generation(SCOPE),  # type: ignore[union-attr]
        )
        assert snapshot is not None
        backend.snapshots.erase_scope(SCOPE)
        with pytest.raises(SnapshotGoneError):
            snapshot.version(0)


@contextmanager
def read_only(store: Path) -> Iterator[None]:
    """The store file and its directory unwritable for this process, root included."""
    targets = [store, store.parent]
    if os.geteuid() != 0:
        store.chmod(0o444)
        store.parent.chmod(0o555)
        try:
            yield
        finally:
            store.parent.chmod(0o755)
            store.chmod(0o644)
        return
    try:  # root ignores permission bits; the immutable attribute binds it too
        subprocess.run(["chattr", "+i", *map(str, targets)], check=True, capture_output=True)  # noqa: S603, S607
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("cannot make a file read-only for root here (no chattr or no support)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, targets)], check=True, capture_output=True)  # noqa: S603, S607


def test_a_read_only_store_recalls_without_writing_a_snapshot(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        expected = scanned(backend.stores(), clock)
        backend._db.checkpoint()  # nothing left in the WAL for a reader that cannot replay it
    with read_only(store):
        with SQLiteBackend(store, clock) as backend:
            stores = backend.stores()
            assert seen(asked(stores, clock)) == expected
            assert persisted(stores).published == 0
        leftovers = sorted(p.name for p in store.parent.iterdir())
    assert "cairn.db-recall-index" not in leftovers


def test_a_read_only_store_maps_a_current_snapshot_written_before(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        expected = seen(asked(backend.stores(), clock))
        backend._db.checkpoint()
    with read_only(store), SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        assert seen(asked(stores, clock)) == expected
        assert (persisted(stores).mapped, persisted(stores).published) == (1, 0)


class _Clobbered(SnapshotFolder):
    """A folder whose file is replaced by garbage right after each publish."""

    def publish(self, scope: Scope, space: str, parts: Sequence[bytes | memoryview]) -> int | None:
        inode = super().publish(scope, space, parts)
        with self.path(scope, space).open("r+b") as file:
            file.write(b"not a snapshot")
        return inode


def test_a_file_unreadable_right_after_its_write_is_answered_from_a_build(store: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        index = EmbeddedRecallIndex(
            stores.records,
            stores.generations,  # type: ignore[arg-type]
            bulk=True,
            snapshots=_Clobbered(backend.snapshots.root),
        )
        assert seen(asked(stores, clock, index)) == scanned(stores, clock)
        assert index.persisted is not None
        assert (index.persisted.published, index.persisted.mapped) == (1, 0)
