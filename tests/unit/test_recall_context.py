"""Context expansion: a strong hit brings the turns told just before and after it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord, Vector
from cairn.models import Edge, EdgeKind, RecordVersion, Scope, Source, SourceKind
from cairn.recall import RecallPolicy, RecallQuery, recall
from cairn.recall.candidates import Candidate, CandidatePool
from cairn.recall.expansion import expand, threads
from cairn.recall.relevance import Relevant
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend
from cairn.versioning import plan_writes

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="a1")
ON = RecallPolicy(context_weight=0.9, context_span=2, context_window_seconds=1800)


def turn(
    index: int,
    *,
    session: str | None = "s1",
    at: datetime | None = None,
    rollout: str | None = None,
) -> RecordVersion:
    record = NewRecord(
        record_id=f"mem-{index:036d}",
        namespace="/facts/a1/",
        content=f"turn {index}",
        sources=(Source(kind=SourceKind.USER, session_id=session, rollout_id=rollout),),
        seen_at=at or T0 + timedelta(seconds=20 * index),
    )
    return plan_writes(SCOPE, [Create(record=record)], {}, T0)[0].version


def pool_of(versions: list[RecordVersion]) -> CandidatePool:
    return CandidatePool(
        candidates=tuple(Candidate(version=v, tokens=(), keyword=0.0) for v in versions),
        reembedded=0,
        embedded=True,
    )


def by_index(items: tuple[Relevant, ...]) -> dict[int, float]:
    return {int(r.candidate.version.record_id[4:]): round(r.relevance, 6) for r in items}


def test_a_hit_lends_its_neighbours_a_share_that_shrinks_with_distance() -> None:
    versions = [turn(i) for i in range(6)]
    hit = Relevant(candidate=pool_of(versions).candidates[2], relevance=0.8)

    expanded = expand([hit], pool_of(versions), ON)

    assert by_index(expanded.relevant) == {2: 0.8, 1: 0.72, 3: 0.72, 0: 0.648, 4: 0.648}
    assert expanded.admitted == 4


def test_a_neighbour_keeps_its_own_relevance_when_that_is_higher() -> None:
    versions = [turn(i) for i in range(3)]
    pool = pool_of(versions)
    hit = Relevant(candidate=pool.candidates[0], relevance=0.6)
    strong = Relevant(candidate=pool.candidates[1], relevance=0.7)

    assert by_index(expand([hit, strong], pool, ON).relevant) == {0: 0.63, 1: 0.7, 2: 0.63}


def test_records_stamped_at_the_same_instant_lend_each_other_nothing() -> None:
    batch = [turn(i, at=T0) for i in range(4)]
    hit = Relevant(candidate=pool_of(batch).candidates[0], relevance=0.9)

    assert expand([hit], pool_of(batch), ON).admitted == 0


def test_facts_distilled_by_extraction_neither_lend_nor_borrow_context() -> None:
    facts = [turn(i, rollout="rol-1") for i in range(3)]
    pool = pool_of([*facts, turn(3)])
    hit = Relevant(candidate=pool.candidates[1], relevance=0.9)
    assert threads(facts[1]) == frozenset()
    assert expand([hit], pool, ON).admitted == 0
    # A turn next to them lends them nothing either.
    lender = Relevant(candidate=pool.candidates[3], relevance=0.9)
    assert by_index(expand([lender], pool, ON).relevant) == {3: 0.9}


def test_other_sessions_and_turns_beyond_the_window_are_not_neighbours() -> None:
    versions = [
        turn(0),
        turn(1, session="s2"),
        turn(2, at=T0 + timedelta(hours=2)),
        turn(3, session=None, at=T0 + timedelta(seconds=10)),
    ]
    hit = Relevant(candidate=pool_of(versions).candidates[0], relevance=0.9)

    assert expand([hit], pool_of(versions), ON).admitted == 0


def test_an_edge_to_the_same_episode_makes_a_thread_too() -> None:
    record = NewRecord(
        namespace="/facts/a1/",
        content="planned the trip",
        sources=(Source(kind=SourceKind.USER),),
        edges=(Edge(kind=EdgeKind.PART_OF, target="trip-2026"),),
    )
    (write,) = plan_writes(SCOPE, [Create(record=record)], {}, T0)
    assert threads(write.version) == {("part_of", "trip-2026")}


def test_a_weak_hit_cannot_bring_back_a_neighbour_the_floor_dropped() -> None:
    versions = [turn(i) for i in range(3)]
    policy = ON.model_copy(update={"relevance_floor": 0.5})
    weak = Relevant(candidate=pool_of(versions).candidates[1], relevance=0.52)

    assert expand([weak], pool_of(versions), policy).admitted == 0


@given(
    relevances=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8),
    weight=st.floats(0.0, 0.99),
    span=st.integers(1, 4),
)
def test_expansion_never_drops_or_lowers_and_a_loan_stays_below_its_lender(
    relevances: list[float], weight: float, span: int
) -> None:
    versions = [turn(i) for i in range(len(relevances) + 4)]
    pool = pool_of(versions)
    given_items = [
        Relevant(candidate=pool.candidates[i], relevance=r) for i, r in enumerate(relevances)
    ]
    policy = RecallPolicy(context_weight=weight, context_span=span, relevance_floor=0.0)

    expanded = expand(given_items, pool, policy).relevant
    after = {int(r.candidate.version.record_id[4:]): r.relevance for r in expanded}

    best = max(relevances)
    for i, before in enumerate(relevances):
        assert after[i] >= before
        if after[i] > before:
            assert after[i] < best
    assert all(value <= best for value in after.values())


def test_recall_shows_the_answer_told_right_after_the_question_it_matched() -> None:
    clock = FixedClock(T0 + timedelta(days=1))
    stores = InMemoryBackend(clock).stores()
    embedder = HashingEmbedder(dims=256)
    said = [
        "Alex: Which instrument did you pick up this winter?",
        "Sam: The cello, and I practise every evening.",
        "Alex: Lovely weather today.",
    ]
    vectors = embedder.embed(said)
    stores.records.apply(
        SCOPE,
        [
            Create(
                record=NewRecord(
                    namespace="/facts/a1/",
                    content=text,
                    sources=(Source(kind=SourceKind.USER, session_id="s1"),),
                    seen_at=T0 + timedelta(seconds=20 * i),
                    vector=Vector(embedder=embedder.identity, values=tuple(map(float, row))),
                )
            )
            for i, (text, row) in enumerate(zip(said, vectors, strict=True))
        ],
    )
    query = RecallQuery(text="Which instrument did you pick up this winter?", top_k=2)
    alone = RecallPolicy(relevance_floor=0.5, context_weight=0.0)
    policy = RecallPolicy(relevance_floor=0.5, context_weight=0.9)

    without = recall(
        SCOPE, query, stores=stores, embedder=embedder, clock=clock, policy=alone, journal=False
    )
    with_context = recall(
        SCOPE, query, stores=stores, embedder=embedder, clock=clock, policy=policy, journal=False
    )

    assert "cello" not in without.block
    assert [e.version.content for e in with_context.entries] == said[:2]
    # Both later turns were brought back as context; top_k 2 shows the nearer one.
    assert with_context.counts.contextual == 2
    assert np.isclose(with_context.entries[1].relevance, 0.9 * with_context.entries[0].relevance)
