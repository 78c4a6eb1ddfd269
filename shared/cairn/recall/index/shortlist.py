"""Steps 1-3 over a snapshot, exactly as the scan, but ranking only what can reach the block.

Every row of the view is scored in arrays (``scoring``), context expansion runs on the few
hits that lend, and then only a shortlist becomes candidates: the rows with the highest upper
bound on their final score. The bound takes the largest factor each later step could apply
(query signals at full weight, recency as of the end of the row's hour plus a margin), so no row
outside the shortlist can score more than its bound. The shortlist is ranked by the scan's own
functions (``boost``, ``rank``'s score and key) and deduplicated; it is enough once ``top_k``
survivors are found and every row left out is bounded strictly below the last of them, else it
widens (6x) until it is, or until it holds every relevant row. What is returned is therefore a
prefix of the scan's ranking, long enough that dedup and the budget choose exactly what they
would from the whole ranking.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from cairn.ports import Embedder
from cairn.quarantine import QuarantineEntry
from cairn.recall.candidates import RecordFilter
from cairn.recall.dedup import Deduplicated, Deduplication
from cairn.recall.index.expansion import expand
from cairn.recall.index.layout import hours, layout, view_of, whole
from cairn.recall.index.scoring import (
    Cosines,
    cosines,
    keyword_scores,
    screen,
)
from cairn.recall.index.shortlisted import GrowingRanking, ShortlistRows
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot
from cairn.recall.index.understanding import understand
from cairn.recall.keywords import tokenize
from cairn.recall.query import RecallPolicy, RecallQuery
from cairn.recall.ranking import Ranked
from cairn.recall.temporal import query_periods

# The first shortlist: two candidates an entry, room for a paraphrase each; then 6x. On the
# benchmark's stores six recalls in ten stop at 16 rows (top_k 8: 8-12 rows reach dedup's last
# survivor) and the rest need 40-96, which one widening holds, where doubling from 32 took two
# more rounds for some. Rows ranked per recall, 32 then 2x -> 16 then 6x: 57 -> 48 at 10k,
# 57 -> 55 at 1k, 48 -> 48 at 100k; rounds ranked per recall 1.58 -> 1.40 at 10k.
FIRST_SHORTLIST = 16
_PER_ENTRY = 2
_WIDEN = 6
# Relative slack on a bound computed with numpy's own power (not libm's): far above any ulp.
_BOUND_MARGIN = 1e-9
_SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Search:
    """A recall's ranking, best first, and what steps 1-3 did to get it.

    ``ranked`` is the whole ranking or a prefix of it that holds every entry dedup visits
    before it has ``top_k`` survivors. The counts are ``RecallCounts``' (see there).
    """

    ranked: tuple[Ranked, ...]
    candidates: int
    below_floor: int
    unembedded: int
    reembedded: int
    keyword_only: bool
    contextual: int
    # Whether the whole ranking holds a trusted candidate (dedup's untrusted cap needs it).
    any_trusted: bool = False
    # Whether a fallback over embedded rows chose the ranking (the block is labelled weak).
    weak: bool = False
    # The memory's quarantine list, when the index read it with its rows (index objects);
    # ``None``: recall reads it from the store (cairn.quarantine).
    quarantine: tuple[QuarantineEntry, ...] | None = None
    # Dedup's answer over ``ranked`` for ``query.top_k`` and ``any_trusted``, when the search
    # already computed it (the pipeline then reuses it instead of deduplicating again).
    deduplicated: Deduplicated | None = None


def search(
    snapshot: Snapshot,
    query: RecallQuery,
    *,
    embedder: Embedder | None,
    policy: RecallPolicy,
    now: datetime,
    shortlist: int = FIRST_SHORTLIST,
    where: RecordFilter | None = None,
) -> Search:
    """The scan's steps 1-3 for ``query`` over ``snapshot`` (its embedder must be
    ``embedder``'s identity), ranked only as far as the block can reach; ``shortlist`` is how
    many rows are ranked first (at least one; any size gives the same answer). ``where``
    narrows the view before anything is scored, as the scan narrows the heads it reads."""
    if query.namespace_prefix or query.strategy is not None:
        view = view_of(snapshot, query.namespace_prefix, query.strategy)
    else:
        view = layout(snapshot).everything
    if where is not None:
        view = _filtered(snapshot, view, where)
    understood = understand(snapshot, view, query.text, policy)
    keyword = keyword_scores(snapshot, view, understood, policy)
    found: Cosines | None = None
    if embedder is not None and len(view):
        found = cosines(snapshot, view, keyword, understood.embedded, embedder, policy)
    screened = screen(keyword, found, embedder is not None, policy, understood.weight)
    positions, relevance, admitted = expand(snapshot, view, screened, policy, query.text)
    unembedded = 0
    if found is not None:
        unembedded = len(view) - int(np.count_nonzero(found.present))
    first = max(1, shortlist)
    rows = positions if whole(snapshot, view) else view[positions]  # every row: position is row
    trusted = bool(snapshot.trusted[rows].any())
    ranked, unique = _shortlist(
        snapshot,
        view,
        keyword,
        found,
        (positions, rows, relevance),
        query,
        policy,
        now,
        first,
        trusted,
    )
    return Search(
        ranked=ranked,
        deduplicated=unique,
        candidates=len(view),
        below_floor=screened.below_floor - admitted,
        unembedded=unembedded,
        reembedded=found.reembedded if found is not None else 0,
        keyword_only=screened.keyword_only,
        contextual=admitted,
        any_trusted=trusted,
        weak=screened.weak,
    )


def _filtered(snapshot: Snapshot, view: IntArray, where: RecordFilter) -> IntArray:
    """The view's rows whose version ``where`` accepts, in order (each version parsed once
    and kept by the snapshot)."""
    keep = np.fromiter(
        (where(snapshot.version(row)) for row in view.tolist()), dtype=bool, count=len(view)
    )
    kept: IntArray = view[keep]
    return kept


def _bounds(
    snapshot: Snapshot,
    rows: IntArray,
    relevance: FloatArray,
    query: RecallQuery,
    policy: RecallPolicy,
    now: datetime,
) -> FloatArray:
    """An upper bound on each row's final score: signals at their largest, recency at its value
    for the end of the row's hour (computed with numpy's power) plus a margin."""
    factor = 1.0
    if policy.entity_weight > 0 and tokenize(query.text):
        factor *= 1.0 + policy.entity_weight
    if policy.temporal_weight > 0 and query_periods(query.text, now):
        factor *= 1.0 + policy.temporal_weight
    boosted = np.minimum(1.0, relevance * factor) if factor != 1.0 else relevance
    low, high = policy.confidence_multiplier_min, policy.confidence_multiplier_max
    confidence = low + (high - low) * np.minimum(1.0, np.maximum(0.0, snapshot.confidence[rows]))
    # Each row is at least as old as the end of its hour: one power per hour, read per row.
    by_hour = hours(snapshot)
    age = np.maximum(0.0, (now.timestamp() - by_hour.ends) / _SECONDS_PER_DAY)
    fresh = np.minimum(1.0, np.power(0.5, age / policy.recency_half_life_days) * (1 + 1e-6))
    fresh = fresh[by_hour.hour[rows]]
    w = policy.recency_weight
    bound: FloatArray = boosted * ((1 - w) * confidence + w * fresh) * (1 + _BOUND_MARGIN)
    return bound


def _shortlist(
    snapshot: Snapshot,
    view: IntArray,
    keyword: FloatArray,
    found: Cosines | None,
    relevant: tuple[IntArray, IntArray, FloatArray],
    query: RecallQuery,
    policy: RecallPolicy,
    now: datetime,
    first: int,
    any_trusted: bool,
) -> tuple[tuple[Ranked, ...], Deduplicated | None]:
    """The ranked prefix, and dedup's answer over it (``None`` when nothing is relevant).

    A widening ranks only the rows it adds: a row's boost and score depend on the row alone,
    and the ranking's key is a total order, so merging the new rows into the ranked ones gives
    the ranking of the whole shortlist."""
    positions, relevant_rows, values = relevant  # view positions, their rows, relevance
    if not len(positions):
        return (), None
    bound = _bounds(snapshot, relevant_rows, values, query, policy, now)
    size = min(len(positions), max(first, min(first, _PER_ENTRY) * query.top_k))
    growing = GrowingRanking()
    taken = np.zeros(len(positions), dtype=bool)  # rows ranked so far
    lowest_first = -bound
    dedup = Deduplication(policy, query.top_k, any_trusted=any_trusted)
    while True:
        if size < len(positions):  # the ``size`` best bounds, in O(rows), not a sort
            chosen = np.argpartition(lowest_first, size - 1)[:size]
            fresh = chosen[~taken[chosen]]
        else:
            fresh = np.flatnonzero(~taken)
        taken[fresh] = True
        rows = ShortlistRows(snapshot, view, keyword, found, positions[fresh], values[fresh])
        ranked, unchanged = growing.merge(rows, rows.boosted(query.text, now, policy), policy, now)
        # Every row not ranked yet is bounded by the largest bound left.
        left_out = float(bound[~taken].max()) if len(ranked) < len(positions) else -1.0
        unique = dedup.over(ranked, unchanged=unchanged)
        kept = unique.kept
        if len(kept) == query.top_k and left_out < kept[-1].score:
            return tuple(ranked[: dedup.visited]), unique  # up to the last survivor
        if len(ranked) >= len(positions):
            return tuple(ranked), unique
        size = min(len(positions), size * _WIDEN)
