"""The recall index ranks exactly as the scan: random stores, queries, filters and policies.

Each example writes a random scope (contents drawn from a small vocabulary, so keywords match,
contents repeat and paraphrases collide; some records without vectors, some retracted, some
revised, sessions told a minute apart so context expansion has threads, some distilled from a
rollout so expansion must pass them over; queries may share no word with any record, so the
weak fallback fires; some carry metadata and the query may draw a record filter, as
RetrieveMemoryRecords' metadata filters narrow it), then recalls through
the scan (``ScanningRecallIndex``), the index built afresh (``TransientRecallIndex``), the
cached index (``EmbeddedRecallIndex``), and the cached index with a folder of persisted
snapshots (built, written, mapped back; then a fresh index that maps the file without reading
a row), and requires the same block, the same selection with the same scores, and the same
counts from all of them.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.changes import (
    Create,
    FoldIn,
    NewRecord,
    RecordPatch,
    Retract,
    Revise,
    Supersede,
    Vector,
)
from cairn.models import Edge, EdgeKind, RecordVersion, Scope, Source, SourceKind
from cairn.ports import Stores, VectorWriter
from cairn.recall import RecallPolicy, RecallQuery, Recollection, recall
from cairn.recall.candidates import RecordFilter
from cairn.recall.index import EmbeddedRecallIndex, RecallIndex, TransientRecallIndex
from cairn.recall.render import WEAK_LINE
from cairn.recall.scan import ScanningRecallIndex
from cairn.store.snapshot_folder import SnapshotFolder
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="mem-index", actor_id="user-1")
WORDS = ("tea", "coffee", "lisbon", "kyoto", "sister", "dog", "chess", "running", "ana", "may")
NAMESPACES = (f"/facts/{SCOPE.actor_id}/", f"/preferences/{SCOPE.actor_id}/", "/shared/")
# Query words no record holds: a query of these alone shares no term, so when no cosine
# reaches the floor the weak fallback decides.
UNSHARED = ("violin", "harbour")
# Capitalised query words many rows hold: the subject rewrite (recall.subject) leaves them
# out of the embedded query, over the same frequencies in the scan and in every index.
SUBJECTS = ("Ana", "Kyoto's", "the User")
# Words that make a query ask for several things (recall.question): fewer hits lend context.
SEVERAL = ("how many", "both")
STARTED = datetime(2025, 5, 1, tzinfo=UTC)
EMBEDDER = HashingEmbedder(dims=32)
TOPICS = ("drinks", "travel")


def _topic(wanted: str) -> RecordFilter:
    def where(version: RecordVersion) -> bool:
        return version.metadata.get("topic") == wanted

    return where


def _has_topic(version: RecordVersion) -> bool:
    return "topic" in version.metadata


def _no_topic(version: RecordVersion) -> bool:
    return "topic" not in version.metadata


# A record filter decides from the version alone; these are the shapes metadata filters take
# (EQUALS_TO, EXISTS, NOT_EXISTS), and a filter that accepts nothing.
FILTERS: dict[str, RecordFilter | None] = {
    "none": None,
    "drinks": _topic("drinks"),
    "travel": _topic("travel"),
    "has-topic": _has_topic,
    "no-topic": _no_topic,
    "nothing": lambda version: False,
}

_records = st.lists(
    st.fixed_dictionaries(
        {
            "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
            "namespace": st.sampled_from(NAMESPACES),
            "strategy": st.sampled_from(("semantic", "custom")),
            "confidence": st.sampled_from((0.3, 0.5, 0.9, 1.0)),
            # Half told within two hours, so context expansion finds neighbours in its window.
            "minutes": st.one_of(st.integers(0, 120), st.integers(0, 60 * 24 * 90)),
            "session": st.sampled_from(("s-1", "s-2", None)),
            "rollout": st.sampled_from((None, None, "r-1")),
            "kind": st.sampled_from((SourceKind.USER, SourceKind.MODEL)),
            "vector": st.booleans(),
            "entities": st.lists(st.sampled_from(("Ana", "Kyoto")), max_size=1),
            "part_of": st.booleans(),
            "fate": st.sampled_from(("keep", "keep", "keep", "retract", "revise")),
            "topic": st.sampled_from((None, *TOPICS)),
        }
    ),
    min_size=8,
    max_size=40,
)

_policies = st.fixed_dictionaries(
    {
        "relevance_floor": st.sampled_from((0.0, 0.1, 0.3, 0.6, 0.95)),
        "weak_floor": st.sampled_from((0.0, 0.1, 0.2, 0.5)),
        "keyword_scale": st.sampled_from(("best", "query")),
        "keyword_floor": st.sampled_from((0.0, 0.1, 0.5)),
        "fusion": st.sampled_from(("blend", "rrf")),
        "keyword_weight": st.sampled_from((0.0, 0.3, 1.0)),
        "context_weight": st.sampled_from((0.0, 0.5, 0.9)),
        "context_span": st.integers(1, 3),
        "context_hits": st.integers(1, 4),
        "list_context_hits": st.integers(1, 4),
        "entity_weight": st.sampled_from((0.0, 0.2)),
        "temporal_weight": st.sampled_from((0.0, 0.2)),
        "recency_weight": st.sampled_from((0.0, 0.1, 0.3)),
        "max_reembed": st.sampled_from((0, 1, 3, 32)),
        "dedup_cosine": st.sampled_from((0.5, 0.9, 1.0)),
        "dedup_jaccard": st.sampled_from((0.3, 0.8)),
        "max_block_bytes": st.sampled_from((400, 900, 4096)),
        "subject_share": st.sampled_from((0.0, 0.1, 0.5)),
        "confident_cosine": st.sampled_from((0.0, 0.5, 0.9)),
        "confident_margin": st.sampled_from((0.0, 0.1, 0.3)),
        "confident_keyword": st.sampled_from((0.0, 0.5, 1.01)),
    }
)

_queries = st.fixed_dictionaries(
    {
        "words": st.lists(
            st.sampled_from((*WORDS, *UNSHARED, *SUBJECTS, *SEVERAL, "in May 2025", "the")),
            min_size=1,
            max_size=4,
        ),
        "namespace_prefix": st.sampled_from((None, NAMESPACES[0], "/facts/", "/")),
        "strategy": st.sampled_from((None, None, "semantic")),
        "top_k": st.sampled_from((1, 1, 2, 3, 5, 10)),
        "embedded": st.booleans(),
        "where": st.sampled_from(tuple(FILTERS)),
    }
)


def _record_of(spec: dict[str, object]) -> NewRecord:
    words = list(spec["words"])  # type: ignore[call-overload]
    content = " ".join(words)
    seen = STARTED + timedelta(minutes=int(spec["minutes"]))  # type: ignore[call-overload]
    vector = None
    if spec["vector"]:
        vector = Vector(embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0]))
    edges = (Edge(kind=EdgeKind.PART_OF, target="trip"),) if spec["part_of"] else ()
    return NewRecord(
        namespace=str(spec["namespace"]),
        strategy=str(spec["strategy"]),
        content=content,
        confidence=float(spec["confidence"]),  # type: ignore[arg-type]
        entities=tuple(spec["entities"]),  # type: ignore[arg-type]
        edges=edges,
        sources=(
            Source(
                kind=spec["kind"],  # type: ignore[arg-type]
                session_id=spec["session"],  # type: ignore[arg-type]
                rollout_id=spec["rollout"],  # type: ignore[arg-type]
            ),
        ),
        seen_at=seen,
        vector=vector,
        metadata={"topic": str(spec["topic"])} if spec.get("topic") else {},
    )


def _write(stores: Stores, clock: FixedClock, specs: list[dict[str, object]]) -> None:
    ids = []
    for spec in specs:
        words = list(spec["words"])  # type: ignore[call-overload]
        record = _record_of(spec)
        (written,) = stores.records.apply(SCOPE, [Create(record=record)])
        ids.append((written.record_id, spec["fate"], words))
    for record_id, fate, words in ids:
        if fate == "retract":
            stores.records.apply(SCOPE, [Retract(record_id=record_id)])
        elif fate == "revise":
            patch = RecordPatch(content=" ".join(reversed(words)) + " again")
            stores.records.apply(SCOPE, [Revise(record_id=record_id, patch=patch)])
    clock.advance(seconds=60)


def _recall(
    stores: Stores,
    index: RecallIndex,
    query: RecallQuery,
    policy: RecallPolicy,
    embedded: bool,
    clock: FixedClock,
    where: RecordFilter | None = None,
) -> Recollection:
    embedder = EMBEDDER if embedded else None
    return recall(
        SCOPE,
        query,
        stores=stores,
        embedder=embedder,
        clock=clock,
        policy=policy,
        journal=False,
        index=index,
        where=where,
    )


def _seen(found: Recollection) -> tuple[object, ...]:
    entries = tuple(
        (e.version.record_id, e.version.version, e.score, e.relevance, e.cosine, e.keyword)
        for e in found.entries
    )
    return found.block, entries, found.counts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=_records, knobs=_policies, asked=_queries)
def test_the_index_returns_exactly_what_the_scan_returns(
    specs: list[dict[str, object]], knobs: dict[str, object], asked: dict[str, object]
) -> None:
    clock = FixedClock(datetime(2025, 9, 1, tzinfo=UTC))
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    _write(stores, clock, specs)
    policy = RecallPolicy(**knobs)  # type: ignore[arg-type]
    query = RecallQuery(
        text=" ".join(asked["words"]),  # type: ignore[call-overload]
        namespace_prefix=asked["namespace_prefix"],
        strategy=asked["strategy"],
        top_k=asked["top_k"],
    )
    embedded = bool(asked["embedded"])
    where = FILTERS[str(asked["where"])]
    # A shortlist of one row: every widening step is exercised on scopes this small.
    cached = EmbeddedRecallIndex(stores.records, backend.generations(), shortlist=1)
    scanned = _recall(
        stores, ScanningRecallIndex(stores.records), query, policy, embedded, clock, where
    )
    expected = _seen(scanned)
    if where is not None:
        assert all(where(entry.version) for entry in scanned.entries)
    transient = TransientRecallIndex(stores.records, shortlist=1)
    assert _seen(_recall(stores, transient, query, policy, embedded, clock, where)) == expected
    assert _seen(_recall(stores, cached, query, policy, embedded, clock, where)) == expected
    # Asked again, the cached snapshot answers, and answers the same.
    assert _seen(_recall(stores, cached, query, policy, embedded, clock, where)) == expected
    with tempfile.TemporaryDirectory() as folder:
        for attempt in ("built, written and mapped back", "mapped from the file"):
            persisted = EmbeddedRecallIndex(
                stores.records,
                backend.generations(),
                shortlist=1,
                snapshots=SnapshotFolder(Path(folder)),
            )
            found = _recall(stores, persisted, query, policy, embedded, clock, where)
            assert _seen(found) == expected, attempt
            assert persisted.persisted is not None
            counts = (persisted.persisted.published, persisted.persisted.mapped)
            assert counts == ((1, 0) if attempt.startswith("built") else (0, 1)), attempt


def _scope_of_equals(stores: Stores, clock: FixedClock, count: int) -> None:
    """``count`` records saying the same words in different sessions, confirmed on different
    days: relevance ties, so only recency (and then record id) can order them."""
    for i in range(count):
        record = NewRecord(
            namespace=NAMESPACES[0],
            content=f"tea in kyoto with ana number {i}",
            sources=(Source(kind=SourceKind.USER, session_id=f"s-{i}"),),
            seen_at=STARTED + timedelta(days=(i * 7) % 60),
            vector=Vector(
                embedder=EMBEDDER.identity,
                values=tuple(EMBEDDER.embed(["tea in kyoto with ana"])[0]),
            ),
        )
        stores.records.apply(SCOPE, [Create(record=record)])
    clock.advance(seconds=60)


def test_a_record_left_out_of_the_shortlist_never_outranks_on_recency() -> None:
    clock = FixedClock(datetime(2025, 9, 1, tzinfo=UTC))
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    _scope_of_equals(stores, clock, 12)
    policy = RecallPolicy(recency_weight=0.3, context_weight=0.0, dedup_cosine=1.0)
    for top_k in (1, 2, 3):
        query = RecallQuery(text="tea kyoto", top_k=top_k)
        scanned = _recall(stores, ScanningRecallIndex(stores.records), query, policy, True, clock)
        index = TransientRecallIndex(stores.records, shortlist=1)
        assert _seen(_recall(stores, index, query, policy, True, clock)) == _seen(scanned)
        newest = max(range(12), key=lambda i: ((i * 7) % 60, -i))
        assert scanned.entries[0].version.content.endswith(f"number {newest}")


def _same_from_every_index(
    stores: Stores, backend: InMemoryBackend, query: RecallQuery, policy: RecallPolicy
) -> Recollection:
    clock = FixedClock(datetime(2025, 9, 1, tzinfo=UTC))
    scanned = _recall(stores, ScanningRecallIndex(stores.records), query, policy, True, clock)
    for index in (
        TransientRecallIndex(stores.records, shortlist=1),
        EmbeddedRecallIndex(stores.records, backend.generations(), shortlist=1),
    ):
        assert _seen(_recall(stores, index, query, policy, True, clock)) == _seen(scanned)
    return scanned


def test_the_index_falls_back_to_weak_matches_exactly_as_the_scan() -> None:
    clock = FixedClock(datetime(2025, 9, 1, tzinfo=UTC))
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    specs = [
        {
            "words": [WORDS[i % len(WORDS)], WORDS[(i * 3 + 1) % len(WORDS)]],
            "namespace": NAMESPACES[0],
            "strategy": "semantic",
            "confidence": 0.9,
            "minutes": i,
            "session": "s-1",
            "rollout": "r-1" if i % 3 == 0 else None,
            "kind": SourceKind.USER,
            "vector": i % 4 != 0,
            "entities": [],
            "part_of": False,
            "fate": "keep",
        }
        for i in range(16)
    ]
    _write(stores, clock, specs)
    query = RecallQuery(text="violin harbour", top_k=5)
    for scale in ("best", "query"):
        policy = RecallPolicy(relevance_floor=0.99, weak_floor=0.0, keyword_scale=scale)
        found = _same_from_every_index(stores, backend, query, policy)
        assert found.counts.weak
        assert found.counts.used_keyword_fallback
        assert WEAK_LINE in found.block.splitlines()
        assert found.entries
        # Nothing is weak when the bar is out of reach: the block is empty, not labelled.
        none = _same_from_every_index(
            stores, backend, query, RecallPolicy(relevance_floor=0.99, weak_floor=1.0)
        )
        assert not none.counts.weak
        assert not none.entries


_spec = _records.map(lambda specs: specs[0])
# Writes between recalls: a new record, or one of the scope's live records (picked by a
# number, modulo how many there are) revised, folded in, superseded, retracted, erased or
# given a vector by re-embedding (which writes no version and no change in the feed).
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("create"), _spec),
        st.tuples(
            st.sampled_from(("revise", "fold_in", "supersede", "retract", "erase", "reembed")),
            st.integers(0, 1000),
            _spec,
        ),
    ),
    min_size=1,
    max_size=6,
)


def _step(stores: Stores, clock: FixedClock, step: tuple[object, ...]) -> str:
    """Apply one write: "erased", "written", or "none" (nothing to write it to)."""
    kind, *rest = step
    if kind == "create":
        stores.records.apply(SCOPE, [Create(record=_record_of(rest[0]))])  # type: ignore[arg-type]
        return "written"
    live = [v for v in stores.records.list_records(SCOPE, limit=500).items if v.live]
    if not live:
        return "none"
    target = live[int(rest[0]) % len(live)]  # type: ignore[call-overload]
    rid = target.record_id
    if kind == "erase":
        stores.records.erase(SCOPE, rid)
        return "erased"
    if kind == "reembed":  # stores nothing (and moves nothing) for a head that has its vector
        values = tuple(EMBEDDER.embed([target.content])[0])
        writer = cast(VectorWriter, stores.records)
        vector = Vector(embedder=EMBEDDER.identity, values=values)
        return "written" if writer.add_vectors(SCOPE, [(target.ref, vector)]) else "none"
    change: object
    if kind == "revise":
        change = Revise(record_id=rid, patch=RecordPatch(content=target.content + " chess ana"))
    elif kind == "fold_in":
        change = FoldIn(record_id=rid, seen_at=clock.now())
    elif kind == "supersede":
        change = Supersede(record_id=rid, replacement=_record_of(rest[1]))  # type: ignore[arg-type]
    else:
        change = Retract(record_id=rid)
    stores.records.apply(SCOPE, [change])  # type: ignore[list-item]
    return "written"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=_records, steps=_steps, knobs=_policies, asked=_queries)
def test_an_index_caught_up_by_its_delta_returns_exactly_what_the_scan_returns(
    specs: list[dict[str, object]],
    steps: list[tuple[object, ...]],
    knobs: dict[str, object],
    asked: dict[str, object],
) -> None:
    clock = FixedClock(datetime(2025, 9, 1, tzinfo=UTC))
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    _write(stores, clock, specs)
    policy = RecallPolicy(**knobs)  # type: ignore[arg-type]
    query = RecallQuery(
        text=" ".join(asked["words"]),  # type: ignore[call-overload]
        namespace_prefix=asked["namespace_prefix"],
        strategy=asked["strategy"],
        top_k=asked["top_k"],
    )
    embedded, where = bool(asked["embedded"]), FILTERS[str(asked["where"])]
    with tempfile.TemporaryDirectory() as folder:
        snapshots = SnapshotFolder(Path(folder))
        indexes = [
            EmbeddedRecallIndex(
                stores.records, backend.generations(), shortlist=1, changes=stores.changes
            ),
            EmbeddedRecallIndex(
                stores.records,
                backend.generations(),
                shortlist=1,
                snapshots=snapshots,
                changes=stores.changes,
            ),
        ]
        scan = ScanningRecallIndex(stores.records)
        expected = _seen(_recall(stores, scan, query, policy, embedded, clock, where))
        for index in indexes:
            assert _seen(_recall(stores, index, query, policy, embedded, clock, where)) == expected
        caught, behind = 0, False  # recalls a delta answered; changes the file has not seen
        persisted = indexes[1].persisted
        assert persisted is not None
        for step in steps:
            done = _step(stores, clock, step)
            clock.advance(seconds=30)
            published = persisted.published
            expected = _seen(_recall(stores, scan, query, policy, embedded, clock, where))
            for index in indexes:
                found = _recall(stores, index, query, policy, embedded, clock, where)
                assert _seen(found) == expected, step
            rebuilt = persisted.published > published
            # A write is always taken in by a delta; an erasure by a delta too when the held
            # base did not hold the erased record (it reached the index by a delta), else by a
            # rebuild, which writes the file again.
            assert not rebuilt or done == "erased", step
            caught += done == "written" or (done == "erased" and not rebuilt)
            behind = not rebuilt and (behind or done != "none")
        assert [index.caught_up for index in indexes] == [caught, caught]
        # A fresh process maps the file its last rebuild wrote and catches up from there.
        fresh = EmbeddedRecallIndex(
            stores.records,
            backend.generations(),
            shortlist=1,
            snapshots=snapshots,
            changes=stores.changes,
        )
        assert _seen(_recall(stores, fresh, query, policy, embedded, clock, where)) == expected
        assert fresh.persisted is not None
        assert (fresh.persisted.published, fresh.persisted.mapped) == (0, 1)
        assert fresh.caught_up == int(behind)
