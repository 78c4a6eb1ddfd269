"""Re-embedding: a vector of the embedder recall uses for every live record that lacks one.

Vectors are derived data: each keeps its embedder's identity and recall compares only vectors
of the query's embedder, so a record embedded by another model (or by none) is scored by
keywords, with at most ``RecallPolicy.max_reembed`` such records re-embedded per question and
the vectors thrown away. ``reembed`` stores them instead (``cairn reindex``): it embeds the
pending heads in batches and hands each batch to ``VectorWriter.add_vectors`` in its own
transaction (with a ``re-embedded`` change per vector in the record change feed, so recall
indexes and the link job take those records in), so no version is written, content, trust and
history stay as they were, a kill loses at most the batch in flight, and a rerun embeds only
what is still missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cairn.changes import Vector
from cairn.models import EmbedderId, Scope, VersionRef
from cairn.ports import MAX_PAGE_SIZE, Embedder, RecordStore, VectorWriter

BATCH = 32  # one CPU batch of the local embedder


@dataclass(frozen=True, slots=True)
class Pending:
    """A scope's live heads, and those without a vector of the embedder, as (ref, content)."""

    scope: Scope
    live: int
    refs: tuple[tuple[VersionRef, str], ...]


@dataclass(frozen=True, slots=True)
class Reembedded:
    """How many vectors were stored, and how many embedded were not (the record changed)."""

    stored: int = 0
    skipped: int = 0


def pending(records: RecordStore, scope: Scope, embedder: EmbedderId) -> Pending:
    """Every live head of ``scope`` without a vector of ``embedder``, in record-id order."""
    live = 0
    missing: list[tuple[VersionRef, str]] = []
    cursor: str | None = None
    while True:
        page = records.list_records(scope, limit=MAX_PAGE_SIZE, cursor=cursor)
        live += len(page.items)
        found = records.vectors(scope, [v.ref for v in page.items], embedder)
        missing.extend((v.ref, v.content) for v in page.items if v.ref not in found)
        cursor = page.next_cursor
        if cursor is None:
            return Pending(scope=scope, live=live, refs=tuple(missing))


def reembed(
    writer: VectorWriter,
    work: Pending,
    embedder: Embedder,
    *,
    heard: Callable[[int], None] | None = None,
) -> Reembedded:
    """Embed ``work``'s records batch by batch and store each batch's vectors in one
    transaction; ``heard`` gets the size of each batch once it is stored."""
    stored = skipped = 0
    for start in range(0, len(work.refs), BATCH):
        batch = work.refs[start : start + BATCH]
        rows = embedder.embed([content for _, content in batch])
        vectors = [
            (ref, Vector(embedder=embedder.identity, values=tuple(float(x) for x in row)))
            for (ref, _), row in zip(batch, rows, strict=True)
        ]
        added = writer.add_vectors(work.scope, vectors)
        stored += added
        skipped += len(batch) - added
        if heard is not None:
            heard(len(batch))
    return Reembedded(stored=stored, skipped=skipped)
