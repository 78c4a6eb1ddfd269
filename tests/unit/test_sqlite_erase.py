"""Erase is real on disk: the erased words are no longer anywhere in the database files, nor in
the recall index snapshots persisted beside them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from cairn.changes import Create, NewRecord, RecordPatch, Revise, Supersede, Vector
from cairn.clock import FixedClock
from cairn.models import (
    Conversational,
    EmbedderId,
    EventInput,
    JournalEntry,
    Role,
    Scope,
    Source,
    SourceKind,
)
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.store.sqlite import SQLiteBackend
from cairn.store.sqlite.backend import snapshot_folder_of

SCOPE = Scope(memory_id="m1", actor_id="a1")
NEIGHBOUR = Scope(memory_id="m1", actor_id="a2")
USER = (Source(kind=SourceKind.USER),)
EMBEDDER = EmbedderId(model_id="test-embedder", dims=4)
# Distinctive ASCII, so it cannot occur in the file by accident and JSON keeps it verbatim.
PRIVATE_FACT = "Quixotic-Aubergine-Diagnosis-8841"
KEPT = "Plays-Ukulele-On-Thursdays-5127"
# A vector whose float32 bytes are distinctive too: erase must remove embeddings as well.
PRIVATE_VECTOR = (0.123456789, -0.987654321, 0.5550555, 0.0101011)


def file_bytes(path: Path) -> bytes:
    """Everything kept for this database: the file, its WAL and its shared memory, and every
    file in the folder of its persisted recall index snapshots."""
    parts = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    parts += sorted(snapshot_folder_of(path).glob("*"))
    return b"".join(p.read_bytes() for p in parts if p.is_file())


def recalled(stores: Stores, clock: FixedClock, scope: Scope = SCOPE) -> str:
    """A recall (it persists the scope's index snapshot); its block."""
    query = RecallQuery(text=f"what about {PRIVATE_FACT} and {KEPT}")
    return recall(scope, query, stores=stores, embedder=None, clock=clock, journal=False).block


def write_secrets(stores: Stores, clock: FixedClock) -> str:
    record = NewRecord(
        namespace="/facts/a1/",
        content=f"Has {PRIVATE_FACT}",
        body=f"Told us about {PRIVATE_FACT} twice",
        tags=(PRIVATE_FACT,),
        sources=USER,
        vector=Vector(embedder=EMBEDDER, values=PRIVATE_VECTOR),
    )
    stores.records.apply(SCOPE, [Create(record=record)])
    clock.advance(minutes=1)
    patch = RecordPatch(body=f"Still mentions {PRIVATE_FACT}", keywords=(PRIVATE_FACT,))
    stores.records.apply(SCOPE, [Revise(record_id=record.record_id, patch=patch)])
    successor = NewRecord(namespace="/facts/a1/", content=f"Had {PRIVATE_FACT} once", sources=USER)
    stores.records.apply(SCOPE, [Supersede(record_id=record.record_id, replacement=successor)])
    stores.events.append(
        SCOPE,
        EventInput(
            session_id="s1",
            event_timestamp=clock.now(),
            payload=(Conversational(role=Role.USER, text=f"I was told I have {PRIVATE_FACT}"),),
        ),
    )
    stores.journal.put(
        JournalEntry(
            journal_id="j-1",
            memory_id=SCOPE.memory_id,
            actor_id=SCOPE.actor_id,
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            query=f"what about {PRIVATE_FACT}?",
            block_digest="b" * 64,
        )
    )
    return record.record_id


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[SQLiteBackend, Stores, FixedClock]]:
    clock = FixedClock()
    backend = SQLiteBackend(tmp_path / "cairn.db", clock)
    stores = backend.stores()
    kept = NewRecord(namespace="/facts/a2/", content=KEPT, sources=USER)
    stores.records.apply(NEIGHBOUR, [Create(record=kept)])
    yield backend, stores, clock
    backend.close()


def vector_bytes() -> bytes:
    return np.asarray(PRIVATE_VECTOR, dtype="<f4").tobytes()


def test_erased_words_and_vectors_are_gone_from_the_files(
    opened: tuple[SQLiteBackend, Stores, FixedClock],
) -> None:
    backend, stores, clock = opened
    record_id = write_secrets(stores, clock)
    assert PRIVATE_FACT in recalled(stores, clock)
    recalled(stores, clock, NEIGHBOUR)
    snapshots = list(snapshot_folder_of(backend.path).glob("*"))
    assert len(snapshots) == 2
    assert any(PRIVATE_FACT.encode() in p.read_bytes() for p in snapshots)
    before = file_bytes(backend.path)
    assert PRIVATE_FACT.encode() in before  # the test reads the right files
    assert vector_bytes() in before

    stores.records.erase(SCOPE, record_id)
    stores.events.erase_scope(SCOPE)
    stores.journal.erase_scope(SCOPE)

    after = file_bytes(backend.path)
    assert PRIVATE_FACT.encode() not in after
    assert vector_bytes() not in after
    assert KEPT.encode() in after  # other actors' memory is untouched
    backend.close()
    assert PRIVATE_FACT.encode() not in file_bytes(backend.path)


def test_erasing_a_scope_leaves_no_words_behind(
    opened: tuple[SQLiteBackend, Stores, FixedClock],
) -> None:
    backend, stores, clock = opened
    write_secrets(stores, clock)
    assert PRIVATE_FACT in recalled(stores, clock)
    assert PRIVATE_FACT.encode() in file_bytes(backend.path)

    report = stores.records.erase_scope(SCOPE)
    stores.events.erase_scope(SCOPE)
    stores.journal.erase_scope(SCOPE)

    assert len(report.record_ids) == 2
    assert PRIVATE_FACT.encode() not in file_bytes(backend.path)
    assert KEPT.encode() in file_bytes(backend.path)


def test_tombstones_keep_digests_for_audit_in_the_file(
    opened: tuple[SQLiteBackend, Stores, FixedClock],
) -> None:
    backend, stores, clock = opened
    record_id = write_secrets(stores, clock)
    digests = {v.content_digest for v in stores.records.history(SCOPE, record_id)}

    stores.records.erase(SCOPE, record_id)

    with closing(sqlite3.connect(backend.path)) as conn:
        stored = {
            d
            for (d,) in conn.execute(
                "SELECT content_digest FROM record_versions WHERE record_id = ?", (record_id,)
            )
        }
    assert stored == digests
