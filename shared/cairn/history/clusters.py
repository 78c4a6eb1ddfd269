"""Clusters of nearby records of one scope, through the recall index's snapshot of it.

``clusters(snapshot, rows, floor, size)`` groups the snapshot rows ``rows`` (those with a
vector; the others are in none) by cosine over the snapshot's unit matrix: in the order given,
each row not yet taken gathers the nearest untaken ones at least ``floor``, up to ``size`` in
all; a cluster has two members at least. The same rows in the same order give the same
clusters. Lazily, ``_BLOCK`` seeds a product against the candidates (``_BLOCK x len(rows)``
floats at a time, never all pairs), so a reader that stops early, as a bounded run does, pays
only for the clusters it read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from cairn.recall.index.snapshot import Snapshot

_BLOCK = 256


def clusters(
    snapshot: Snapshot, rows: Sequence[int], floor: float, size: int
) -> Iterator[list[int]]:
    """Clusters of two to ``size`` of ``rows`` (each in one at most), as they are found, each
    in ascending row order; see the module."""
    with_vectors = [r for r in rows if int(snapshot.vector_rows[r]) >= 0]
    if len(with_vectors) < 2:
        return
    matrix = snapshot.matrix[[int(snapshot.vector_rows[r]) for r in with_vectors]]
    taken = np.zeros(len(with_vectors), dtype=bool)
    for start in range(0, len(with_vectors), _BLOCK):
        if taken[start : start + _BLOCK].all():
            continue
        sims = matrix[start : start + _BLOCK] @ matrix.T
        for offset, row in enumerate(sims):
            seed = start + offset
            if taken[seed]:
                continue
            row[taken] = -2.0
            row[seed] = -2.0
            near = np.flatnonzero(row >= floor)
            if near.size == 0:
                continue
            nearest = near[np.argsort(-row[near], kind="stable")][: size - 1]
            members = sorted([seed, *(int(j) for j in nearest)])
            taken[members] = True
            yield [with_vectors[j] for j in members]
