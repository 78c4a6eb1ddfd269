"""The candidates of a shortlist's rows: what ranking and dedup read of each, read once.

Each row becomes the ``Relevant`` candidate the scan would build for it (tokens, keyword
score, unit vector and cosine), with the arrays read for all the rows at once. Its version is
not parsed: ranking and dedup read the record id, confidence, last confirmation, digest and
trust from the snapshot (``SnapshotRow``), so only the entries a block shows (and those the
query's signals must look into) are parsed.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cairn.models import RecordVersion
from cairn.recall.candidates import Candidate, epoch_micros
from cairn.recall.index.scoring import Cosines
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot
from cairn.recall.relevance import Relevant

_MICROS_PER_SECOND = 1_000_000
_EXACT_BELOW_SECONDS = 2.0**32


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
    matrix, tokens = snapshot.matrix, snapshot.tokens
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
            lazy=SnapshotRow(snapshot, row),
            tokens=tokens[row],
            keyword=keywords[k],
            vector=vector,
            cosine=cosine,
        )
        made.append(Relevant(candidate=candidate, relevance=shares[k]))
    return made


class SnapshotRow:
    """A snapshot row as ranking and dedup read it (``cairn.recall.candidates.LazyVersion``):
    each value the row's version holds, read from the snapshot's arrays."""

    __slots__ = ("_row", "_snapshot")

    def __init__(self, snapshot: Snapshot, row: int) -> None:
        self._snapshot = snapshot
        self._row = row

    @property
    def record_id(self) -> str:
        return self._snapshot.record_ids[self._row]

    @property
    def confidence(self) -> float:
        return float(self._snapshot.confidence[self._row])

    @property
    def last_seen_micros(self) -> int:
        seconds = float(self._snapshot.last_seen[self._row])
        found = exact_micros(seconds)
        if found is None:
            return epoch_micros(self.load().last_seen_at)
        return found

    @property
    def content_digest(self) -> str:
        return self._snapshot.content_digest(self._row)

    @property
    def trusted(self) -> bool:
        return bool(self._snapshot.trusted[self._row])

    def load(self) -> RecordVersion:
        return self._snapshot.version(self._row)


def exact_micros(seconds: float) -> int | None:
    """The whole microseconds since the epoch whose ``datetime.timestamp()`` is ``seconds``
    (microseconds over 10**6, correctly rounded), or ``None`` past 2**32 seconds (the year
    2106), where two microseconds may share a double.

    Below that a double is within 0.48 µs of the instant it came from, so at most one whole
    microsecond rounds to it: the one that does, found near ``seconds * 10**6``, is the row's.
    """
    if not abs(seconds) < _EXACT_BELOW_SECONDS:
        return None
    guess = round(seconds * _MICROS_PER_SECOND)
    for micros in (guess, guess - 1, guess + 1):
        if micros / _MICROS_PER_SECOND == seconds:
            return micros
    return None
