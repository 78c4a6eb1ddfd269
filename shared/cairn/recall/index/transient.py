"""The recall index's contract (``RecallIndex``) and the uncached index, built afresh for
each recall (``TransientRecallIndex``): the path of a backend without generations, and of an
as-of recall."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from cairn.models import Scope
from cairn.ports import Embedder, RecordStore
from cairn.recall.candidates import RecordFilter
from cairn.recall.index.rows import bulk_reads, read_rows
from cairn.recall.index.shortlist import FIRST_SHORTLIST, Search, search
from cairn.recall.index.snapshot import build_snapshot
from cairn.recall.query import RecallPolicy, RecallQuery


class RecallIndex(Protocol):
    """A derived, rebuildable index of live heads that answers recall's steps 1-3.

    Never the truth: records are. ``search`` returns exactly the ranking a full scan of the
    scope would (``cairn.recall.scan``), or a prefix of it that holds every entry dedup visits
    before it has ``query.top_k`` survivors; a record write committed before the call (by any
    process) is always reflected. ``tests/conformance/test_recall_index.py`` pins the contract.
    """

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
        """Steps 1-3 of recall for ``query`` in ``scope``, as of ``now``, over the live heads
        ``where`` accepts (all of them without one): a filter narrows the collection before
        ranking, so no accepted record is lost behind rejected ones."""
        ...


class TransientRecallIndex:
    """The uncached index: every recall reads the filtered heads and builds its snapshot."""

    def __init__(
        self, records: RecordStore, *, shortlist: int = FIRST_SHORTLIST, bulk: bool | None = None
    ) -> None:
        self._records = records
        self._shortlist = shortlist
        self._bulk = bulk_reads(records) if bulk is None else bulk

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
        identity = embedder.identity if embedder is not None else None
        rows = read_rows(
            self._records,
            scope,
            identity,
            namespace_prefix=query.namespace_prefix,
            as_of=query.as_of,
            bulk=self._bulk,
        )
        snapshot = build_snapshot(rows, identity)
        return search(
            snapshot,
            query,
            embedder=embedder,
            policy=policy,
            now=now,
            shortlist=self._shortlist,
            where=where,
        )
