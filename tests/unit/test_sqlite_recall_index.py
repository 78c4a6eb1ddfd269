"""The embedded recall index on SQLite: another process's write is seen on the next recall, and
the cache stays within its bounds (scopes and bytes), least recently used out first."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.index import EmbeddedRecallIndex, RecallIndex, index_of
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="m1", actor_id="a1")
EMBEDDER = HashingEmbedder(dims=32)
WRITER = textwrap.dedent(
    """
    import sys
    from cairn.changes import Create, NewRecord, Vector
    from cairn.models import Scope, Source, SourceKind
    from cairn.store.sqlite import SQLiteBackend
    from cairn.testing import HashingEmbedder, InMemoryBackend

    embedder = HashingEmbedder(dims=32)
    content = sys.argv[2]
    record = NewRecord(
        namespace="/facts/a1/",
        content=content,
        sources=(Source(kind=SourceKind.USER),),
        vector=Vector(embedder=embedder.identity, values=tuple(embedder.embed([content])[0])),
    )
    with SQLiteBackend(sys.argv[1]) as backend:
        scope = Scope(memory_id="m1", actor_id="a1")
        backend.stores().records.apply(scope, [Create(record=record)])
    """
)


def remember(stores: Stores, content: str, scope: Scope = SCOPE) -> None:
    record = NewRecord(
        namespace=f"/facts/{scope.actor_id}/",
        content=content,
        sources=(Source(kind=SourceKind.USER),),
        vector=Vector(embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0])),
    )
    stores.records.apply(scope, [Create(record=record)])


def recalled(
    stores: Stores, text: str, scope: Scope = SCOPE, index: RecallIndex | None = None
) -> list[str]:
    found = recall(
        scope,
        RecallQuery(text=text),
        stores=stores,
        embedder=EMBEDDER,
        clock=FixedClock(),
        index=index,
    )
    return [entry.version.content for entry in found.entries]


def test_a_write_by_another_process_is_seen_on_the_next_recall(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    with SQLiteBackend(path) as backend:
        stores = backend.stores()
        remember(stores, "Prefers green tea in the morning")
        assert recalled(stores, "sailing boat") == []  # the scope's index is now cached
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        subprocess.run(  # noqa: S603 - our own interpreter, our own script
            [sys.executable, "-c", WRITER, str(path), "Goes sailing on a small boat"],
            check=True,
            env=env,
            timeout=120,
        )
        assert recalled(stores, "sailing boat") == ["Goes sailing on a small boat"]


def test_the_cache_keeps_at_most_its_scopes_least_recently_used_out_first(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "cairn.db") as backend:
        stores = backend.stores()
        scopes = [Scope(memory_id="m1", actor_id=f"a{i}") for i in range(3)]
        for scope in scopes:
            remember(stores, f"Lives in city number {scope.actor_id}", scope)
        index = EmbeddedRecallIndex(stores.records, backend.generations(), max_scopes=2)
        for scope in (scopes[0], scopes[1], scopes[0], scopes[2]):
            assert recalled(stores, "city", scope, index) == [
                f"Lives in city number {scope.actor_id}"
            ]
        assert [scope for scope, _ in index.held_scopes()] == [scopes[0], scopes[2]]
        assert index.held_bytes > 0


def test_a_scope_larger_than_the_byte_budget_is_answered_and_not_kept(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "cairn.db") as backend:
        stores = backend.stores()
        remember(stores, "Prefers green tea in the morning")
        index = EmbeddedRecallIndex(stores.records, backend.generations(), max_bytes=1)
        assert recalled(stores, "green tea", SCOPE, index) == ["Prefers green tea in the morning"]
        assert index.held_scopes() == ()
        assert index.held_bytes == 0


def test_every_stores_bundle_of_a_backend_shares_one_index(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "cairn.db") as backend:
        remember(backend.stores(), "Prefers green tea in the morning")
        assert index_of(backend.stores()) is index_of(backend.stores())
        for _ in range(2):  # bundles made and dropped between recalls
            assert recalled(backend.stores(), "green tea") == ["Prefers green tea in the morning"]
    memory = InMemoryBackend()
    remember(memory.stores(), "Prefers green tea in the morning")
    assert index_of(memory.stores()) is index_of(memory.stores())
    assert recalled(memory.stores(), "green tea") == ["Prefers green tea in the morning"]
