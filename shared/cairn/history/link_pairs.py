"""Which records the link job pairs: records written since its cursor, each with its nearest.

``written_since(changes, scope, after)`` reads the scope's change feed past the link job's
cursor (``JobLog.marker``) and returns each record created, revised or re-embedded since, once,
at its last sequence, and the last sequence read. ``nearest(snapshot, record_ids, floor)`` pairs
each of those records, through the recall index's snapshot of the scope (its unit matrix), with
its ``NEIGHBOURS`` nearest other live heads by cosine (at least ``floor``): the new records
against the scope, ``len(new) x N`` products, never all pairs. Each is paired back too with the
older records (not written since) it is now among the ``NEIGHBOURS`` nearest of, though they are
not among its own: of its ``MAX_BACK`` nearest older records at least ``floor``, those whose
``NEIGHBOURS``-th nearest is no nearer than it (``MAX_BACK x N`` products more a new record). A
pair is named once (lower record id first), in the group of the first new record that found it;
a record written since pairs its own, so it is never paired back, and a record the older ones
may have been paired with already (written before the last run read the feed) is not either.

The reflection job's contradictions pair the same way (``cairn.history.contradiction_flags``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from cairn.history.link_prompts import MAX_PAIRS_PER_CALL
from cairn.models import Scope
from cairn.ports import RecordChangeFeed
from cairn.recall.index.snapshot import Snapshot

# A record is paired when it is written and when it is given a vector (``re-embedded``): one
# written without a vector of the job's embedder has no neighbours until ``cairn reindex``
# stores one, and is paired then.
PAIRED_KINDS = ("created", "updated", "re-embedded")
NEIGHBOURS = 3  # per record
MAX_CHANGES_READ = 10_000  # per scope a run: the rest waits for the next run
_PAGE = 1000
MAX_BACK = 8  # per new record: the older records nearest it that may be paired back
_BLOCK = 256  # new records per product: 256 x N floats at a time, never N x N
_TIE = 1e-6  # one cosine computed in two products may differ in its last bits


@dataclass(frozen=True, slots=True)
class Pair:
    a: str  # the lower record id
    b: str
    cosine: float


@dataclass(frozen=True, slots=True)
class Written:
    """A record written since the cursor, at its last sequence, with the pairs it found."""

    sequence: int
    record_id: str
    pairs: tuple[Pair, ...] = ()


def written_since(changes: RecordChangeFeed, scope: Scope, after: int) -> tuple[list[Written], int]:
    """Each record created, revised or re-embedded after sequence ``after`` (at most
    ``MAX_CHANGES_READ`` changes read), once, at its last such sequence, in sequence order; and
    the last sequence read (``after`` when nothing changed)."""
    last: dict[str, int] = {}
    upto, read = after, 0
    while read < MAX_CHANGES_READ:  # sequences may be the store's, shared by every scope
        page = changes.scope_changes(scope, upto, limit=_PAGE)
        read += len(page)
        for change in page:
            if change.kind in PAIRED_KINDS:
                last.pop(change.record_id, None)
                last[change.record_id] = change.sequence
        if not page:
            break
        upto = page[-1].sequence
        if len(page) < _PAGE:
            break
    return [Written(seq, rid) for rid, seq in last.items()], upto


Asked = TypeVar("Asked")


def before(sequences: list[int], first_left: int) -> int:
    """The last of ``sequences`` (ascending) below ``first_left``; 0 when none is."""
    i = bisect_left(sequences, first_left)
    return sequences[i - 1] if i > 0 else 0


def ask_in_batches(
    written: Iterable[Written],
    unasked: Callable[[Written], Iterable[Asked]],
    send: Callable[[list[Asked]], bool],
    spent: Callable[[], bool] = lambda: False,
) -> int | None:
    """Ask about every pair ``unasked`` keeps of ``written`` (in sequence order), through
    ``send``, ``MAX_PAIRS_PER_CALL`` a call; ``None`` when every pair was asked, else the
    sequence of the last record all of whose pairs (and every earlier record's) were asked
    before the run stopped (0: none). ``spent`` is asked before each record is taken up; a
    ``send`` that answers ``False`` did not ask its batch whole."""
    pending: list[tuple[int, Asked]] = []
    taken: list[int] = []  # sequences of the records whose pairs are pending or asked
    for record in written:
        if spent():
            return before(taken, pending[0][0] if pending else record.sequence + 1)
        pending += [(record.sequence, item) for item in unasked(record)]
        taken.append(record.sequence)
        while len(pending) >= MAX_PAIRS_PER_CALL:
            if not send([item for _, item in pending[:MAX_PAIRS_PER_CALL]]):
                return before(taken, pending[0][0])
            pending = pending[MAX_PAIRS_PER_CALL:]
    if pending and not send([item for _, item in pending]):
        return before(taken, pending[0][0])
    return None


def read_cursor(noted: str | None) -> tuple[int, int]:
    """A pairing cursor as ``cursor_value`` noted it: the sequence paired up to, and the one the
    run that noted it read the feed up to (its snapshot held every record up to it)."""
    paired, _, read = (noted or "0").partition("/")
    return int(paired), int(read or paired)


def cursor_value(paired: int, read: int) -> str:
    return str(paired) if read <= paired else f"{paired}/{read}"


def nearest(
    snapshot: Snapshot,
    written: Sequence[Written],
    floor: float,
    *,
    leave_out: str | None = None,
    back_after: int | None = None,
) -> Iterator[Written]:
    """``written`` with each record's pairs: its ``NEIGHBOURS`` nearest live heads of the
    snapshot by cosine, at least ``floor``, nearest first; a record no longer a live head with
    a vector has none, and neither has one of strategy ``leave_out``, nor is it anyone's
    neighbour. A record written after sequence ``back_after`` is paired back too (see the
    module; ``None``: none is). Lazily, ``_BLOCK`` records a product, so a reader that stops
    early pays only for what it read."""
    positions = {rid: row for row, rid in enumerate(snapshot.record_ids)}
    matrix = snapshot.matrix
    rows_of = np.flatnonzero(np.asarray(snapshot.vector_rows) >= 0)  # matrix row -> row
    left_out = _of_strategy(snapshot, rows_of, leave_out)
    if left_out.any():
        positions = {
            rid: row for rid, row in positions.items() if not _row_left(snapshot, row, leave_out)
        }
    k = min(NEIGHBOURS, len(matrix) - 1 - int(left_out.sum()))
    news = np.zeros(len(matrix), dtype=bool)  # written: each pairs its own, none is asked back
    written_rows = [positions[w.record_id] for w in written if w.record_id in positions]
    news[[m for m in (int(snapshot.vector_rows[r]) for r in written_rows) if m >= 0]] = True
    seen: set[tuple[str, str]] = set()
    for start in range(0, len(written), _BLOCK):
        block = written[start : start + _BLOCK]
        rows = [positions.get(w.record_id, -1) for w in block]
        at = [int(snapshot.vector_rows[r]) if r >= 0 else -1 for r in rows]
        asked = [i for i, m in enumerate(at) if m >= 0]
        sims = matrix[[at[i] for i in asked]] @ matrix.T if asked and k > 0 else None
        pairs: dict[int, tuple[Pair, ...]] = {}
        if sims is not None:
            sims[np.arange(len(asked)), [at[i] for i in asked]] = -2.0  # never its own neighbour
            sims[:, left_out] = -2.0
            best = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            later = [back_after is not None and block[i].sequence > back_after for i in asked]
            back = _back(matrix, sims, best, np.array(later), news | left_out, left_out, k, floor)
            for n, i in enumerate(asked):
                found = np.concatenate([best[n], back[n]]) if later[n] else best[n]
                ids = [snapshot.record_ids[int(rows_of[j])] for j in found]
                pairs[i] = _pairs(block[i].record_id, ids, sims[n][found], floor, seen)
        for i, w in enumerate(block):
            yield Written(w.sequence, w.record_id, pairs.get(i, ()))


def _back(
    matrix: npt.NDArray[np.float32],
    sims: npt.NDArray[np.float32],
    best: npt.NDArray[np.intp],
    later: npt.NDArray[np.bool_],
    not_asked: npt.NDArray[np.bool_],
    left_out: npt.NDArray[np.bool_],
    k: int,
    floor: float,
) -> list[npt.NDArray[np.intp]]:
    """Per row of ``sims`` (a new record against the scope; none for one not ``later``), the
    matrix rows it is among the ``k`` nearest of, itself not among theirs: of its ``MAX_BACK``
    nearest others at least ``floor`` that are not ``not_asked`` (written too, or left out),
    those whose ``k``-th nearest is no nearer than it. ``MAX_BACK x N`` products a new record
    at most."""
    if not later.any() or not_asked.all():  # no older record to pair back with
        return [np.empty(0, dtype=np.intp) for _ in sims]
    wanted = sims.copy()
    wanted[:, not_asked] = -2.0
    wanted[~later] = -2.0
    wanted[np.arange(len(sims))[:, None], best] = -2.0
    width = min(MAX_BACK, wanted.shape[1])
    top = np.argpartition(-wanted, width - 1, axis=1)[:, :width]
    chosen = [row[wanted[n][row] >= floor] for n, row in enumerate(top)]
    candidates = np.unique(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.intp)
    kth: dict[int, float] = {}
    for start in range(0, len(candidates), _BLOCK):
        rows = candidates[start : start + _BLOCK]
        theirs = matrix[rows] @ matrix.T
        theirs[np.arange(len(rows)), rows] = -2.0
        theirs[:, left_out] = -2.0
        kths = -np.partition(-theirs, k - 1, axis=1)[:, k - 1]
        kth.update(zip(rows.tolist(), kths.tolist(), strict=True))
    return [
        np.array([j for j in row.tolist() if sims[n][j] >= kth[j] - _TIE], dtype=np.intp)
        for n, row in enumerate(chosen)
    ]


def _of_strategy(
    snapshot: Snapshot, rows_of: npt.NDArray[np.intp], strategy: str | None
) -> npt.NDArray[np.bool_]:
    """Per matrix row, whether its record is of ``strategy`` (none are for ``None``)."""
    if strategy is None or strategy not in snapshot.strategies:
        return np.zeros(len(rows_of), dtype=bool)
    code = snapshot.strategies.index(strategy)
    left: npt.NDArray[np.bool_] = np.asarray(snapshot.strategy_codes)[rows_of] == code
    return left


def _row_left(snapshot: Snapshot, row: int, strategy: str | None) -> bool:
    return snapshot.strategies[int(snapshot.strategy_codes[row])] == strategy


def _pairs(
    record_id: str,
    others: list[str],
    cosines: npt.NDArray[np.float32],
    floor: float,
    seen: set[tuple[str, str]],
) -> tuple[Pair, ...]:
    kept: list[Pair] = []
    for other, cosine in sorted(zip(others, cosines.tolist(), strict=True), key=lambda p: -p[1]):
        if cosine < floor:
            continue
        key = (min(record_id, other), max(record_id, other))
        if key in seen:
            continue
        seen.add(key)
        kept.append(Pair(key[0], key[1], cosine))
    return tuple(kept)
