"""Step 2, the relevance floor and fusion: which candidates stay, and how relevant each is.

A candidate with a cosine below ``policy.relevance_floor`` is dropped, not ranked low. The rest
get one relevance in [0, 1] that fuses cosine and BM25 (keyword scores are normalised by the
best keyword score in the pool, so the best keyword match counts 1):

- ``blend`` (default): ``(1 - kw)·cosine + kw·keyword`` with ``kw = policy.keyword_weight``,
  cosine clipped to [0, 1]. A head with no vector (nothing stored for this embedder and the
  re-embed budget spent) gets only the keyword share, ``kw·keyword``: missing evidence counts
  as none, so such a row never outranks an equal keyword match that also passed the floor.
  Measured provisionally on the LoCoMo dev split (760 questions, turns prefixed with their
  date, turn-level R@5): blend 0.3 gives 0.606, blend 0.5 0.600, RRF 0.545, this BM25 alone
  0.565, MiniLM cosine alone 0.442.
  With ``policy.keyword_scale = "query"`` the keyword share in the blend is the row's BM25
  over the query's own term weight, ``Σ idf(t)`` over the query's terms (what a row holding
  each term once, at average length, scores), capped at 1, instead of over the pool's best
  score: a row that matches only the query's most common word ("Maya" in a memory of Maya's
  facts) then counts as a small share, not as a perfect keyword match. The idf is BM25's,
  computed over the pool's rows (``cairn.recall.keywords``).
- ``rrf``: reciprocal-rank fusion ``Σ 1/(k + rank)`` over the cosine ranking (rows that passed
  the floor) and the keyword ranking (rows with BM25 > 0), divided by its maximum so the best
  possible row scores 1. Rank-only: score gaps vanish, so ranking multipliers weigh more.

Keyword fallback: when no candidate passes the floor (or there is no embedder), recall is BM25
alone over the rows that share a term with the query, relevance = normalised BM25 (blend) or
its normalised reciprocal rank (rrf). Whenever a row is ranked by keywords alone (in the
fallback, or for lack of a vector), its normalised BM25 must reach ``policy.keyword_floor``,
else it is dropped and counted with ``below_floor``.

Weak fallback: when nothing passes the floor and no row shares a term with the query either,
the rows whose cosine reaches the second, lower bar ``policy.weak_floor`` are ranked by their
blended relevance. A short fact asked about in other words ("what does the user drink?" of
"I prefer green tea in the morning", cosine 0.285) lands there rather than nowhere. Either
fallback over an embedded pool is ``weak``: no candidate reached the floor, and the block says
so (``cairn.recall.render.WEAK_LINE``); without an embedder keywords are all recall has, so
that is not weak.

Confidence: rows that pass the floor are not all worth trusting. A block is also weak unless
the pool holds a match that stands out (``confident``): the best cosine reaches
``policy.confident_cosine``, or lies ``policy.confident_margin`` above the ``MARGIN_RANK``-th
best (a short fact asked about in other words scores low but alone), or the best row's BM25
holds ``policy.confident_keyword`` of the query's own term weight. The label changes what the
block says, never what it holds or in which order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cairn.recall.candidates import Candidate, CandidatePool
from cairn.recall.keywords import query_terms, tokenize
from cairn.recall.query import RecallPolicy

# The best cosine is compared with the one this far down the pool (``confident``).
MARGIN_RANK = 5


@dataclass(frozen=True, slots=True, eq=False)
class Relevant:
    """A candidate that survived the floor, with its fused relevance in [0, 1]."""

    candidate: Candidate
    relevance: float


@dataclass(frozen=True, slots=True)
class Screened:
    """The survivors of the floor, how many it dropped, and whether keywords alone decided."""

    relevant: tuple[Relevant, ...]
    below_floor: int
    keyword_only: bool
    weak: bool = False


def screen(pool: CandidatePool, policy: RecallPolicy, query_text: str = "") -> Screened:
    """Apply the relevance floor and fuse cosine and keyword scores into one relevance
    (``query_text`` sets the keyword scale when ``policy.keyword_scale`` is ``"query"``)."""
    candidates = pool.candidates
    floor = policy.relevance_floor
    passing = [c for c in candidates if c.cosine is not None and c.cosine >= floor]
    best_keyword = max((c.keyword for c in candidates), default=0.0)
    if not passing:
        return _fallback(pool, best_keyword, policy)
    if policy.keyword_scale == "query" and policy.fusion == "blend":
        best_keyword = max(best_keyword, query_weight(pool, query_text))
    unvectored = [
        c for c in candidates if c.cosine is None and _keyword_match(c, best_keyword, policy)
    ]
    below = len(candidates) - len(passing) - len(unvectored)
    if policy.fusion == "rrf":
        relevant = _fused_by_rank(passing, unvectored, policy.rrf_k)
    else:
        relevant = tuple(_blended(c, best_keyword, policy) for c in (*passing, *unvectored))
    cosines = [c.cosine for c in candidates if c.cosine is not None]
    keyword_share = evidence_share(max(c.keyword for c in candidates), pool, query_text)
    sure = confident(cosines, keyword_share, policy)
    return Screened(relevant=relevant, below_floor=below, keyword_only=False, weak=not sure)


def evidence_share(best_keyword: float, pool: CandidatePool, query_text: str) -> float:
    """The best row's BM25 over the query's own term weight (capped at 1): how much of what
    the query asks for in words one row holds."""
    scale = max(best_keyword, query_weight(pool, query_text))
    return best_keyword / scale if scale > 0 else 0.0


def confident(cosines: Sequence[float], keyword_share: float, policy: RecallPolicy) -> bool:
    """Whether the pool holds a match worth trusting: the best cosine reaches
    ``confident_cosine``, or stands ``confident_margin`` above the ``MARGIN_RANK``-th best, or
    the best row holds ``confident_keyword`` of the query's term weight."""
    if keyword_share >= policy.confident_keyword:
        return True
    if not cosines:
        return False
    ordered = sorted(cosines, reverse=True)
    best = ordered[0]
    runner = ordered[min(MARGIN_RANK, len(ordered)) - 1]
    return best >= policy.confident_cosine or best - runner >= policy.confident_margin


def _fallback(pool: CandidatePool, best_keyword: float, policy: RecallPolicy) -> Screened:
    """Keyword matches if any; else, over an embedded pool, cosines above ``weak_floor``."""
    candidates = pool.candidates
    matched = [c for c in candidates if _keyword_match(c, best_keyword, policy)]
    if matched or not pool.embedded:
        relevant = _keyword_relevance(matched, best_keyword, policy)
    else:
        near = [c for c in candidates if c.cosine is not None and c.cosine >= policy.weak_floor]
        relevant = tuple(_blended(c, best_keyword, policy) for c in near)
    return Screened(
        relevant=relevant,
        below_floor=len(candidates) - len(relevant),
        # An empty scope fell back to nothing; only report a fallback that ranked rows.
        keyword_only=bool(candidates) or not pool.embedded,
        weak=pool.embedded and bool(relevant),
    )


def query_weight(pool: CandidatePool, query_text: str) -> float:
    """``Σ idf(t)`` over the query's distinct keyword terms, with BM25's idf over the pool's
    rows: 0 for a query with no keyword term or an empty pool."""
    terms = query_terms(tokenize(query_text))
    total = len(pool.candidates)
    if not terms or not total:
        return 0.0
    frequency = dict.fromkeys(terms, 0)  # summed in the query's order
    distinct = frozenset(terms)
    for candidate in pool.candidates:
        for term in distinct.intersection(candidate.tokens):
            frequency[term] += 1
    return term_weight(frequency.values(), total)


def term_weight(frequencies: Iterable[int], total: int) -> float:
    """``Σ idf(t)`` over terms of these document frequencies among ``total`` rows, summed in
    the given order (the recall index sums the same terms in the same order)."""
    return sum(math.log(1 + (total - df + 0.5) / (df + 0.5)) for df in frequencies)


def _keyword_match(candidate: Candidate, best_keyword: float, policy: RecallPolicy) -> bool:
    share = _keyword_share(candidate, best_keyword)
    return candidate.keyword > 0 and share >= policy.keyword_floor


def _keyword_share(candidate: Candidate, best_keyword: float) -> float:
    return candidate.keyword / best_keyword if best_keyword > 0 else 0.0


def _blended(candidate: Candidate, best_keyword: float, policy: RecallPolicy) -> Relevant:
    weight = policy.keyword_weight
    keyword = weight * _keyword_share(candidate, best_keyword)
    cosine = 0.0 if candidate.cosine is None else min(1.0, max(0.0, candidate.cosine))
    return Relevant(candidate=candidate, relevance=min(1.0, (1 - weight) * cosine + keyword))


def _keyword_relevance(
    matched: Sequence[Candidate], best_keyword: float, policy: RecallPolicy
) -> tuple[Relevant, ...]:
    if policy.fusion == "rrf":
        ranks = _ranks(matched, key=lambda c: c.keyword)
        best = 1 / (policy.rrf_k + 1)
        return tuple(
            Relevant(candidate=c, relevance=(1 / (policy.rrf_k + ranks[id(c)])) / best)
            for c in matched
        )
    return tuple(Relevant(candidate=c, relevance=_keyword_share(c, best_keyword)) for c in matched)


def _fused_by_rank(
    passing: Sequence[Candidate], unvectored: Sequence[Candidate], k: int
) -> tuple[Relevant, ...]:
    by_cosine = _ranks(passing, key=lambda c: c.cosine or 0.0)
    rows = [*passing, *unvectored]
    by_keyword = _ranks([c for c in rows if c.keyword > 0], key=lambda c: c.keyword)
    best = 2 / (k + 1)
    fused: list[Relevant] = []
    for c in rows:
        total = sum(1 / (k + ranks[id(c)]) for ranks in (by_cosine, by_keyword) if id(c) in ranks)
        fused.append(Relevant(candidate=c, relevance=min(1.0, total / best)))
    return tuple(fused)


def _ranks(rows: Sequence[Candidate], *, key: Callable[[Candidate], float]) -> dict[int, int]:
    """1-based rank of each row (by object identity): higher key first, ties by record id."""
    ordered = sorted(rows, key=lambda c: (-key(c), c.version.record_id))
    return {id(c): position for position, c in enumerate(ordered, start=1)}
