"""The recall index's counterparts of query understanding: what a search reads from its query
text (its terms, the subject rewrite of ``cairn.recall.subject``, its term weight) and the
confidence bar that labels a block weak (``cairn.recall.relevance.confident``), computed from
postings and arrays so that every value is the one the scan computes over its candidates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cairn.recall.index.layout import whole
from cairn.recall.index.snapshot import IntArray, Snapshot
from cairn.recall.keywords import query_terms, tokenize
from cairn.recall.query import RecallPolicy
from cairn.recall.relevance import MARGIN_RANK, term_weight
from cairn.recall.subject import subject_left_out


@dataclass(frozen=True, slots=True)
class Understood:
    """What a search reads from its query text, worked out once over its view: the distinct
    keyword terms (``query_terms``), the text embedded (``embedding_text``), whether only the
    words naming the subject would match (``only_the_subject_matched``: BM25 then scores
    nothing) and the query's term weight (``cairn.recall.relevance.query_weight``)."""

    terms: tuple[str, ...]
    embedded: str
    only_subject: bool
    weight: float


def understand(snapshot: Snapshot, view: IntArray, text: str, policy: RecallPolicy) -> Understood:
    """``text`` understood over the view's document frequencies (each term counted once)."""
    frequency = frequency_of(snapshot, view)
    tokens = tokenize(text)
    embedded, only_subject = subject_left_out(
        text, tokens, frequency, len(view), policy.subject_share
    )
    terms = query_terms(tokens)
    weight = weight_of(terms, frequency, len(view))
    return Understood(terms=terms, embedded=embedded, only_subject=only_subject, weight=weight)


def weight_of(terms: tuple[str, ...], frequency: Callable[[str], int], total: int) -> float:
    """``cairn.recall.relevance.query_weight`` of the distinct ``terms`` among ``total`` rows:
    each term's idf, summed in the terms' order."""
    if not terms or not total:
        return 0.0
    return term_weight([frequency(term) for term in terms], total)


def frequency_of(snapshot: Snapshot, view: IntArray) -> Callable[[str], int]:
    """How many of the view's rows hold a term, counted from its postings (as
    ``query_weight`` counts them) the first time it is asked."""
    everything = whole(snapshot, view)
    held = np.zeros(0 if everything else snapshot.size, dtype=bool)  # read only for a part
    if not everything:
        held[view] = True
    counted: dict[str, int] = {}

    def frequency(term: str) -> int:
        found = counted.get(term)
        if found is None:
            posting = snapshot.postings.get(term)
            if posting is None:
                found = 0
            else:
                found = len(posting[0]) if everything else int(np.count_nonzero(held[posting[0]]))
            counted[term] = found
        return found

    return frequency


def confident(
    cosines: npt.NDArray[np.float32],
    best: float,
    weight_of_query: float,
    policy: RecallPolicy,
) -> bool:
    """``cairn.recall.relevance.confident`` over the view: the same best cosine, the same
    ``MARGIN_RANK``-th one and the same keyword share. ``cosines``: the view's cosines, or
    any of them that hold its ``MARGIN_RANK`` best."""
    scale = max(best, weight_of_query)
    if (best / scale if scale > 0 else 0.0) >= policy.confident_keyword:
        return True
    if not len(cosines):
        return False
    top = float(cosines.max())
    if top >= policy.confident_cosine:  # the runner-up is not needed
        return True
    # The MARGIN_RANK-th best cosine: a partition, not a sort of the whole view.
    rank = min(MARGIN_RANK, len(cosines))
    runner = float(np.partition(cosines, len(cosines) - rank)[len(cosines) - rank])
    return top - runner >= policy.confident_margin
