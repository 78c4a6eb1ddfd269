"""Whether the recall index of an embedded store can be derived from its records, and is.

The recall index (``cairn.recall.index``) is never the truth: a process builds it from the
heads' rows (``read_index_rows``) and keeps it current by the scope's record generation, which
every record write bumps in its own transaction. What can make it disagree with the records is
therefore in the file, and ``cairn doctor`` reads it here (read-only, ids and counts only):

- a head naming a version that is not there, or whose status or namespace differs from that
  version's: the index filters heads, so it would show or hide the record against its history;
- a scope whose rows the index cannot read (the build would fail, and with it every recall);
- live heads without a stored vector of the embedder that made their version: derived data
  still to come (recall scores them by keywords until re-embedded), reported, not a fault;
- live heads without a vector of the embedder the caller names (the one ``cairn`` embeds
  with): what ``cairn reindex`` would embed, reported, not a fault.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from cairn.models import Scope
from cairn.store.sqlite.index_rows import read_index_rows

_SHOWN = 5  # record ids or scopes named per problem; the count says how many in all

_MISMATCHED = (
    "SELECT h.memory_id, h.actor_id, h.record_id FROM record_heads AS h"
    " LEFT JOIN record_versions AS v USING (memory_id, actor_id, record_id, version)"
    " WHERE v.record_id IS NULL OR v.status <> h.status OR v.namespace <> h.namespace"
    " ORDER BY 1, 2, 3"
)
_EMBEDDED = (
    "SELECT v.embedder_key, count(*), count(x.record_id) FROM record_heads AS h"
    " JOIN record_versions AS v USING (memory_id, actor_id, record_id, version)"
    " LEFT JOIN vectors AS x ON x.memory_id = v.memory_id AND x.actor_id = v.actor_id"
    " AND x.record_id = v.record_id AND x.content_digest = v.content_digest"
    " AND x.embedder_key = v.embedder_key"
    " WHERE h.status = 'active' GROUP BY v.embedder_key ORDER BY 1"
)
_OF_EMBEDDER = (
    "SELECT count(*), count(x.record_id) FROM record_heads AS h"
    " JOIN record_versions AS v USING (memory_id, actor_id, record_id, version)"
    " LEFT JOIN vectors AS x ON x.memory_id = v.memory_id AND x.actor_id = v.actor_id"
    " AND x.record_id = v.record_id AND x.content_digest = v.content_digest"
    " AND x.embedder_key = ?"
    " WHERE h.status = 'active'"
)
_LIVE_SCOPES = (
    "SELECT DISTINCT memory_id, actor_id FROM record_heads WHERE status = 'active' ORDER BY 1, 2"
)


@dataclass(frozen=True)
class IndexHealth:
    """``mismatched``: ``scope/record`` of heads that disagree with their version (the first
    few; ``mismatched_count`` in all); ``unreadable``: scopes whose index rows fail to read,
    with the error's class; ``embedded``: per embedder key, (live heads, those with a vector);
    ``configured``: the embedder key asked about and how many live heads lack its vector."""

    scopes: int = 0
    live_heads: int = 0
    embedded: Mapping[str | None, tuple[int, int]] = field(default_factory=dict)
    mismatched: tuple[str, ...] = ()
    mismatched_count: int = 0
    unreadable: tuple[str, ...] = ()
    configured: tuple[str, int] | None = None

    @property
    def current(self) -> bool:
        """Whether every index built from this file agrees with its records."""
        return not self.mismatched_count and not self.unreadable

    @property
    def without_vector(self) -> int:
        return sum(heads - vectors for heads, vectors in self.embedded.values())


def check_index(conn: sqlite3.Connection, embedder_key: str | None = None) -> IndexHealth:
    """The recall index's health over the store open on ``conn`` (see the module docstring),
    with the live heads lacking a vector of ``embedder_key`` when it is given."""
    mismatched = conn.execute(_MISMATCHED).fetchall()
    embedded = {key: (int(heads), int(vectors)) for key, heads, vectors in conn.execute(_EMBEDDED)}
    scopes = [Scope(memory_id=m, actor_id=a) for m, a in conn.execute(_LIVE_SCOPES)]
    unreadable: list[str] = []
    for scope in scopes:
        try:
            read_index_rows(conn, scope, None)
        except (ValueError, TypeError, KeyError) as exc:  # a row the index cannot parse
            unreadable.append(f"{scope} ({type(exc).__name__})")
    configured = None
    if embedder_key is not None:
        heads, with_vector = conn.execute(_OF_EMBEDDER, (embedder_key,)).fetchone()
        configured = (embedder_key, int(heads) - int(with_vector))
    return IndexHealth(
        scopes=len(scopes),
        live_heads=sum(heads for heads, _ in embedded.values()),
        embedded=embedded,
        mismatched=tuple(f"{m}|{a}/{r}" for m, a, r in mismatched[:_SHOWN]),
        mismatched_count=len(mismatched),
        unreadable=tuple(unreadable),
        configured=configured,
    )
