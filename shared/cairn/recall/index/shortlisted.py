"""The candidates of a shortlist's rows: what ranking and dedup read of each, read once.

Each row becomes the ``Relevant`` candidate the scan would build for it (its parsed version,
tokens, keyword score, unit vector and cosine), with the arrays read for all the rows at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cairn.recall.candidates import Candidate
from cairn.recall.index.scoring import Cosines
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot
from cairn.recall.relevance import Relevant


def relevant_rows(
    snapshot: Snapshot,
    view: IntArray,
    keyword: FloatArray,
    found: Cosines | None,
    positions: IntArray,
    relevance: FloatArray,
) -> list[Relevant]:
    """The candidates at view ``positions`` with their relevance, each array read once."""
    rows = view[positions]
    keywords = keyword[positions].tolist()
    present = [False] * len(positions)
    values: list[float] = [0.0] * len(positions)
    fresh: dict[int, npt.NDArray[np.float32]] = {}
    if found is not None:
        present = found.present[positions].tolist()
        values = found.values[positions].tolist()
        fresh = found.fresh
    matrix_rows = snapshot.vector_rows[rows].tolist()
    matrix, version, tokens = snapshot.matrix, snapshot.version, snapshot.tokens
    made: list[Relevant] = []
    shares = relevance.tolist()
    for k, (position, row) in enumerate(zip(positions.tolist(), rows.tolist(), strict=True)):
        vector, cosine = None, None
        if present[k]:
            cosine = values[k]
            vector = fresh.get(position)
            if vector is None:
                vector = matrix[matrix_rows[k]]
        candidate = Candidate(
            version=version(row),
            tokens=tokens[row],
            keyword=keywords[k],
            vector=vector,
            cosine=cosine,
        )
        made.append(Relevant(candidate=candidate, relevance=shares[k]))
    return made
