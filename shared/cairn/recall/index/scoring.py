"""Steps 1-2 over a snapshot, vectorised: BM25, cosines, the floor and fusion for every row.

Each array operation repeats, in the same order, the float arithmetic the per-candidate
functions of ``cairn.recall.keywords`` and ``cairn.recall.relevance`` do, so every value is the
same IEEE double those functions compute (``tests/unit/test_recall_index_exact.py`` compares
them bit for bit against the scan).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cairn.ports import Embedder
from cairn.recall.cosines import row_cosines, unit, unit_rows
from cairn.recall.index.layout import layout, whole
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot
from cairn.recall.index.understanding import Understood, confident, frequency_of, weight_of
from cairn.recall.keywords import query_terms
from cairn.recall.query import RecallPolicy
from cairn.recall.relevance import MARGIN_RANK


def bm25(
    snapshot: Snapshot, view: IntArray, query: Sequence[str], policy: RecallPolicy
) -> FloatArray:
    """``bm25_scores`` of the view's rows (the view is the collection: N, df and the average
    length are the view's), aligned with ``view``."""
    total = len(view)
    scores = np.zeros(total, dtype=np.float64)
    terms = query_terms(query)
    if not terms or not total:
        return scores
    k1, b = policy.bm25_k1, policy.bm25_b
    everything = whole(snapshot, view)
    lengths = snapshot.lengths if everything else snapshot.lengths[view]
    average = int(lengths.sum()) / total or 1.0
    position = view
    if not everything:
        position = np.full(snapshot.size, -1, dtype=np.int64)
        position[view] = np.arange(total)
    postings = [(term, snapshot.postings.get(term)) for term in terms]
    # The length norm of every row, unless the terms' postings are fewer than the rows: then
    # only where each term is (the same doubles either way).
    norms = None
    if sum(len(found[0]) for _, found in postings if found is not None) >= total:
        norms = k1 * ((1 - b) + (b * lengths) / average)
    for _, posting in postings:
        if posting is None:
            continue
        rows, tf = posting
        if everything:  # a row's view position is the row itself
            at = rows
        else:
            at = position[rows]
            held = at >= 0
            at, tf = at[held], tf[held]
        df = len(at)
        if not df:
            continue
        idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
        norm = norms[at] if norms is not None else k1 * ((1 - b) + (b * lengths[at]) / average)
        scores[at] += ((idf * tf) * (k1 + 1)) / (tf + norm)
    return scores


def keyword_scores(
    snapshot: Snapshot, view: IntArray, query: Understood, policy: RecallPolicy
) -> FloatArray:
    """``bm25`` of the query's terms, or 0 for every row when only the words naming the
    memory's subject would match (``cairn.recall.subject.only_the_subject_matched``, with the
    view's document frequencies), as the scan's ``gather`` scores them."""
    if query.only_subject:
        return np.zeros(len(view), dtype=np.float64)
    return bm25(snapshot, view, query.terms, policy)


def query_weight(snapshot: Snapshot, view: IntArray, query: Sequence[str]) -> float:
    """``cairn.recall.relevance.query_weight`` over the view: the query's distinct terms in the
    same order (``query_terms``), each term's document frequency counted from its postings
    (a search reads it from its ``Understood`` query)."""
    return weight_of(query_terms(query), frequency_of(snapshot, view), len(view))


@dataclass(frozen=True, slots=True)
class Cosines:
    """The view's cosines: ``values[i]`` is meaningful where ``present[i]``; ``vectors`` are
    the unit rows recall compares for paraphrases, by view position."""

    values: npt.NDArray[np.float32]
    present: npt.NDArray[np.bool_]
    fresh: dict[int, npt.NDArray[np.float32]]
    reembedded: int


def cosines(
    snapshot: Snapshot,
    view: IntArray,
    keyword: FloatArray,
    embedded_text: str,
    embedder: Embedder,
    policy: RecallPolicy,
) -> Cosines:
    """Embed the query as ``embedded_text`` (``Understood.embedded``), with up to
    ``max_reembed`` vectorless rows, best keyword first, in the same batch, as the scan does,
    and score every row of the view that has a vector."""
    aligned = whole(snapshot, view) and layout(snapshot).aligned
    if aligned:  # every row has its vector at its own row of the matrix
        rows, present = view, np.ones(len(view), dtype=bool)
        missing = np.zeros(0, dtype=np.int64)
    else:
        rows = snapshot.vector_rows[view]
        present = rows >= 0
        vectorless = np.flatnonzero(~present)
        order = np.lexsort((vectorless, -keyword[vectorless]))
        missing = vectorless[order][: policy.max_reembed]
    texts = [embedded_text, *(snapshot.contents[int(view[p])] for p in missing)]
    embedded = embedder.embed(texts)
    query = unit(embedded[0])
    if aligned:
        values = row_cosines(snapshot.matrix, query)
        return Cosines(values=values, present=present, fresh={}, reembedded=0)
    values = np.zeros(len(view), dtype=np.float32)
    stored = np.flatnonzero(present)
    if len(stored):
        if len(stored) == snapshot.matrix.shape[0]:
            values[stored] = row_cosines(snapshot.matrix, query)[rows[stored]]
        else:
            values[stored] = row_cosines(snapshot.matrix[rows[stored]], query)
    fresh: dict[int, npt.NDArray[np.float32]] = {}
    if len(missing):
        made = unit_rows(np.asarray(embedded[1:], dtype=np.float32))
        values[missing] = row_cosines(made, query)
        fresh = {int(p): made[j] for j, p in enumerate(missing)}
        present = present.copy()
        present[missing] = True
    return Cosines(values=values, present=present, fresh=fresh, reembedded=len(missing))


@dataclass(frozen=True, slots=True)
class Screened:
    """The view positions that survived the floor (ascending) and their fused relevance."""

    positions: IntArray
    relevance: FloatArray
    below_floor: int
    keyword_only: bool
    weak: bool = False


def screen(
    keyword: FloatArray,
    found: Cosines | None,
    embedded: bool,
    policy: RecallPolicy,
    weight_of_query: float = 0.0,
) -> Screened:
    """``cairn.recall.relevance.screen`` over arrays; ``weight_of_query`` is ``query_weight``
    (the keyword scale when ``policy.keyword_scale`` is ``"query"``, and the confidence
    decision's keyword scale)."""
    total = len(keyword)
    best = float(keyword.max()) if total else 0.0
    if found is not None and policy.fusion == "blend":
        complete = bool(found.present.all())  # every row has a cosine (the usual view)
        passing = found.values >= _at_least(policy.relevance_floor)
        if not complete:
            passing &= found.present
        if passing.any():
            return _blended(keyword, found, passing, complete, best, policy, weight_of_query)
    share = keyword / best if best > 0 else np.zeros(total, dtype=np.float64)
    matched = (keyword > 0) & (share >= policy.keyword_floor)
    if found is None:
        passing = np.zeros(total, dtype=bool)
        cosine = np.zeros(total, dtype=np.float64)
    else:
        cosine = found.values.astype(np.float64)
        passing = found.present & (cosine >= policy.relevance_floor)
    if not passing.any():
        return _fallback(keyword, share, matched, found, cosine, embedded, policy)
    assert found is not None  # passing rows have cosines
    if policy.keyword_scale == "query" and policy.fusion == "blend":
        scale = max(best, weight_of_query)
        share = keyword / scale if scale > 0 else np.zeros(total, dtype=np.float64)
        matched = (keyword > 0) & (share >= policy.keyword_floor)
    unvectored = ~found.present & matched
    keep = passing | unvectored
    sure = confident(_of_present(found), best, weight_of_query, policy)
    positions = np.flatnonzero(keep)
    below = total - int(passing.sum()) - int(unvectored.sum())
    if policy.fusion == "rrf":
        k = policy.rrf_k
        total_rank = np.zeros(total, dtype=np.float64)
        by_cosine = np.flatnonzero(passing)
        total_rank[by_cosine] = 0.0 + 1.0 / (k + _ranks(by_cosine, cosine[by_cosine]))
        by_keyword = np.flatnonzero(keep & (keyword > 0))
        total_rank[by_keyword] += 1.0 / (k + _ranks(by_keyword, keyword[by_keyword]))
        relevance = np.minimum(1.0, total_rank[positions] / (2 / (k + 1)))
    else:
        weight = policy.keyword_weight
        clipped = np.where(passing, np.minimum(1.0, np.maximum(0.0, cosine)), 0.0)
        blended = (1 - weight) * clipped + weight * share
        relevance = np.minimum(1.0, blended[positions])
    return Screened(positions, relevance, below, False, not sure)


def _of_present(found: Cosines) -> npt.NDArray[np.float32]:
    """The cosines of the rows that have one."""
    return found.values if found.present.all() else found.values[found.present]


def _at_least(floor: float) -> np.float32:
    """The least float32 that is at least ``floor``: for a float32 ``x``, ``x >= floor`` (as
    doubles) exactly when ``x >= _at_least(floor)``, so the floor is applied to the float32
    cosines without widening every one of them to a double."""
    nearest = np.float32(floor)
    if float(nearest) < floor:
        nearest = np.nextafter(nearest, np.float32(np.inf))
    return nearest


def _blended(
    keyword: FloatArray,
    found: Cosines,
    passing: npt.NDArray[np.bool_],
    complete: bool,
    best: float,
    policy: RecallPolicy,
    weight_of_query: float,
) -> Screened:
    """``screen``'s blend when some cosine passes the floor, computed only at the positions it
    keeps (each value the same double the whole-array expression gives there); ``complete``:
    every row of the view has a cosine."""
    total = len(keyword)
    scale = max(best, weight_of_query) if policy.keyword_scale == "query" else best
    unvectored = np.zeros(0, dtype=np.int64)
    if not complete:
        share = keyword / scale if scale > 0 else np.zeros(total, dtype=np.float64)
        matched = (keyword > 0) & (share >= policy.keyword_floor)
        unvectored = np.flatnonzero(~found.present & matched)
    kept = passing.copy() if len(unvectored) else passing
    kept[unvectored] = True
    positions = np.flatnonzero(kept)
    below = total - len(positions)  # the unvectored kept ones have no cosine to pass
    cosine = found.values[positions]
    passed = cosine[passing[positions]] if len(unvectored) else cosine
    shares = keyword[positions] / scale if scale > 0 else np.zeros(len(positions))
    weight = policy.keyword_weight
    # Clipped before widening: 0 and 1 are float32s, so each double is the one clipping the
    # widened cosine gives (``np.clip`` is ``minimum(1, maximum(0, x))``, NaN kept, at half
    # the cost of the two).
    clipped = np.clip(cosine, 0.0, 1.0).astype(np.float64)
    if len(unvectored):  # only those kept by keywords score 0 on cosine
        clipped = np.where(passing[positions], clipped, 0.0)
    relevance = np.minimum(1.0, (1 - weight) * clipped + weight * shares)
    # The view's best MARGIN_RANK cosines are among those that pass, when that many do.
    leading = passed if len(passed) >= MARGIN_RANK else _of_present(found)
    sure = confident(leading, best, weight_of_query, policy)
    return Screened(positions, relevance, below, False, not sure)


def _fallback(
    keyword: FloatArray,
    share: FloatArray,
    matched: npt.NDArray[np.bool_],
    found: Cosines | None,
    cosine: FloatArray,
    embedded: bool,
    policy: RecallPolicy,
) -> Screened:
    """``cairn.recall.relevance._fallback``: keyword matches if any; else, over an embedded
    view, the rows whose cosine reaches ``weak_floor``, by blended relevance (``weak``)."""
    total = len(keyword)
    if matched.any() or not embedded or found is None:
        positions = np.flatnonzero(matched)
        if policy.fusion == "rrf":
            ranks = _ranks(positions, keyword[positions])
            relevance = (1.0 / (policy.rrf_k + ranks)) / (1 / (policy.rrf_k + 1))
        else:
            relevance = share[positions]
    else:
        positions = np.flatnonzero(found.present & (cosine >= policy.weak_floor))
        weight = policy.keyword_weight
        clipped = np.minimum(1.0, np.maximum(0.0, cosine[positions]))
        relevance = np.minimum(1.0, (1 - weight) * clipped + weight * share[positions])
    keyword_only = bool(total) or not embedded
    weak = embedded and bool(len(positions))
    return Screened(positions, relevance, total - len(positions), keyword_only, weak)


def _ranks(positions: IntArray, key: FloatArray) -> FloatArray:
    """1-based rank of each position, higher key first, ties by position (record id)."""
    order = np.lexsort((positions, -key))
    ranks = np.empty(len(positions), dtype=np.float64)
    ranks[order] = np.arange(1, len(positions) + 1, dtype=np.float64)
    return ranks
