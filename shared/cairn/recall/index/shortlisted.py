"""The candidates of a shortlist's rows: what ranking and dedup read of each, read once.

Each row becomes the ``Relevant`` candidate the scan would build for it (tokens, keyword
score, unit vector and cosine), with the arrays read for all the rows at once. Its version is
not parsed: ranking and dedup read the record id, confidence, last confirmation, digest and
trust from the snapshot (``SnapshotRow``), so only the entries a block shows (and those the
query's signals must look into) are parsed.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from cairn.models import RecordVersion
from cairn.recall.candidates import Candidate, epoch_micros
from cairn.recall.index.scoring import Cosines
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot
from cairn.recall.ranking import Ranked, rank_key
from cairn.recall.relevance import Relevant

T = TypeVar("T")
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
    confidence = snapshot.confidence[rows].tolist()
    trusted = snapshot.trusted[rows].tolist()
    last_seen = snapshot.last_seen[rows].tolist()
    matrix, listed = snapshot.matrix, rows.tolist()
    tokens, record_ids = _read(snapshot.tokens, listed), _read(snapshot.record_ids, listed)
    made: list[Relevant] = []
    shares = relevance.tolist()
    for k, (position, row) in enumerate(zip(positions.tolist(), listed, strict=True)):
        vector, cosine = None, None
        if present[k]:
            cosine = values[k]
            vector = fresh.get(position)
            if vector is None:
                vector = matrix[matrix_rows[k]]
        lazy = SnapshotRow(snapshot, row, record_ids[k], confidence[k], bool(trusted[k]))
        lazy.last_seen_micros = _micros(lazy, last_seen[k])
        candidate = Candidate(
            lazy=lazy, tokens=tokens[k], keyword=keywords[k], vector=vector, cosine=cosine
        )
        made.append(Relevant(candidate=candidate, relevance=shares[k]))
    return made


def _read(column: Sequence[T], rows: list[int]) -> list[T]:
    """``[column[row] for row in rows]``, in one call where the column can (a mapped one)."""
    many = getattr(column, "many", None)
    return list(many(rows)) if many is not None else [column[row] for row in rows]


class SnapshotRow:
    """A snapshot row as ranking and dedup read it (``cairn.recall.candidates.LazyVersion``):
    each value the row's version holds, read from the snapshot's arrays once, when the row
    joins a shortlist (ranking, sorting and dedup read them again and again)."""

    __slots__ = (
        "_digest",
        "_row",
        "_snapshot",
        "confidence",
        "last_seen_micros",
        "record_id",
        "trusted",
    )

    def __init__(
        self, snapshot: Snapshot, row: int, record_id: str, confidence: float, trusted: bool
    ) -> None:
        self._snapshot = snapshot
        self._row = row
        self._digest: str | None = None
        self.record_id = record_id
        self.confidence = confidence
        self.trusted = trusted
        self.last_seen_micros = 0

    @property
    def content_digest(self) -> str:
        if self._digest is None:
            self._digest = self._snapshot.content_digest(self._row)
        return self._digest

    def load(self) -> RecordVersion:
        return self._snapshot.version(self._row)


def _micros(row: SnapshotRow, seconds: float) -> int:
    """The row's last confirmation in whole microseconds: from its timestamp double when that
    is exact (``exact_micros``), else from its parsed version."""
    found = exact_micros(seconds)
    if found is None:
        return epoch_micros(row.load().last_seen_at)
    return found


class GrowingRanking:
    """A shortlist's ranking as widenings add rows to it, in ``rank_key`` order, each row's key
    worked out once (then the order rows were added in: two keys are never equal, as record
    ids are not, so a ``Ranked`` is never compared)."""

    __slots__ = ("_keyed",)

    def __init__(self) -> None:
        self._keyed: list[tuple[tuple[float, float, str], int, Ranked]] = []

    def merge(self, added: Sequence[Ranked]) -> tuple[list[Ranked], int]:
        """The ranking with ``added`` merged in, and how many of its first entries are the
        ranking's before (all of it up to the best row added)."""
        keyed = self._keyed
        fresh = [(rank_key(item), len(keyed) + k, item) for k, item in enumerate(added)]
        unchanged = bisect.bisect_left(keyed, (min(f[0] for f in fresh),)) if fresh else len(keyed)
        keyed.extend(fresh)
        keyed.sort()
        return [item for _, _, item in keyed], unchanged


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
