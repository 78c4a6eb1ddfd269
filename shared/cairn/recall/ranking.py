"""Step 3, ranking: relevance times a bounded confidence multiplier, blended with recency.

    score = relevance · ((1 - w) · c(confidence) + w · recency(last_seen_at))

with ``c(x) = c_min + (c_max - c_min)·x`` in [c_min, c_max] ⊆ (0, 1], ``recency`` in (0, 1]
halving every ``recency_half_life_days`` of age, and ``w = recency_weight <= 0.3``. So recency
is worth at most ``w`` of a score and scales with relevance: it can never rescue an irrelevant
record (relevance 0 scores 0).

Why recency cannot lift B over a materially more relevant A: every factor after relevance lies
in ``[f_min, f_max] = [(1-w)·c_min, (1-w)·c_max + w]``, so if relevance(A) > ratio ·
relevance(B) with ``ratio = f_max / f_min`` (``RecallPolicy.material_relevance_ratio``), then
score(A) >= relevance(A)·f_min > relevance(B)·f_max >= score(B). With the defaults
(w = 0.1, c_min = 0.85) the ratio is 1/0.765 ≈ 1.31; at the cap w = 0.3 it is 1/0.595 ≈ 1.68.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from cairn.recall.candidates import Candidate, epoch_micros
from cairn.recall.query import RecallPolicy
from cairn.recall.relevance import Relevant

_SECONDS_PER_DAY = 86_400.0
_MICROS_PER_SECOND = 1_000_000


@dataclass(frozen=True, slots=True, eq=False)
class Ranked:
    """A candidate with its relevance in [0, 1] and its final score in [0, 1]."""

    candidate: Candidate
    relevance: float
    score: float


def recency(last_seen_at: datetime, now: datetime, half_life_days: float) -> float:
    """In (0, 1]: 1 for a record confirmed now (or later), halving every half-life of age."""
    return _recency(epoch_micros(now) - epoch_micros(last_seen_at), half_life_days)


def _recency(age_micros: int, half_life_days: float) -> float:
    # ``timedelta.total_seconds`` is its microseconds over 10**6 (integer true division), so
    # this is the double the datetime arithmetic gives.
    # The clamps below are written as comparisons, not ``max``/``min`` (slow calls here, once
    # per ranked row): each picks what those would, NaN and -0.0 included.
    age_days = (age_micros / _MICROS_PER_SECOND) / _SECONDS_PER_DAY
    return float(0.5 ** ((age_days if age_days > 0.0 else 0.0) / half_life_days))


def confidence_multiplier(confidence: float, policy: RecallPolicy) -> float:
    """Maps confidence 0..1 linearly onto [confidence_multiplier_min, confidence_multiplier_max]."""
    low, high = policy.confidence_multiplier_min, policy.confidence_multiplier_max
    at_least_0 = confidence if confidence > 0.0 else 0.0  # max(0.0, confidence)
    return low + (high - low) * (at_least_0 if at_least_0 < 1.0 else 1.0)  # min(1.0, ...)


def ranking_score(
    relevance: float,
    confidence: float,
    last_seen_at: datetime,
    now: datetime,
    policy: RecallPolicy,
) -> float:
    """The score a record ranks by; in [0, relevance], 0 whenever relevance is 0."""
    age = epoch_micros(now) - epoch_micros(last_seen_at)
    return row_score(relevance, confidence, age, policy)


def row_score(relevance: float, confidence: float, age_micros: int, policy: RecallPolicy) -> float:
    """``ranking_score`` for a record last confirmed ``age_micros`` microseconds ago."""
    w = policy.recency_weight
    fresh = _recency(age_micros, policy.recency_half_life_days)
    return relevance * ((1 - w) * confidence_multiplier(confidence, policy) + w * fresh)


def rank(relevant: Sequence[Relevant], policy: RecallPolicy, now: datetime) -> list[Ranked]:
    """Best first: by score, then relevance, then record id (so equal inputs rank the same)."""
    ranked = scored(relevant, policy, now)
    ranked.sort(key=rank_key)
    return ranked


def scored(relevant: Sequence[Relevant], policy: RecallPolicy, now: datetime) -> list[Ranked]:
    """Each of ``relevant`` with its score, in the order given (``rank`` sorts them)."""
    now_micros = epoch_micros(now)
    return [
        Ranked(
            candidate=item.candidate,
            relevance=item.relevance,
            score=row_score(
                item.relevance,
                item.candidate.confidence,
                now_micros - item.candidate.last_seen_micros,
                policy,
            ),
        )
        for item in relevant
    ]


def rank_key(item: Ranked) -> tuple[float, float, str]:
    """``rank``'s order: score, then relevance, then record id (a total order)."""
    return order_key(item.score, item.relevance, item.candidate.record_id)


def order_key(score: float, relevance: float, record_id: str) -> tuple[float, float, str]:
    """``rank_key`` of a candidate with this score, relevance and record id."""
    return (-score, -relevance, record_id)
