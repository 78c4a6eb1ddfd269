"""Dedup resumed over a ranking that grows (the recall index's widening shortlist) gives, at
every step, exactly what deduplicating the whole ranking afresh gives."""

from __future__ import annotations

import bisect
from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord, Vector
from cairn.models import Scope, Source, SourceKind
from cairn.recall import RecallPolicy, RecallQuery, Recollection, recall
from cairn.recall.candidates import Candidate
from cairn.recall.cosines import unit
from cairn.recall.dedup import Deduplication, deduplicate
from cairn.recall.index import EmbeddedRecallIndex, RecallIndex, TransientRecallIndex
from cairn.recall.keywords import tokenize
from cairn.recall.ranking import Ranked
from cairn.recall.scan import ScanningRecallIndex
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend
from cairn.versioning import plan_writes

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="a1")
WORDS = ("tea", "coffee", "green", "black", "morning", "likes", "prefers")
# Few directions, so cosines at and around the thresholds come up often.
DIRECTIONS = ((1.0, 0.0, 0.0), (0.95, 0.3, 0.0), (0.8, 0.6, 0.0), (0.0, 1.0, 0.0), (0, 0, 1.0))


def _ranked(
    index: int, words: list[str], direction: int | None, score: float, user: bool
) -> Ranked:
    content = " ".join(words)
    kind = SourceKind.USER if user else SourceKind.TOOL
    record = NewRecord(
        record_id=f"mem-{index:036d}",
        namespace="/facts/a1/",
        content=content,
        sources=(Source(kind=kind),),
    )
    version = plan_writes(SCOPE, [Create(record=record)], {}, NOW)[0].version
    vector = None if direction is None else unit(np.array(DIRECTIONS[direction]))
    candidate = Candidate(
        version=version, tokens=tuple(tokenize(content)), keyword=1.0, vector=vector
    )
    return Ranked(candidate=candidate, relevance=score, score=score)


def _key(item: Ranked) -> tuple[float, float, str]:
    return (-item.score, -item.relevance, item.candidate.record_id)


entries = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        st.none() | st.integers(0, len(DIRECTIONS) - 1),
        st.sampled_from((0.2, 0.4, 0.5, 0.6, 0.8, 0.9)),
        st.booleans(),
    ),
    min_size=1,
    max_size=24,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=entries,
    cuts=st.lists(st.integers(1, 8), min_size=1, max_size=5),
    limit=st.integers(1, 6),
    strict=st.booleans(),
)
def test_resumed_dedup_is_dedup_of_the_whole_ranking(
    entries: list[tuple[list[str], int | None, float, bool]],
    cuts: list[int],
    limit: int,
    strict: bool,
) -> None:
    items = [_ranked(i, *entry) for i, entry in enumerate(entries)]
    policy = RecallPolicy(dedup_cosine=0.9 if strict else 0.75)
    any_trusted = any(item.candidate.trusted for item in items)
    resumed = Deduplication(policy, limit, any_trusted=any_trusted)
    ranked: list[Ranked] = []
    start = 0
    for cut in [*cuts, len(items)]:
        added = sorted(items[start : start + cut], key=_key)
        start += cut
        if not added:
            continue
        unchanged = bisect.bisect_left(ranked, _key(added[0]), key=_key)
        ranked = sorted([*ranked, *added], key=_key)
        got = resumed.over(ranked, unchanged=unchanged)
        want = deduplicate(ranked, policy, limit, any_trusted=any_trusted)
        assert [id(r) for r in got.kept] == [id(r) for r in want.kept]
        assert got.dropped == want.dropped
        # What the visit read: up to the last survivor once ``limit`` are kept, else all.
        if len(got.kept) == limit:
            assert ranked[resumed.visited - 1] is got.kept[-1]
        else:
            assert resumed.visited == len(ranked)


# The index's widening: rows of one clock hour share a recency bound, so a later widening of
# a one-row shortlist brings in rows that rank above rows already ranked, and dedup must visit
# the ranking again from the first of them (repeats of three texts, so it drops rows as it goes).
INDEX_SCOPE = Scope(memory_id="mem-resume", actor_id="user-1")
EMBEDDER = HashingEmbedder(dims=32)
HOUR = datetime(2025, 8, 20, 9, tzinfo=UTC)


def _index_recall(backend: InMemoryBackend, index: RecallIndex, top_k: int) -> Recollection:
    return recall(
        INDEX_SCOPE,
        RecallQuery(text="tea kyoto", top_k=top_k),
        stores=backend.stores(),
        embedder=EMBEDDER,
        clock=FixedClock(HOUR + timedelta(minutes=58)),
        policy=RecallPolicy(recency_weight=0.3, context_weight=0.0),
        journal=False,
        index=index,
    )


def test_a_widening_shortlist_deduplicates_as_the_scan_does() -> None:
    backend = InMemoryBackend(FixedClock(HOUR))
    stores = backend.stores()
    for i in range(15):
        content = f"tea in kyoto, note {i % 3}"
        record = NewRecord(
            namespace=f"/facts/{INDEX_SCOPE.actor_id}/",
            content=content,
            sources=(Source(kind=SourceKind.USER, session_id=f"s-{i}"),),
            seen_at=HOUR + timedelta(minutes=(i * 7) % 55),
            vector=Vector(embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0])),
        )
        stores.records.apply(INDEX_SCOPE, [Create(record=record)])
    for top_k in (1, 2, 3):
        scanned = _index_recall(backend, ScanningRecallIndex(stores.records), top_k)
        assert top_k == 1 or scanned.counts.deduplicated > 0  # repeats dropped on the way
        for index in (
            TransientRecallIndex(stores.records, shortlist=1),
            EmbeddedRecallIndex(stores.records, backend.generations(), shortlist=1),
        ):
            found = _index_recall(backend, index, top_k)
            assert found.block == scanned.block
            assert found.counts == scanned.counts
