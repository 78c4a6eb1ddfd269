"""An erasure writes the scope's snapshot file again without the erased rows, from the file's
own arrays, instead of the next recall rebuilding it from the store (``compact``).

The compacted sections are exactly those a build from the rows left makes; after the erase no
file of the folder, and no block of the old file, holds the erased content; the next recall
catches up from the compacted file and ranks as a scan does; and where the compaction or the
overwrite of the old file fails, or the erasing process dies before it, nothing erased is
readable by a later recall.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from cairn.changes import Create
from cairn.clock import FixedClock
from cairn.local.store import open_store
from cairn.ports import Stores
from cairn.recall.index import EmbeddedRecallIndex
from cairn.recall.index.compact import sections_without
from cairn.recall.index.rows import row_stream
from cairn.recall.index.streamed import build_sections
from cairn.store import snapshot_folder
from cairn.store.sqlite import SQLiteBackend
from cairn.store.sqlite.backend import snapshot_folder_of
from tests.unit.snapshot_support import (
    EMBEDDER,
    PRIVATE,
    SCOPE,
    asked,
    counts,
    fact,
    folder_bytes,
    scanned,
    seen,
    the_file,
    write,
)

SECRET = f"Has {PRIVATE} and drinks tea"


def in_own_folder(tmp_path: Path) -> Path:
    """A store path whose folder holds nothing else (a witness link stays outside it)."""
    (tmp_path / "store").mkdir()
    return tmp_path / "store" / "cairn.db"


def filled(stores: Stores) -> str:
    """A scope whose file holds the secret among rows of several sessions and namespaces."""
    write(stores, ["Prefers green tea", "Drinks tea at noon"], session="s1")
    (secret,) = write(stores, [SECRET], session="s2")
    write(stores, ["Has a dog named Milo", "Walks Milo by the tea shop"], session="s3")
    return secret


def test_sections_without_rows_are_the_sections_built_from_the_rows_left(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "cairn.db", FixedClock()) as backend:
        stores = backend.stores()
        filled(stores)
        changes = [
            Create(record=fact(f"Note {i} on tea", f"s{i % 4}", f"/n{i % 3}/")) for i in range(9)
        ]
        stores.records.apply(SCOPE, changes)
        with row_stream(stores.records, SCOPE, EMBEDDER.identity, bulk=True) as (_, stream):
            rows = list(stream)
    whole = build_sections(rows, EMBEDDER.identity, len(rows))
    for dropped in ({0}, {2}, {len(rows) - 1}, {1, 3, 4, 7}, set(range(len(rows)))):
        keep = np.array([i not in dropped for i in range(len(rows))])
        left = [row for i, row in enumerate(rows) if i not in dropped]
        expected = build_sections(left, EMBEDDER.identity, len(left))
        got = sections_without(whole, keep)
        assert got.size == expected.size
        assert got.names == expected.names
        assert got.arrays.keys() == expected.arrays.keys()
        for name, array in expected.arrays.items():
            assert got.arrays[name].dtype == array.dtype, name
            assert got.arrays[name].tobytes() == array.tobytes(), name
        assert got.matrix.tobytes() == expected.matrix.tobytes()


def test_an_erasure_of_a_record_in_the_file_rewrites_it_and_the_next_recall_catches_up(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    store = in_own_folder(tmp_path)
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        secret = filled(stores)
        asked(stores, clock)  # the file is written, the secret in it
        assert PRIVATE.encode() in the_file(store).read_bytes()
        witness = tmp_path / "old-file"
        os.link(the_file(store), witness)  # the old file's blocks, after the rename too
        stores.records.erase(SCOPE, secret)
        assert PRIVATE.encode() not in folder_bytes(store)  # at once, before any recall
        assert witness.read_bytes() == bytes(witness.stat().st_size)  # overwritten in place
        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert all(PRIVATE not in e.version.content for e in found.entries)
        assert counts(stores) == (1, 1, 1)  # mapped the compacted file, caught up, no rebuild
    with SQLiteBackend(store, clock) as reopened:  # a fresh process catches up from it too
        stores = reopened.stores()
        assert seen(asked(stores, clock)) == scanned(stores, clock)
        assert counts(stores) == (1, 0, 1)
    assert PRIVATE.encode() not in folder_bytes(store)


def test_a_process_holding_the_old_file_answers_from_the_one_an_erase_process_compacted(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    store = in_own_folder(tmp_path)
    with SQLiteBackend(store, clock) as reader:
        held = reader.stores()
        secret = filled(held)
        asked(held, clock)  # the reader maps the file with the secret
        erasing = open_store(store, clock, create=False)  # as `cairn erase`: it never recalls
        try:
            erasing.records.erase(SCOPE, secret)
        finally:
            assert erasing.owner is not None
            erasing.owner.close()
        assert PRIVATE.encode() not in folder_bytes(store)
        found = asked(held, clock)
        assert seen(found) == scanned(held, clock)
        assert all(PRIVATE not in e.version.content for e in found.entries)
        assert counts(held) == (1, 1, 1)
    assert PRIVATE.encode() not in folder_bytes(store)


def test_a_file_that_cannot_be_rewritten_is_destroyed_and_the_next_recall_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FixedClock()
    store = in_own_folder(tmp_path)
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        secret = filled(stores)
        asked(stores, clock)
        monkeypatch.setattr(snapshot_folder.SnapshotFolder, "_write", lambda *_: None)
        stores.records.erase(SCOPE, secret)
        assert not list(snapshot_folder_of(store).glob("*.snapshot"))
        monkeypatch.undo()
        assert seen(asked(stores, clock)) == scanned(stores, clock)
        assert counts(stores)[1] == 2  # rebuilt and written again
    assert PRIVATE.encode() not in folder_bytes(store)


def test_an_overwrite_of_the_old_file_that_fails_leaves_it_in_no_file_of_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FixedClock()
    store = in_own_folder(tmp_path)
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        secret = filled(stores)
        asked(stores, clock)

        def failing(file: object) -> None:
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(snapshot_folder, "_zero", failing)
        stores.records.erase(SCOPE, secret)  # the new file stands; the old is unlinked
        monkeypatch.undo()
        assert PRIVATE.encode() not in folder_bytes(store)
        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert all(PRIVATE not in e.version.content for e in found.entries)


def test_an_erase_that_died_before_rewriting_the_file_is_cleaned_by_the_next_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FixedClock()
    store = in_own_folder(tmp_path)
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        secret = filled(stores)
        asked(stores, clock)
        # The erase commits, then its process dies before the folder is touched.
        monkeypatch.setattr(snapshot_folder.SnapshotFolder, "erase_records", lambda *_: 0)
        stores.records.erase(SCOPE, secret)
        monkeypatch.undo()
    witness = tmp_path / "old-file"
    os.link(the_file(store), witness)
    with SQLiteBackend(store, clock) as reopened:
        stores = reopened.stores()
        found = asked(stores, clock)  # the stale file holds the erased record: rebuilt
        assert seen(found) == scanned(stores, clock)
        assert all(PRIVATE not in e.version.content for e in found.entries)
        assert counts(stores)[1:] == (1, 0)
    assert PRIVATE.encode() not in folder_bytes(store)
    assert witness.read_bytes() == bytes(witness.stat().st_size)  # its rebuild zeroed the old


def test_an_erasure_of_a_record_a_snapshot_in_memory_holds_is_a_rebuild(tmp_path: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(in_own_folder(tmp_path), clock) as backend:
        stores = backend.stores()
        assert stores.changes is not None
        index = EmbeddedRecallIndex(stores.records, backend.generations(), changes=stores.changes)
        secret = filled(stores)
        asked(stores, clock, index)  # built in memory, the secret in its heap
        stores.records.erase(SCOPE, secret)
        found = asked(stores, clock, index)
        assert seen(found) == scanned(stores, clock)
        assert index.caught_up == 0  # never merged over a base that holds the erased content
