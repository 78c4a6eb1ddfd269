"""A store whose records were embedded by the test hashing embedder, not by the ONNX model:
what ``cairn reindex`` finds after the embedder changed. Real SQLite, written through the
record store as ``cairn remember`` writes (user-sourced facts)."""

from __future__ import annotations

from pathlib import Path

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import SystemClock
from cairn.local.store import default_namespace
from cairn.models import Scope, Source, SourceKind
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder

SCOPE = Scope(memory_id="default", actor_id="u1")
TEA = "I prefer green tea in the morning"


def fillers(count: int) -> list[str]:
    """Facts that share the words "the user" with the question and answer none of it."""
    return [
        f"The user filed ticket {i} about the office printer on floor {i % 7}" for i in range(count)
    ]


def write_hashed_store(path: Path, contents: list[str]) -> None:
    """One record per content, each with a hashing-embedder vector, 16 to an apply (the most
    one apply takes)."""
    embedder = HashingEmbedder()
    rows = embedder.embed(contents)
    namespace = default_namespace("fact", SCOPE.actor_id)
    changes = [
        Create(
            record=NewRecord(
                namespace=namespace,
                category="fact",
                content=content,
                sources=(Source(kind=SourceKind.USER),),
                vector=Vector(embedder=embedder.identity, values=tuple(float(x) for x in row)),
            )
        )
        for content, row in zip(contents, rows, strict=True)
    ]
    backend = SQLiteBackend(path, SystemClock())
    try:
        records = backend.stores().records
        for start in range(0, len(changes), 16):
            records.apply(SCOPE, changes[start : start + 16])
    finally:
        backend.close()
