"""Step 2b over a snapshot: context expansion (``cairn.recall.expansion``) on the few hits
that lend, walking their threads' rows (``Snapshot.row_threads``, ``Snapshot.thread_rows``; no
lender's version is parsed), with the screened positions and relevance kept in arrays (half a
scope may pass the floor)."""

from __future__ import annotations

import numpy as np

from cairn.recall.index.layout import whole
from cairn.recall.index.scoring import Screened
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot
from cairn.recall.query import RecallPolicy
from cairn.recall.question import context_lenders


def expand(
    snapshot: Snapshot, view: IntArray, screened: Screened, policy: RecallPolicy, text: str
) -> tuple[IntArray, FloatArray, int]:
    """``cairn.recall.expansion.expand``: the relevant view positions and their relevance after
    the hits lend (the screened positions in order, then the admitted ones ascending), and how
    many positions the loans admitted. Arrays throughout: half a scope may pass the floor."""
    positions, relevance = screened.positions, screened.relevance
    if policy.context_weight == 0 or not len(positions):
        return positions, relevance, 0
    lent = _lent(snapshot, view, screened, policy, context_lenders(policy, text))
    if not lent:
        return positions, relevance, 0
    # A dozen loans or so: each is looked up among the screened positions (which ascend,
    # ``flatnonzero``) one by one.
    spots = sorted(lent)
    raised: list[tuple[int, float]] = []  # (index into positions, the larger relevance)
    joining: list[int] = []
    for spot, at in zip(spots, np.searchsorted(positions, spots).tolist(), strict=True):
        share = lent[spot]
        if at < len(positions) and positions[at] == spot:
            if share > relevance[at]:
                raised.append((at, share))
        elif share >= policy.relevance_floor:
            joining.append(spot)
    if joining:  # the concatenation is the copy the loans are written to
        positions = np.concatenate((positions, np.array(joining, dtype=np.int64)))
        relevance = np.concatenate((relevance, [lent[spot] for spot in joining]))
    elif raised:
        relevance = relevance.copy()
    for at, share in raised:
        relevance[at] = share
    return positions, relevance, len(joining)


def _lent(
    snapshot: Snapshot, view: IntArray, screened: Screened, policy: RecallPolicy, hits: int
) -> dict[int, float]:
    """The best relevance each view position is lent by the neighbours of the ``hits`` most
    relevant screened positions (``cairn.recall.expansion``), walking each lender's threads."""
    positions, relevance = screened.positions, screened.relevance
    order = _leaders(positions, relevance, min(hits, len(positions)))
    everything = whole(snapshot, view)
    if everything:
        in_view = view
    else:
        in_view = np.full(snapshot.size, -1, dtype=np.int64)
        in_view[view] = np.arange(len(view))
    span, window, weight = policy.context_span, policy.context_window_seconds, policy.context_weight
    lent: dict[int, float] = {}
    for j in order.tolist():
        hit_relevance = float(relevance[j])
        row = int(view[int(positions[j])])
        for thread in snapshot.row_threads[row]:
            members = snapshot.thread_rows[thread]
            # The members' view positions (a row's own, when the view is every row), their
            # first_seen_at in microseconds, and where the lender is among them.
            at = int(np.flatnonzero(members.rows == row)[0])
            when = int(members.first_seen_us[at])
            targets, instants = members.rows.tolist(), members.first_seen_us.tolist()
            if not everything:  # only the members in view (the lender is one)
                placed = in_view[members.rows]
                kept = np.flatnonzero(placed >= 0)
                at = int(np.searchsorted(kept, at))
                targets, instants = placed[kept].tolist(), members.first_seen_us[kept].tolist()
            for step in (-1, 1):
                index, distance = at + step, 0
                while 0 <= index < len(instants) and distance < span:
                    # Exactly timedelta.total_seconds(): whole microseconds over 10**6.
                    gap = abs(instants[index] - when) / 1_000_000
                    if gap > window:
                        break
                    if gap > 0:
                        distance += 1
                        share = hit_relevance * weight**distance
                        target = targets[index]
                        lent[target] = max(lent.get(target, 0.0), share)
                    index += step
    return lent


def _leaders(positions: IntArray, relevance: FloatArray, count: int) -> IntArray:
    """``np.lexsort((positions, -relevance))[:count]`` without sorting every row: the rows
    at least as relevant as the ``count``-th best (ties included), then sorted."""
    if len(relevance) > count:
        least = np.partition(relevance, len(relevance) - count)[len(relevance) - count]
        among = np.flatnonzero(relevance >= least)
    else:
        among = np.arange(len(relevance))
    chosen: IntArray = among[np.lexsort((positions[among], -relevance[among]))][:count]
    return chosen
