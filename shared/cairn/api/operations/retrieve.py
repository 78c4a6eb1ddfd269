"""Reading records by namespace: ListMemoryRecords and RetrieveMemoryRecords.

Both read under a namespace prefix on segment boundaries (``namespace`` keeps the pre-redesign
prefix behaviour AgentCore grants during its grace period, and ``namespacePath`` is a
hierarchical prefix, so the two read alike here), across every actor scope holding records
there, never into an actor whose id the prefix stops inside of (``/facts/u1/`` reads none of
actor ``u1/x``'s records); a call with neither (both are optional in the model) reads the
whole memory.

Retrieve searches each such scope's recall index once (ranking and paraphrase dedup: recall's
steps 1-4, no block rendered), read as recall reads it (``cairn.recall.read_now``: a record with
a quarantined source counts as untrusted, so the untrusted share holds, and the records the list
does not cover are searched once more), and merges by relevance. It answers as the service does:
the ``topK`` most relevant records whatever their similarity (the service ranks and returns the
top K; a relevance bar is the client's, as the SDK's Strands ``RetrievalConfig.relevance_score``
applies one on ``score``), so the API's policy sets recall's floors to 0; and ``score`` is the
record's cosine similarity to the query, the service's documented score, so a client's bar means
what it means there (a record without a vector scores its keyword relevance). The answer is in
score order. ``memoryStrategyId`` and ``metadataFilters`` narrow each scope's heads before
ranking (``RecordFilter``), so a match is never lost behind better-ranked records the filter
rejects. Every scope searched gets one journal entry (the audit of what was asked where),
pinning exactly the records it contributed to the answer, none if it contributed none, and
naming those it showed quarantined (``QUARANTINED_FILTER``) so replay renders them so; no block
is rendered for a scope and thrown away.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from cairn.api.context import ApiContext, scope_of
from cairn.api.filters import check_filters, matches
from cairn.api.guard import touches_record
from cairn.api.operations.assembled_pages import DEFAULT_MAX_RESULTS, page_of, token_position
from cairn.api.operations.placement import actors_under, namespace_prefix
from cairn.api.record_codec import expired, record_to_wire, wire_metadata, wire_strategy_id
from cairn.memories import MemoryConfig
from cairn.models import RecordVersion, Scope
from cairn.ports import MAX_PAGE_SIZE
from cairn.recall import RecallPolicy, RecallQuery
from cairn.recall.budget import block_entry
from cairn.recall.candidates import RecordFilter
from cairn.recall.dedup import deduplicate
from cairn.recall.index import RecallIndex, Search, index_of
from cairn.recall.journal import journal_entry
from cairn.recall.query import MAX_TOP_K
from cairn.recall.ranking import Ranked
from cairn.recall.read_now import marked_quarantined, read_now
from cairn.recall.render import render_block

# The API returns whole records, so the rendered block's budget must never be what limits
# the selection: 100 entries clamped to 480 bytes each stay far under 1,000,000 bytes. The
# service returns the top K whatever their similarity, so neither floor drops a record (a row
# whose cosine is below 0, opposite in meaning, still falls below both).
API_POLICY = RecallPolicy(max_block_bytes=1_000_000, relevance_floor=0.0, weak_floor=0.0)
DEFAULT_TOP_K = 10


def _wanted(version: RecordVersion, strategy_id: str | None, filters: list[Any]) -> bool:
    if strategy_id is not None and wire_strategy_id(version) != strategy_id:
        return False
    return matches(wire_metadata(version), filters)


def _record_filter(
    strategy_id: str | None, filters: list[Any], expiring_at: datetime | None
) -> RecordFilter | None:
    """What narrows a search: the strategy id, the metadata filters and, for a memory whose
    records may expire (``expiring_at`` is then now), their expiry."""
    if strategy_id is None and not filters and expiring_at is None:
        return None

    def where(version: RecordVersion) -> bool:
        if expiring_at is not None and expired(version, expiring_at):
            return False
        return _wanted(version, strategy_id, filters)

    return where


def _principal_filter(
    ctx: ApiContext, actor: str, wanted: RecordFilter | None
) -> RecordFilter | None:
    """``wanted``, narrowed to the records of ``actor`` the request's principal may touch (all
    of them when its actor is granted), so ranking never sees another principal's records."""
    if ctx.principal is None or ctx.principal.may_touch_actor(actor):
        return wanted

    def where(version: RecordVersion) -> bool:
        return touches_record(ctx, actor, version.namespace) and (wanted is None or wanted(version))

    return where


def score_of(item: Ranked) -> float:
    """The wire ``score``: the cosine of the record and the query, clipped to [0, 1] (its
    keyword relevance when it has no vector in the query's space)."""
    cosine = item.candidate.cosine
    if cosine is None:
        return item.relevance
    return min(1.0, max(0.0, cosine))


def _records_under(
    ctx: ApiContext, memory: MemoryConfig, prefix: str | None
) -> Iterator[tuple[str, RecordVersion]]:
    """Live records under ``prefix`` (the whole memory when None), by (actor, record id), read
    page by page."""
    for actor in actors_under(ctx, memory, prefix):
        scope = scope_of(memory, actor)
        cursor: str | None = None
        while True:
            page = ctx.records.list_records(
                scope, namespace_prefix=prefix, limit=MAX_PAGE_SIZE, cursor=cursor
            )
            for version in page.items:
                if touches_record(ctx, actor, version.namespace):
                    yield actor, version
            cursor = page.next_cursor
            if cursor is None:
                break


_Found = tuple[Scope, Ranked]


def _search(
    ctx: ApiContext,
    memory: MemoryConfig,
    prefix: str | None,
    query: RecallQuery,
    strategy_id: str | None,
    filters: list[Any],
) -> tuple[list[Scope], list[_Found]]:
    """The scopes searched, each once, and the survivors of dedup merged by relevance."""
    index = index_of(ctx.stores)
    now = ctx.clock.now()
    found: list[_Found] = []
    searched: list[Scope] = []
    wanted = _record_filter(strategy_id, filters, now if memory.records_expire else None)
    for actor in actors_under(ctx, memory, prefix):
        scope = scope_of(memory, actor)
        where = _principal_filter(ctx, actor, wanted)
        if ctx.principal is None or ctx.principal.may_touch_actor(actor):
            # Journaled even when it contributes nothing; another actor's scope, searched only
            # for records under a granted namespace, is journaled only if it contributes.
            searched.append(scope)
        found += [(scope, item) for item in _read(ctx, index, scope, query, now, where)]
    found.sort(key=lambda row: (-row[1].relevance, row[1].candidate.version.record_id))
    return searched, found


def _read(
    ctx: ApiContext,
    index: RecallIndex,
    scope: Scope,
    query: RecallQuery,
    now: datetime,
    where: RecordFilter | None,
) -> Sequence[Ranked]:
    """``scope``'s survivors of dedup for ``query``, as recall reads them: through the memory's
    quarantine list (``cairn.recall.read_now``), so a quarantined record counts as untrusted."""

    def search(narrowed: RecordFilter | None) -> Search:
        return index.search(
            scope, query, embedder=ctx.embedder, policy=API_POLICY, now=now, where=narrowed
        )

    found = search(where)
    ranked, any_trusted = read_now(ctx.stores, scope, found, search, where)
    if found.deduplicated is not None and ranked is found.ranked:
        return found.deduplicated.kept
    return deduplicate(ranked, API_POLICY, limit=query.top_k, any_trusted=any_trusted).kept


def _journal(
    ctx: ApiContext, query: RecallQuery, searched: list[Scope], answered: list[_Found]
) -> None:
    """One journal entry per scope searched, pinning exactly what it contributed."""
    by_scope: dict[Scope, list[Ranked]] = {scope: [] for scope in searched}
    for scope, item in answered:
        by_scope.setdefault(scope, []).append(item)
    for scope, items in by_scope.items():
        entries = [block_entry(i.candidate.version, API_POLICY.max_entry_bytes) for i in items]
        entry = journal_entry(
            scope,
            query,
            embedder=ctx.embedder.identity if ctx.embedder is not None else None,
            policy=API_POLICY,
            selected=items,
            block=render_block(entries),
            now=ctx.clock.now(),
        )
        ctx.stores.journal.put(marked_quarantined(entry, items))


def list_memory_records(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    prefix = namespace_prefix(params)
    filters = params.get("metadataFilters") or []
    check_filters(filters, "metadataFilters")
    strategy_id = params.get("memoryStrategyId")
    now = ctx.clock.now()
    found = [
        (actor, version)
        for actor, version in _records_under(ctx, memory, prefix)
        if _wanted(version, strategy_id, filters) and not expired(version, now)
    ]
    query = {"prefix": prefix, "strategy": strategy_id, "filters": filters}
    page, token = page_of(
        found,
        scope_key=f"memory:{memory.memory_id}",
        query=query,
        position=lambda row: [row[0], row[1].record_id],
        limit=params.get("maxResults") or DEFAULT_MAX_RESULTS,
        token=params.get("nextToken"),
    )
    answer: dict[str, Any] = {"memoryRecordSummaries": [record_to_wire(v) for _, v in page]}
    if token is not None:
        answer["nextToken"] = token
    return answer


def retrieve_memory_records(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    prefix = namespace_prefix(params)
    criteria = params["searchCriteria"]
    filters = criteria.get("metadataFilters") or []
    check_filters(filters, "searchCriteria.metadataFilters")
    strategy_id = criteria.get("memoryStrategyId")
    top_k = criteria.get("topK") or DEFAULT_TOP_K
    paging_query = {"prefix": prefix, "criteria": criteria}
    token = params.get("nextToken")
    if token is not None:
        # Refused before any recall runs: a rejected request journals nothing (issue 14, 5).
        token_position(f"memory:{memory.memory_id}", paging_query, token)
    query = RecallQuery(
        text=criteria["searchQuery"],
        namespace_prefix=prefix,
        top_k=top_k,
    )
    searched, found = _search(ctx, memory, prefix, query, strategy_id, filters)
    selected = found[:top_k]
    _journal(ctx, query, searched, selected)
    # The service answers in score order; the selection above is cairn's ranking.
    ranked = sorted(selected, key=lambda row: -score_of(row[1]))
    page, next_token = page_of(
        [(index, row) for index, row in enumerate(ranked)],
        scope_key=f"memory:{memory.memory_id}",
        query=paging_query,
        position=lambda item: f"{item[0]:04d}",
        limit=params.get("maxResults") or MAX_TOP_K,
        token=token,
    )
    answer: dict[str, Any] = {
        "memoryRecordSummaries": [
            record_to_wire(row[1].candidate.version, score=score_of(row[1])) for _, row in page
        ]
    }
    if next_token is not None:
        answer["nextToken"] = next_token
    return answer
