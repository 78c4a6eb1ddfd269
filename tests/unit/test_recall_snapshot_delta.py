"""A persisted snapshot caught up by a delta on SQLite: what is rebuilt instead, and what an
erasure leaves behind.

A write costs the next recall the records it changed, not a rebuild (``catch_up``); more
changed records than ``delta_bound`` allows, an erasure of a record the held snapshot holds, or a
file whose change feed position the store no longer holds (a store made again beside an old
folder) is a rebuild from the rows, and the file is rewritten. Content an erasure destroyed is
in no file of the folder afterwards, though it had reached the recall index only by a delta
(then the erasure is caught up too: the file never held it).
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from cairn.changes import Create, NewRecord, Retract, Vector
from cairn.clock import FixedClock
from cairn.models import RecordVersion, Source, SourceKind
from cairn.recall.index.catch_up import DELTA_MIN_ROWS
from cairn.recall.index.snapshot_file import FORMAT
from cairn.store.sqlite import SQLiteBackend
from cairn.store.sqlite.backend import snapshot_folder_of
from cairn.store.sqlite.codec import encode_vector
from tests.unit.snapshot_support import (
    EMBEDDER,
    PRIVATE,
    SCOPE,
    asked,
    counts,
    folder_bytes,
    scanned,
    seen,
    write,
)


def test_writes_are_caught_up_by_a_delta_and_the_file_is_not_rewritten(tmp_path: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(tmp_path / "cairn.db", clock) as backend:
        stores = backend.stores()
        tea, _ = write(stores, ["Prefers green tea", "Drinks tea at noon"])
        assert seen(asked(stores, clock)) == scanned(stores, clock)
        for turn in range(3):  # remember, then recall: the bot's loop
            write(stores, [f"Turn {turn} was about tea and aubergines"])
            assert seen(asked(stores, clock)) == scanned(stores, clock)
        stores.records.apply(SCOPE, [Retract(record_id=tea)])
        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert "Prefers green tea" not in {e.version.content for e in found.entries}
        assert counts(stores) == (0, 1, 4)


def test_more_changes_than_the_bound_rebuild_and_rewrite_the_file(tmp_path: Path) -> None:
    clock = FixedClock()
    with SQLiteBackend(tmp_path / "cairn.db", clock) as backend:
        stores = backend.stores()
        write(stores, ["Prefers green tea"])
        asked(stores, clock)
        for start in range(0, DELTA_MIN_ROWS + 1, 16):  # 16 changes: one apply's most
            end = min(start + 16, DELTA_MIN_ROWS + 1)
            write(stores, [f"Tea fact number {i}" for i in range(start, end)])
        assert seen(asked(stores, clock)) == scanned(stores, clock)
        assert counts(stores) == (0, 2, 0)


def test_a_file_whose_change_the_store_no_longer_holds_is_rebuilt(tmp_path: Path) -> None:
    clock = FixedClock()
    store = tmp_path / "cairn.db"
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        write(stores, ["Prefers green tea", "Drinks tea at noon"])
        asked(stores, clock)
    kept = tmp_path / "kept"
    shutil.copytree(snapshot_folder_of(store), kept)
    shutil.rmtree(snapshot_folder_of(store))
    for path in tmp_path.glob("cairn.db*"):
        path.unlink()
    with SQLiteBackend(store, clock) as remade:  # the same scope, as many writes, other records
        stores = remade.stores()
        write(stores, ["Has a dog named Milo", "Lives in Lisbon"])
        write(stores, ["Drinks coffee, never tea"])
    shutil.rmtree(snapshot_folder_of(store), ignore_errors=True)
    shutil.copytree(kept, snapshot_folder_of(store))
    with SQLiteBackend(store, clock) as reopened:
        stores = reopened.stores()
        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert "Prefers green tea" not in {e.version.content for e in found.entries}
        assert counts(stores) == (0, 1, 0)


def test_an_erasure_after_a_delta_leaves_no_content_in_the_folder(tmp_path: Path) -> None:
    clock = FixedClock()
    store = tmp_path / "cairn.db"
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        write(stores, ["Prefers green tea"])
        asked(stores, clock)
        (secret,) = write(stores, [f"Has {PRIVATE} and drinks tea"])
        found = asked(stores, clock)  # the secret reached the index by a delta only
        assert f"Has {PRIVATE} and drinks tea" in {e.version.content for e in found.entries}
        assert counts(stores) == (0, 1, 1)
        stores.records.erase(SCOPE, secret)
        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert all(PRIVATE not in e.version.content for e in found.entries)
        # The file never held the secret: the erasure is caught up like a retraction.
        assert counts(stores)[1:] == (1, 2)
    with SQLiteBackend(store, clock) as reopened:  # and a fresh process answers the same
        stores = reopened.stores()
        assert seen(asked(stores, clock)) == scanned(stores, clock)
    assert PRIVATE.encode() not in folder_bytes(store)


def test_a_vector_added_by_reembedding_is_caught_up_with_the_writes_beside_it(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    with SQLiteBackend(tmp_path / "cairn.db", clock) as backend:
        stores = backend.stores()
        write(stores, ["Prefers green tea"])
        bare = NewRecord(
            namespace="/facts/a1/",
            content="Drinks aubergine tea at noon",
            sources=(Source(kind=SourceKind.USER, session_id="s1"),),
        )
        (unvectored,) = stores.records.apply(SCOPE, [Create(record=bare)])
        asked(stores, clock)
        # Re-embedding writes a vector, moves the generation and puts a ``re-embedded`` change
        # in the feed; a write lands beside it.
        values = tuple(EMBEDDER.embed([unvectored.content])[0])
        vector = Vector(embedder=EMBEDDER.identity, values=values)
        assert stores.records.add_vectors(SCOPE, [(unvectored.ref, vector)]) == 1  # type: ignore[attr-defined]
        write(stores, ["Turn 1 was about tea"])
        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert found.counts.reembedded == 0  # the stored vector was used, not made again
        assert counts(stores) == (0, 1, 1)


def _bare(content: str) -> NewRecord:
    return NewRecord(
        namespace="/facts/a1/",
        content=content,
        sources=(Source(kind=SourceKind.USER, session_id="s1"),),
    )


def _as_an_older_cairn_reembeds(store: Path, version: RecordVersion) -> None:
    """What ``add_vectors`` did before the feed had a ``re-embedded`` change: the vector row
    and the generation moved, by another connection, and no change in the feed."""
    values = tuple(EMBEDDER.embed([version.content])[0])
    with closing(sqlite3.connect(store)) as conn, conn:
        conn.execute(
            "INSERT INTO vectors (memory_id, actor_id, record_id, content_digest, embedder_key,"
            " dims, vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                *(SCOPE.memory_id, SCOPE.actor_id, version.record_id, version.content_digest),
                *(EMBEDDER.identity.key, EMBEDDER.identity.dims, encode_vector(values)),
            ),
        )
        conn.execute(
            "UPDATE record_generations SET generation = generation + 1"
            " WHERE memory_id = ? AND actor_id = ?",
            (SCOPE.memory_id, SCOPE.actor_id),
        )


def test_a_generation_moved_with_no_change_in_the_feed_is_a_rebuild(tmp_path: Path) -> None:
    clock, store = FixedClock(), tmp_path / "cairn.db"
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        write(stores, ["Prefers green tea"])
        (bare,) = stores.records.apply(SCOPE, [Create(record=_bare(PRIVATE + " aubergine tea"))])
        asked(stores, clock)

        _as_an_older_cairn_reembeds(store, bare)

        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert found.counts.reembedded == 0  # the vector the older writer stored was read
        assert counts(stores) == (0, 2, 0)  # no delta: rebuilt, and the file written again


@pytest.mark.parametrize("older", [1, 2])
def test_a_file_of_an_older_format_is_never_read_nor_caught_up_from(
    tmp_path: Path, older: int
) -> None:
    """Format 1 predates the ``re-embedded`` change, format 2 put a record distilled from a
    rollout in its session's thread: either is rebuilt, at its own generation or behind."""
    clock, store = FixedClock(), tmp_path / "cairn.db"
    with SQLiteBackend(store, clock) as backend:
        stores = backend.stores()
        write(stores, ["Prefers green tea"])
        (bare,) = stores.records.apply(SCOPE, [Create(record=_bare(PRIVATE + " aubergine tea"))])
        asked(stores, clock)
    current = f'"format":{FORMAT},'.encode()
    for path in snapshot_folder_of(store).rglob("*"):  # as an older cairn wrote it
        if path.is_file() and current in (data := path.read_bytes()):
            path.write_bytes(data.replace(current, f'"format":{older},'.encode(), 1))
    with SQLiteBackend(store, clock) as reopened:  # at its own generation: rebuilt
        assert seen(asked(reopened.stores(), clock)) == scanned(reopened.stores(), clock)
        assert counts(reopened.stores()) == (0, 1, 0)
    for path in snapshot_folder_of(store).rglob("*"):
        if path.is_file() and current in (data := path.read_bytes()):
            path.write_bytes(data.replace(current, f'"format":{older},'.encode(), 1))
    _as_an_older_cairn_reembeds(store, bare)
    with SQLiteBackend(store, clock) as upgraded:  # then a write by this code, in the feed
        stores = upgraded.stores()
        write(stores, ["Turn 1 was about tea"])
        found = asked(stores, clock)
        assert seen(found) == scanned(stores, clock)
        assert found.counts.reembedded == 0
        assert counts(stores) == (0, 1, 0)  # rebuilt, not caught up from the old file
