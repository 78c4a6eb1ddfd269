"""The rows of a shortlist: what ranking reads of each, read once, and its candidate made only
when it is read.

A widening's rows are read from the snapshot's arrays for all of them at once (``ShortlistRows``)
and ranked from those lists (``GrowingRanking``): a row's score and rank key need its relevance,
confidence, last confirmation and record id only. Its candidate, the ``Relevant`` candidate the
scan would build for it (tokens, keyword score, unit vector and cosine), is made only when the
ranking is read at its position: dedup reads a prefix, so the rows ranked below it are never
made. Its version is not parsed either: ranking and dedup read the record id, confidence, last
confirmation, digest and trust from the snapshot (``SnapshotRow``), so only the entries a block
shows (and those the query's signals must look into) are parsed.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

from cairn.models import RecordVersion
from cairn.recall.candidates import Candidate, epoch_micros
from cairn.recall.index.scoring import Cosines
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot
from cairn.recall.query import RecallPolicy
from cairn.recall.ranking import Ranked, order_key, row_score
from cairn.recall.relevance import Relevant
from cairn.recall.signals import boost, looked_for

T = TypeVar("T")
_MICROS_PER_SECOND = 1_000_000
_EXACT_BELOW_SECONDS = 2.0**32


class ShortlistRows:
    """The rows at view ``positions`` with their ``relevance``: each array read once for all of
    them, each row's candidate made when ``candidate`` is first asked for it."""

    __slots__ = (
        "_candidates",
        "_cosines",
        "_fresh",
        "_keywords",
        "_matrix_rows",
        "_positions",
        "_present",
        "_rows",
        "_snapshot",
        "_tokens",
        "_trusted",
        "confidence",
        "last_seen_micros",
        "record_ids",
        "relevance",
    )

    def __init__(
        self,
        snapshot: Snapshot,
        view: IntArray,
        keyword: FloatArray,
        found: Cosines | None,
        positions: IntArray,
        relevance: FloatArray,
    ) -> None:
        rows = view[positions]
        count = len(positions)
        self._snapshot = snapshot
        self._positions: list[int] = positions.tolist()
        self._rows: list[int] = rows.tolist()
        self._keywords: list[float] = keyword[positions].tolist()
        self._present: list[bool] = [False] * count
        self._cosines: list[float] = [0.0] * count
        self._fresh: dict[int, npt.NDArray[np.float32]] = {}
        if found is not None:
            self._present = found.present[positions].tolist()
            self._cosines = found.values[positions].tolist()
            self._fresh = found.fresh
        self._matrix_rows: list[int] = snapshot.vector_rows[rows].tolist()
        self._trusted: list[bool] = snapshot.trusted[rows].tolist()
        self._tokens = _read(snapshot.tokens, self._rows)
        self._candidates: list[Candidate | None] = [None] * count
        self.record_ids = _read(snapshot.record_ids, self._rows)
        self.confidence: list[float] = snapshot.confidence[rows].tolist()
        self.relevance: list[float] = relevance.tolist()
        self.last_seen_micros = [
            _micros(snapshot, row, seconds)
            for row, seconds in zip(self._rows, snapshot.last_seen[rows].tolist(), strict=True)
        ]

    def __len__(self) -> int:
        return len(self._rows)

    def candidate(self, k: int) -> Candidate:
        """The ``k``-th row's candidate, made once."""
        made = self._candidates[k]
        if made is None:
            vector, cosine = None, None
            if self._present[k]:
                cosine = self._cosines[k]
                vector = self._fresh.get(self._positions[k])
                if vector is None:
                    vector = self._snapshot.matrix[self._matrix_rows[k]]
            lazy = SnapshotRow(
                self._snapshot,
                self._rows[k],
                self.record_ids[k],
                self.confidence[k],
                bool(self._trusted[k]),
            )
            lazy.last_seen_micros = self.last_seen_micros[k]
            made = Candidate(
                lazy=lazy,
                tokens=self._tokens[k],
                keyword=self._keywords[k],
                vector=vector,
                cosine=cosine,
            )
            self._candidates[k] = made
        return made

    def boosted(self, query_text: str, now: datetime, policy: RecallPolicy) -> list[float]:
        """The rows' relevance after the query's signals (``boost``): their candidates are
        made only when a signal must look into them."""
        if not any(looked_for(query_text, now, policy)):
            return self.relevance
        shares = enumerate(self.relevance)
        items = [Relevant(candidate=self.candidate(k), relevance=r) for k, r in shares]
        return [item.relevance for item in boost(items, query_text, now, policy)]


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


def _micros(snapshot: Snapshot, row: int, seconds: float) -> int:
    """The row's last confirmation in whole microseconds: from its timestamp double when that
    is exact (``exact_micros``), else from its parsed version."""
    found = exact_micros(seconds)
    if found is None:
        return epoch_micros(snapshot.version(row).last_seen_at)
    return found


# A ranked row: its rank key, the order it was added in, its batch and index there, its
# relevance and score.
_Entry = tuple[tuple[float, float, str], int, ShortlistRows, int, float, float]


class GrowingRanking:
    """A shortlist's ranking as widenings add rows to it, in ``rank_key`` order: each row's
    score and key worked out once from its batch's lists (then the order rows were added in:
    two keys are never equal, as record ids are not, so nothing else is compared), its
    ``Ranked`` made once, when the ranking is first read at its position."""

    __slots__ = ("_entries", "_made")

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._made: dict[int, Ranked] = {}  # by the order rows were added in

    def merge(
        self, rows: ShortlistRows, relevance: Sequence[float], policy: RecallPolicy, now: datetime
    ) -> tuple[Sequence[Ranked], int]:
        """The ranking with ``rows`` merged in (``relevance`` theirs after the query's signals),
        scored as ``cairn.recall.ranking.scored`` scores them, and how many of its first
        entries are the ranking's before (all of it up to the best row added)."""
        entries, now_micros = self._entries, epoch_micros(now)
        fresh: list[_Entry] = []
        for k, share in enumerate(relevance):
            age = now_micros - rows.last_seen_micros[k]
            score = row_score(share, rows.confidence[k], age, policy)
            key = order_key(score, share, rows.record_ids[k])
            fresh.append((key, len(entries) + k, rows, k, share, score))
        unchanged = (
            bisect.bisect_left(entries, (min(f[0] for f in fresh),)) if fresh else len(entries)
        )
        entries.extend(fresh)
        entries.sort()
        return _Ranking(entries, self._made), unchanged


class _Ranking(Sequence[Ranked]):
    """The ranking's entries as ``Ranked``, each made when first read (a view: the next
    ``merge`` reorders it)."""

    __slots__ = ("_entries", "_made")

    def __init__(self, entries: list[_Entry], made: dict[int, Ranked]) -> None:
        self._entries = entries
        self._made = made

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> Ranked: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Ranked]: ...

    def __getitem__(self, index: int | slice) -> Ranked | Sequence[Ranked]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self)))]
        return self._at(index)

    def _at(self, index: int) -> Ranked:
        _, added, rows, k, share, score = self._entries[index]
        ranked = self._made.get(added)
        if ranked is None:
            ranked = Ranked(candidate=rows.candidate(k), relevance=share, score=score)
            self._made[added] = ranked
        return ranked


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
