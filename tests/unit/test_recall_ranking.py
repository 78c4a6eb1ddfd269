"""Ranking: recency and confidence shape the order, but never beat a real relevance gap."""

from __future__ import annotations

import math
import struct
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from cairn.changes import Create, NewRecord
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.recall import RecallPolicy
from cairn.recall.candidates import Candidate
from cairn.recall.ranking import confidence_multiplier, rank, ranking_score, recency, row_score
from cairn.recall.relevance import Relevant
from cairn.versioning import plan_writes

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="a1")


def version(record_id: str, *, confidence: float, seen: datetime) -> RecordVersion:
    record = NewRecord(
        record_id=record_id,
        namespace="/facts/a1/",
        content=f"fact {record_id}",
        confidence=confidence,
        sources=(Source(kind=SourceKind.USER),),
        seen_at=seen,
    )
    return plan_writes(SCOPE, [Create(record=record)], {}, seen)[0].version


def relevant(record_id: str, relevance: float, *, confidence: float, age_days: float) -> Relevant:
    seen = NOW - timedelta(days=age_days)
    candidate = Candidate(
        version=version(record_id, confidence=confidence, seen=seen), tokens=(), keyword=0.0
    )
    return Relevant(candidate=candidate, relevance=relevance)


policies = st.builds(
    RecallPolicy,
    recency_weight=st.floats(0.0, 0.3),
    recency_half_life_days=st.floats(0.01, 3650.0),
    confidence_multiplier_min=st.floats(0.05, 1.0),
).filter(lambda p: p.confidence_multiplier_min <= p.confidence_multiplier_max)

A_ID = "mem-" + "a" * 36
B_ID = "mem-" + "b" * 36


@given(
    policy=policies,
    relevance_b=st.floats(0.0001, 1.0),
    ratio_slack=st.floats(1.0 + 1e-9, 10.0),
    confidence_a=st.floats(0.0, 1.0),
    confidence_b=st.floats(0.0, 1.0),
    age_a=st.floats(0.0, 36_500.0),
    age_b=st.floats(0.0, 36_500.0),
)
def test_recency_never_outranks_a_materially_more_relevant_memory(
    policy: RecallPolicy,
    relevance_b: float,
    ratio_slack: float,
    confidence_a: float,
    confidence_b: float,
    age_a: float,
    age_b: float,
) -> None:
    # "Materially more relevant" = a relevance ratio beyond the widest spread that recency and
    # confidence together can make (RecallPolicy.material_relevance_ratio; proof in ranking.py).
    relevance_a = relevance_b * policy.material_relevance_ratio * ratio_slack
    if relevance_a > 1.0:
        relevance_b, relevance_a = relevance_b / relevance_a, 1.0
    a = relevant(A_ID, relevance_a, confidence=confidence_a, age_days=age_a)
    b = relevant(B_ID, relevance_b, confidence=confidence_b, age_days=age_b)
    order = [r.candidate.version.record_id for r in rank([b, a], policy, NOW)]
    assert order == [A_ID, B_ID]


def test_the_material_ratio_is_tight_a_smaller_gap_can_be_overturned() -> None:
    policy = RecallPolicy(recency_weight=0.3, confidence_multiplier_min=0.85)
    ratio = policy.material_relevance_ratio
    assert ratio == pytest.approx(1 / (0.7 * 0.85))
    stale = relevant(A_ID, 0.95, confidence=0.0, age_days=36_500)
    fresh = relevant(B_ID, 0.95 / ratio * 1.01, confidence=1.0, age_days=0)
    order = [r.candidate.version.record_id for r in rank([stale, fresh], policy, NOW)]
    assert order == [B_ID, A_ID]


def test_recency_breaks_a_tie_between_equally_relevant_memories() -> None:
    policy = RecallPolicy(recency_weight=0.1)
    old = relevant(A_ID, 0.6, confidence=0.8, age_days=200)
    new = relevant(B_ID, 0.6, confidence=0.8, age_days=1)
    assert [r.candidate.version.record_id for r in rank([old, new], policy, NOW)] == [B_ID, A_ID]


def test_user_stated_confidence_outranks_an_inferred_guess_at_equal_relevance() -> None:
    inferred = relevant(A_ID, 0.6, confidence=0.4, age_days=3)
    stated = relevant(B_ID, 0.6, confidence=0.95, age_days=3)
    ranked = rank([inferred, stated], RecallPolicy(), NOW)
    assert [r.candidate.version.record_id for r in ranked] == [B_ID, A_ID]


@given(
    policy=policies,
    relevance=st.floats(0.0, 1.0),
    confidence=st.floats(0.0, 1.0),
    age=st.floats(-30.0, 36_500.0),
)
def test_scores_lie_between_zero_and_the_relevance(
    policy: RecallPolicy, relevance: float, confidence: float, age: float
) -> None:
    score = ranking_score(relevance, confidence, NOW - timedelta(days=age), NOW, policy)
    assert 0.0 <= score <= relevance + 1e-12


def test_recency_cannot_rescue_an_irrelevant_memory() -> None:
    policy = RecallPolicy(recency_weight=0.3)
    assert ranking_score(0.0, 1.0, NOW, NOW, policy) == 0.0


def test_recency_halves_every_half_life_and_a_future_confirmation_counts_as_now() -> None:
    assert recency(NOW, NOW, 30) == 1.0
    assert recency(NOW - timedelta(days=30), NOW, 30) == pytest.approx(0.5)
    assert recency(NOW - timedelta(days=60), NOW, 30) == pytest.approx(0.25)
    assert recency(NOW + timedelta(days=5), NOW, 30) == 1.0


@pytest.mark.parametrize("weight", [0.31, 0.5, 1.0])
def test_a_policy_giving_recency_more_than_thirty_percent_is_refused(weight: float) -> None:
    with pytest.raises(ValidationError, match="recency_weight"):
        RecallPolicy(recency_weight=weight)


def test_equal_scores_rank_by_record_id_so_recall_is_deterministic() -> None:
    first = relevant(A_ID, 0.5, confidence=0.7, age_days=2)
    second = relevant(B_ID, 0.5, confidence=0.7, age_days=2)
    for given_order in ([first, second], [second, first]):
        ids = [r.candidate.version.record_id for r in rank(given_order, RecallPolicy(), NOW)]
        assert ids == [A_ID, B_ID]


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


@given(
    relevance=st.floats(0.0, 1.0),
    confidence=st.sampled_from((math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, 1.5, -0.5))
    | st.floats(allow_nan=True, allow_infinity=True),
    age_micros=st.integers(-(10**18), 10**18) | st.sampled_from((-1, 0, 1)),
    half_life=st.floats(0.01, 36_500.0),
)
def test_the_score_clamps_pick_exactly_what_max_and_min_pick(
    relevance: float, confidence: float, age_micros: int, half_life: float
) -> None:
    """The clamps are comparisons (``max``/``min`` are slow calls once per ranked row): the
    same doubles, NaN and -0.0 included."""
    policy = RecallPolicy(recency_half_life_days=half_life)
    low, high = policy.confidence_multiplier_min, policy.confidence_multiplier_max
    multiplier = low + (high - low) * min(1.0, max(0.0, confidence))
    assert _bits(confidence_multiplier(confidence, policy)) == _bits(multiplier)
    days = max(0.0, (age_micros / 1_000_000) / 86_400.0)
    fresh = 0.5 ** (days / half_life)
    w = policy.recency_weight
    want = relevance * ((1 - w) * multiplier + w * fresh)
    assert _bits(row_score(relevance, confidence, age_micros, policy)) == _bits(want)
