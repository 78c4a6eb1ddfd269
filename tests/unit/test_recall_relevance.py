"""The relevance floor drops weak cosine matches; fusion keeps every relevance in [0, 1]."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.recall import RecallPolicy
from cairn.recall.candidates import Candidate, CandidatePool
from cairn.recall.relevance import query_weight, screen
from cairn.versioning import plan_writes

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="a1")


def head(index: int) -> RecordVersion:
    record = NewRecord(
        record_id=f"mem-{index:036d}",
        namespace="/facts/a1/",
        content=f"fact number {index}",
        sources=(Source(kind=SourceKind.USER),),
    )
    return plan_writes(SCOPE, [Create(record=record)], {}, NOW)[0].version


def candidate(index: int, *, cosine: float | None, keyword: float) -> Candidate:
    vector = None if cosine is None else np.ones(2, dtype=np.float32) / np.sqrt(2)
    return Candidate(
        version=head(index), tokens=("fact",), keyword=keyword, vector=vector, cosine=cosine
    )


def pool(*candidates: Candidate) -> CandidatePool:
    return CandidatePool(candidates=candidates, reembedded=0, embedded=True)


def relevance_by_index(pool_: CandidatePool, policy: RecallPolicy) -> dict[int, float]:
    screened = screen(pool_, policy)
    return {int(r.candidate.version.record_id[4:]): r.relevance for r in screened.relevant}


def test_a_cosine_below_the_floor_is_dropped_even_with_a_strong_keyword_match() -> None:
    policy = RecallPolicy(relevance_floor=0.3)
    screened = screen(
        pool(candidate(1, cosine=0.29, keyword=9.0), candidate(2, cosine=0.5, keyword=1.0)), policy
    )
    assert [r.candidate.version.record_id for r in screened.relevant] == [head(2).record_id]
    assert screened.below_floor == 1
    assert not screened.keyword_only


def test_when_every_cosine_is_below_the_floor_recall_falls_back_to_keywords() -> None:
    policy = RecallPolicy(relevance_floor=0.9, keyword_floor=0.0)
    screened = screen(
        pool(
            candidate(1, cosine=0.2, keyword=3.0),
            candidate(2, cosine=0.1, keyword=0.0),
            candidate(3, cosine=0.4, keyword=1.5),
        ),
        policy,
    )
    assert screened.keyword_only
    relevances = {int(r.candidate.version.record_id[4:]): r.relevance for r in screened.relevant}
    assert relevances == {1: 1.0, 3: 0.5}  # BM25 > 0 only, normalised by the best
    assert screened.below_floor == 1


def test_keyword_only_rows_need_the_keyword_floor_share_of_the_best_match() -> None:
    policy = RecallPolicy(relevance_floor=0.9, keyword_floor=0.25)
    screened = screen(
        pool(candidate(1, cosine=0.1, keyword=4.0), candidate(2, cosine=0.1, keyword=0.9)), policy
    )
    assert [r.candidate.version.record_id for r in screened.relevant] == [head(1).record_id]


def test_a_row_without_a_vector_is_scored_by_keywords_not_dropped() -> None:
    policy = RecallPolicy(relevance_floor=0.2, keyword_weight=0.5, keyword_floor=0.0)
    relevances = relevance_by_index(
        pool(candidate(1, cosine=0.6, keyword=2.0), candidate(2, cosine=None, keyword=2.0)), policy
    )
    # Missing cosine evidence counts as none: the keyword share alone.
    assert relevances[1] == 0.5 * 0.6 + 0.5 * 1.0
    assert relevances[2] == 0.5 * 1.0
    assert relevances[2] < relevances[1]


def test_without_an_embedder_recall_is_keyword_only() -> None:
    rows = (
        Candidate(version=head(1), tokens=("tea",), keyword=2.0),
        Candidate(version=head(2), tokens=("cat",), keyword=0.0),
    )
    screened = screen(CandidatePool(candidates=rows, reembedded=0, embedded=False), RecallPolicy())
    assert screened.keyword_only
    assert [r.candidate.version.record_id for r in screened.relevant] == [head(1).record_id]


rows = st.lists(
    st.tuples(st.none() | st.floats(-1.0, 1.0), st.floats(0.0, 50.0)), min_size=1, max_size=12
)


@given(
    rows=rows,
    floor=st.floats(0.0, 1.0),
    weight=st.floats(0.0, 1.0),
    fusion=st.sampled_from(["blend", "rrf"]),
)
def test_every_relevance_is_in_the_unit_interval_and_no_survivor_is_below_the_floor(
    rows: list[tuple[float | None, float]], floor: float, weight: float, fusion: str
) -> None:
    policy = RecallPolicy.model_validate(
        {"relevance_floor": floor, "keyword_weight": weight, "fusion": fusion}
    )
    candidates = [candidate(i, cosine=c, keyword=k) for i, (c, k) in enumerate(rows)]
    screened = screen(pool(*candidates), policy)
    assert all(0.0 <= r.relevance <= 1.0 for r in screened.relevant)
    if not screened.keyword_only:
        assert all(
            r.candidate.cosine is None or r.candidate.cosine >= floor for r in screened.relevant
        )
    assert all(r.candidate.cosine is not None or r.candidate.keyword > 0 for r in screened.relevant)
    assert len(screened.relevant) + screened.below_floor == len(candidates)


def test_with_no_floor_pass_and_no_shared_word_the_nearest_rows_above_the_weak_bar_answer() -> None:
    policy = RecallPolicy(relevance_floor=0.3, weak_floor=0.2, keyword_weight=0.3)
    screened = screen(
        pool(
            candidate(1, cosine=0.285, keyword=0.0),
            candidate(2, cosine=0.21, keyword=0.0),
            candidate(3, cosine=0.19, keyword=0.0),
        ),
        policy,
    )
    assert screened.weak
    assert screened.keyword_only  # a fallback ranked, not the floor
    relevances = {int(r.candidate.version.record_id[4:]): r.relevance for r in screened.relevant}
    assert relevances == {1: 0.7 * 0.285, 2: 0.7 * 0.21}  # the cosine share of the blend
    assert screened.below_floor == 1


def test_a_keyword_fallback_over_embedded_rows_is_weak_but_without_an_embedder_it_is_not() -> None:
    policy = RecallPolicy(relevance_floor=0.9, keyword_floor=0.0)
    embedded = screen(pool(candidate(1, cosine=0.2, keyword=3.0)), policy)
    assert embedded.weak
    assert len(embedded.relevant) == 1
    rows = (Candidate(version=head(1), tokens=("tea",), keyword=2.0),)
    bare = screen(CandidatePool(candidates=rows, reembedded=0, embedded=False), policy)
    assert not bare.weak
    assert len(bare.relevant) == 1


def test_a_recall_that_passes_the_floor_is_not_weak_and_nothing_above_the_weak_bar_is_empty() -> (
    None
):
    policy = RecallPolicy(relevance_floor=0.3, weak_floor=0.2)
    assert not screen(pool(candidate(1, cosine=0.5, keyword=0.0)), policy).weak
    nothing = screen(pool(candidate(1, cosine=0.1, keyword=0.0)), policy)
    assert nothing.relevant == ()
    assert not nothing.weak


def tokened(index: int, tokens: tuple[str, ...], *, cosine: float, keyword: float) -> Candidate:
    vector = np.ones(2, dtype=np.float32) / np.sqrt(2)
    return Candidate(
        version=head(index), tokens=tokens, keyword=keyword, vector=vector, cosine=cosine
    )


def test_under_the_query_scale_a_row_matching_only_a_common_word_is_not_a_full_match() -> None:
    # Every row names Maya; none says "drink". Under "best" the Maya-only match counts 1.
    rows = pool(
        tokened(1, ("maya", "green", "tea"), cosine=0.4, keyword=0.2),
        tokened(2, ("maya", "cycl", "work"), cosine=0.4, keyword=0.2),
        tokened(3, ("maya", "berlin"), cosine=0.4, keyword=0.2),
    )
    query = "what does Maya drink"
    by_best = relevance_by_index(rows, RecallPolicy(keyword_scale="best", keyword_weight=0.5))
    assert by_best == {1: 0.5 * 0.4 + 0.5, 2: 0.5 * 0.4 + 0.5, 3: 0.5 * 0.4 + 0.5}
    scaled = screen(rows, RecallPolicy(keyword_scale="query", keyword_weight=0.5), query)
    weight = query_weight(rows, query)
    # idf of "maya" (in all 3 rows) plus idf of "drink" (in none): the share is small.
    assert weight > 0.2 / 0.1
    for item in scaled.relevant:
        assert item.relevance == 0.5 * 0.4 + 0.5 * (0.2 / weight)
        assert item.relevance < 0.5 * 0.4 + 0.5 * 0.1


def test_the_query_scale_never_lets_a_keyword_share_exceed_one() -> None:
    rows = pool(tokened(1, ("tea",), cosine=0.5, keyword=50.0))
    screened = screen(rows, RecallPolicy(keyword_scale="query", keyword_weight=1.0), "tea")
    assert screened.relevant[0].relevance == 1.0
