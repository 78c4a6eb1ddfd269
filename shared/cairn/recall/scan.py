"""Recall's steps 1-3 as a full scan: every live head read, scored and ranked.

The reference the recall index is held to (``tests/unit/test_recall_index_exact.py``,
``tests/conformance/test_recall_index.py``): any index must return this ranking, or a prefix
of it long enough for dedup and the budget. It is also what a benchmark runs to see what the
index saves.
"""

from __future__ import annotations

from datetime import datetime

from cairn.models import Scope, Trust
from cairn.ports import Embedder, RecordStore
from cairn.recall.candidates import RecordFilter, gather
from cairn.recall.index.shortlist import Search
from cairn.recall.ordering import order
from cairn.recall.query import RecallPolicy, RecallQuery


def scan(
    scope: Scope,
    query: RecallQuery,
    *,
    records: RecordStore,
    embedder: Embedder | None,
    policy: RecallPolicy,
    now: datetime,
    where: RecordFilter | None = None,
) -> Search:
    """The whole ranking of ``scope``'s live heads (those ``where`` accepts) for ``query``,
    read and scored row by row."""
    pool = gather(scope, query, records=records, embedder=embedder, policy=policy, where=where)
    ordered = order(pool, query.text, policy, now)
    return Search(
        ranked=ordered.ranked,
        candidates=len(pool.candidates),
        below_floor=ordered.below_floor,
        unembedded=sum(1 for c in pool.candidates if c.vector is None) if pool.embedded else 0,
        reembedded=pool.reembedded,
        keyword_only=ordered.keyword_only,
        contextual=ordered.contextual,
        any_trusted=any(r.candidate.version.trust is Trust.TRUSTED for r in ordered.ranked),
        weak=ordered.weak,
    )


class ScanningRecallIndex:
    """The ``RecallIndex`` port answered by a full scan of the store on every call."""

    def __init__(self, records: RecordStore) -> None:
        self._records = records

    def search(
        self,
        scope: Scope,
        query: RecallQuery,
        *,
        embedder: Embedder | None,
        policy: RecallPolicy,
        now: datetime,
        where: RecordFilter | None = None,
    ) -> Search:
        return scan(
            scope,
            query,
            records=self._records,
            embedder=embedder,
            policy=policy,
            now=now,
            where=where,
        )
