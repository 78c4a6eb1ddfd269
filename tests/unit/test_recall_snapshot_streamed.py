"""The snapshot built in one pass (``streamed``) and mapped back from its file is, field by
field, the snapshot ``build_snapshot`` builds from the same rows: random scopes as the
exactness property test writes them (``test_recall_index_exact``)."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings

from cairn.recall.index import read_rows
from cairn.recall.index.mapped import mapped_snapshot
from cairn.recall.index.persisted import stamp_of
from cairn.recall.index.snapshot import Snapshot, build_snapshot
from cairn.recall.index.snapshot_file import encode, load
from cairn.recall.index.streamed import build_sections
from cairn.testing import FixedClock, InMemoryBackend
from tests.unit.test_recall_index_exact import EMBEDDER, SCOPE, _records, _write


def assert_same(built: Snapshot, other: Snapshot) -> None:
    size = built.size
    assert other.size == size
    for name in ("record_ids", "contents", "tokens"):
        assert [getattr(other, name)[i] for i in range(size)] == list(getattr(built, name))
    for name in ("lengths", "namespace_codes", "strategy_codes", "confidence", "last_seen"):
        assert np.array_equal(getattr(other, name), getattr(built, name)), name
    assert np.array_equal(other.trusted, built.trusted)
    assert np.array_equal(other.vector_rows, built.vector_rows)
    assert other.matrix.shape == built.matrix.shape
    assert other.matrix.tobytes() == built.matrix.tobytes()  # bit for bit
    assert (other.namespaces, other.strategies) == (built.namespaces, built.strategies)
    assert list(other.postings) == list(built.postings)
    for term, (rows, tf) in built.postings.items():
        assert np.array_equal(other.postings[term][0], rows)
        assert np.array_equal(other.postings[term][1], tf)
    assert set(other.thread_rows) == set(built.thread_rows)
    for thread, members in built.thread_rows.items():
        assert np.array_equal(other.thread_rows[thread].rows, members.rows)
        assert tuple(other.thread_rows[thread].positions) == tuple(members.positions)
        first_seen = other.thread_rows[thread].first_seen_us
        assert first_seen.dtype == members.first_seen_us.dtype
        assert first_seen.tolist() == members.first_seen_us.tolist()
    assert [other.version(i) for i in range(size)] == [built.version(i) for i in range(size)]
    assert [sorted(other.row_threads[i]) for i in range(size)] == [
        sorted(built.row_threads[i]) for i in range(size)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=_records)
def test_the_streamed_and_mapped_snapshot_is_the_built_one(specs: list[dict[str, object]]) -> None:
    clock = FixedClock(datetime(2025, 9, 1, tzinfo=UTC))
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    _write(stores, clock, specs)
    for embedder in (EMBEDDER.identity, None):
        rows = read_rows(stores.records, SCOPE, embedder)
        built = build_snapshot(rows, embedder)
        sections = build_sections(iter(rows), embedder, len(rows) // 2)  # the matrix grows
        assert_same(built, mapped_snapshot(sections, embedder, 0))
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "scope.snapshot"
            stamp = stamp_of(SCOPE, embedder, 7)
            path.write_bytes(b"".join(bytes(part) for part in encode(sections, stamp)))
            mapped = load(path, stamp)
            assert mapped is not None
            assert_same(built, mapped)
