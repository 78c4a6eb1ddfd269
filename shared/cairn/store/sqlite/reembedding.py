"""More vectors for the live heads of an SQLite store, under another embedder (``VectorWriter``).

A vector row is keyed by the record, the words' digest and the embedder, so a second
embedder's vector sits beside the first and the version row is never touched: re-embedding
is derived data, like the recall index. ``INSERT OR IGNORE`` keeps the first vector of a
(words, embedder) pair, so a rerun after a kill stores only what the killed run had not.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from cairn.changes import Vector
from cairn.models import Scope, VersionRef
from cairn.store.sqlite.codec import encode_vector

# Only a ref that is still the record's active head gets a vector: its digest comes from the
# version row itself, so the vector always describes the words the head holds.
_ADD = (
    "INSERT OR IGNORE INTO vectors (memory_id, actor_id, record_id, content_digest,"
    " embedder_key, dims, vector)"
    " SELECT v.memory_id, v.actor_id, v.record_id, v.content_digest, ?, ?, ?"
    " FROM record_heads AS h JOIN record_versions AS v"
    " USING (memory_id, actor_id, record_id, version)"
    " WHERE h.memory_id = ? AND h.actor_id = ? AND h.record_id = ? AND h.version = ?"
    " AND h.status = 'active'"
)


def add_head_vectors(
    conn: sqlite3.Connection, scope: Scope, vectors: Sequence[tuple[VersionRef, Vector]]
) -> list[VersionRef]:
    """Insert each vector for its ref's words if the ref is a live head and the words hold no
    vector of that embedder yet; the refs whose row was inserted. Call inside a write
    transaction."""
    stored: list[VersionRef] = []
    for ref, vector in vectors:
        embedder = vector.embedder
        cursor = conn.execute(
            _ADD,
            (
                embedder.key,
                embedder.dims,
                encode_vector(vector.values),
                scope.memory_id,
                scope.actor_id,
                ref.record_id,
                ref.version,
            ),
        )
        if cursor.rowcount:
            stored.append(ref)
    return stored
