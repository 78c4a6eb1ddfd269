"""The recall index's counterparts of query understanding: the document frequencies the
subject rewrite reads (``cairn.recall.subject``) and the confidence bar that labels a block
weak (``cairn.recall.relevance.confident``), computed from postings and arrays so that every
value is the one the scan computes over its candidates."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from cairn.recall.index.layout import whole
from cairn.recall.index.snapshot import IntArray, Snapshot
from cairn.recall.query import RecallPolicy
from cairn.recall.relevance import MARGIN_RANK

if TYPE_CHECKING:  # scoring imports this module; its Cosines is only named in annotations
    from cairn.recall.index.scoring import Cosines


def frequency_of(snapshot: Snapshot, view: IntArray) -> Callable[[str], int]:
    """How many of the view's rows hold a term, counted from its postings (as
    ``query_weight`` counts them)."""
    everything = whole(snapshot, view)
    held = np.ones(0, dtype=bool)
    if not everything:
        held = np.zeros(snapshot.size, dtype=bool)
        held[view] = True

    def frequency(term: str) -> int:
        posting = snapshot.postings.get(term)
        if posting is None:
            return 0
        return len(posting[0]) if everything else int(held[posting[0]].sum())

    return frequency


def confident(
    found: Cosines,
    best: float,
    weight_of_query: float,
    policy: RecallPolicy,
) -> bool:
    """``cairn.recall.relevance.confident`` over the view: the same best cosine, the same
    ``MARGIN_RANK``-th one and the same keyword share."""
    scale = max(best, weight_of_query)
    if (best / scale if scale > 0 else 0.0) >= policy.confident_keyword:
        return True
    present = found.values if found.present.all() else found.values[found.present]
    if not len(present):
        return False
    # The best MARGIN_RANK cosines, unordered (a partition, not a sort of the whole view).
    rank = min(MARGIN_RANK, len(present))
    leaders = np.partition(present, len(present) - rank)[len(present) - rank :]
    top, runner = float(leaders.max()), float(leaders.min())
    return top >= policy.confident_cosine or top - runner >= policy.confident_margin
