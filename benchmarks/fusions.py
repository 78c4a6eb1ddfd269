"""Idea (d), better fusion: alternatives to the engine's blend, measured on the same pools.

The engine's own fusion knobs (``keyword_weight``, ``fusion="rrf"``) are measured through
``RecallPolicy``. The variants here are not in the engine; each replaces only the relevance the
floor step computes, over the same survivors of the floor, and every later step (context,
signals, ranking, dedup) runs as in ``recall``:

- z-score: cosine and BM25 each standardised over the survivors, blended, squashed by a logistic
- above-floor: cosine rescaled to ``(cosine - floor) / (1 - floor)`` before the blend, so both
  inputs span [0, 1]
- blend + RRF: 80% blend, 20% reciprocal-rank fusion
- sharpness: the keyword weight grows when the best keyword match stands out from the tenth
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import numpy as np
import numpy.typing as npt

from cairn.recall import RecallPolicy
from cairn.recall.candidates import CandidatePool
from cairn.recall.dedup import deduplicate
from cairn.recall.expansion import expand
from cairn.recall.ranking import rank
from cairn.recall.relevance import Relevant, screen
from cairn.recall.signals import boost

Floats = npt.NDArray[np.float64]
Fusion = Callable[[Floats, Floats, RecallPolicy], Floats]
RRF_SHARE = 0.2


def _blend(cosine: Floats, keyword: Floats, weight: float) -> Floats:
    best = keyword.max() if keyword.size and keyword.max() > 0 else 1.0
    result: Floats = (1 - weight) * np.clip(cosine, 0, 1) + weight * keyword / best
    return result


def _zscore(cosine: Floats, keyword: Floats, policy: RecallPolicy) -> Floats:
    def standard(x: Floats) -> Floats:
        result: Floats = (x - x.mean()) / (x.std() + 1e-9)
        return result

    mixed = (1 - policy.keyword_weight) * standard(cosine) + policy.keyword_weight * standard(
        keyword
    )
    squashed: Floats = 1 / (1 + np.exp(-mixed))
    return squashed


def _above_floor(cosine: Floats, keyword: Floats, policy: RecallPolicy) -> Floats:
    floor = policy.relevance_floor
    scaled = np.clip((cosine - floor) / (1 - floor), 0, 1) if floor < 1 else cosine
    return _blend(scaled, keyword, policy.keyword_weight)


def _ranks(scores: Floats) -> Floats:
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    return ranks


def _blend_rrf(cosine: Floats, keyword: Floats, policy: RecallPolicy) -> Floats:
    k = policy.rrf_k
    rrf = (1 / (k + _ranks(cosine)) + np.where(keyword > 0, 1 / (k + _ranks(keyword)), 0)) / (
        2 / (k + 1)
    )
    mixed: Floats = (1 - RRF_SHARE) * _blend(cosine, keyword, policy.keyword_weight)
    return mixed + RRF_SHARE * rrf


def _sharpness(cosine: Floats, keyword: Floats, policy: RecallPolicy) -> Floats:
    ordered = np.sort(keyword)[::-1]
    top = ordered[0] if ordered.size else 0.0
    tenth = ordered[min(9, ordered.size - 1)] if ordered.size else 0.0
    sharp = (top - tenth) / top if top > 0 else 0.0
    return _blend(cosine, keyword, min(1.0, policy.keyword_weight * (0.5 + sharp)))


VARIANTS: dict[str, Fusion] = {
    "z-score blend": _zscore,
    "cosine rescaled above the floor": _above_floor,
    f"blend + {RRF_SHARE:.0%} RRF": _blend_rrf,
    "keyword weight by match sharpness": _sharpness,
}


def select_with(
    fusion: Fusion,
    pool: CandidatePool,
    question: str,
    policy: RecallPolicy,
    now: datetime,
    depth: int,
) -> list[str]:
    """Record ids ``recall`` would rank first if ``fusion`` replaced its blend (budget aside)."""
    screened = screen(pool, policy)
    relevant = screened.relevant
    if relevant and not screened.keyword_only:
        cosine = np.array([r.candidate.cosine or 0.0 for r in relevant], dtype=np.float64)
        keyword = np.array([r.candidate.keyword for r in relevant], dtype=np.float64)
        fused = np.clip(fusion(cosine, keyword, policy), 0.0, 1.0)
        relevant = tuple(
            Relevant(candidate=r.candidate, relevance=float(x))
            for r, x in zip(relevant, fused, strict=True)
        )
    expanded = expand(relevant, pool, policy)
    boosted = boost(expanded.relevant, question, now, policy)
    kept = deduplicate(rank(boosted, policy, now), policy, limit=depth).kept
    return [item.candidate.version.record_id for item in kept]
