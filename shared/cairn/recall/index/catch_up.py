"""Bringing a held snapshot up to date from the store's change feed, instead of rebuilding it.

A snapshot is built (or mapped from its file) together with the scope's position in the change
feed, read before its rows (``position``: ``last_change``, the feed's last sequence and that
very change, named by its event id): every write it does not reflect has a later sequence. When
the scope's generation moves, ``advance`` checks the feed still holds that change (a store put
back from a backup, or made again, does not: rebuilt), reads the scope's changes after it
(``scope_changes``), reads the current head of each record they name (``RecordStore.get``, and
its vector in one ``vectors`` call), and the recall answers from a ``delta.Merge``: the base
snapshot with those records' rows left out and their live heads put in (records new to the scope
appended in place). Reading a record's head now, rather than replaying the change, makes a
change seen twice (a write that landed between the position and the rows) harmless.

A delta is only a bridge to the next rebuild. ``advance`` declines (the caller rebuilds from
the rows, and a persisted snapshot is written again) when:

- the records changed since the base exceed ``delta_bound(base.size)``: ``DELTA_MIN_ROWS``
  rows, or ``DELTA_SHARE`` of the scope if that is more. An append costs the new rows; any
  other catch-up merges in O(rows) array work plus a copy of the matrix; a rebuild costs
  0.5 s at 10k and 5.7 s at 100k (quiet). So the bound keeps a rebuild to one per
  ``DELTA_SHARE`` of the scope written, a few ms per write spread over the writes, and the
  delta's own heap (its rows) a small share of the snapshot's (docs/benchmarks.md, "Catching
  up by a delta", measures it);
- a change is an erasure of a record the base holds: the base still holds its content (in
  the heap, or in its file until the erase rewrites it), and an erasure must leave no content
  behind, so the snapshot is rebuilt from the store, which no longer holds it. An erasure of
  a record the base does not hold (one that reached it by a delta, or a file the erase wrote
  again without it: ``cairn.recall.index.compact``) is taken in like a retraction: its row
  left out;
- the base is no longer whole (an erase destroyed its file under it);
- the generation moved and the feed holds no change after the base's: a write no change
  describes. Every record write and every vector stored by re-embedding
  (``VectorWriter.add_vectors``, a ``re-embedded`` change, taken in like any other: that head
  and its vector read again) is in the feed, and an apply that writes no record moves no
  generation, so this is a writer running code older than the ``re-embedded`` change (a vector
  stored with no change), or a quarantine change (DynamoDB): only a rebuild sees it (a write
  landing between the recall's generation read and its feed read, taken in already, costs a
  rebuild too many the next time, never a stale answer). A base built before the kind existed
  is never caught up from: a persisted file of that time (``snapshot_file`` format 1) is never
  read.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field

from cairn.errors import RecordNotFoundError
from cairn.models import EmbedderId, Scope
from cairn.ports import IndexRow, RecordChange, RecordChangeFeed, RecordStore
from cairn.recall.index.delta import Merge
from cairn.recall.index.snapshot import Snapshot, row_of

DELTA_MIN_ROWS = 256
DELTA_SHARE = 0.05
_PAGE = 1000  # changes read per page (the feed's largest)


def delta_bound(size: int) -> int:
    """How many records may have changed since a base of ``size`` rows before a rebuild."""
    return max(DELTA_MIN_ROWS, int(size * DELTA_SHARE))


@dataclass(frozen=True)
class Delta:
    """A base snapshot, the last change sequence applied to it, and the records changed since
    the base: each one's live head now as a row, or ``None`` (retracted, superseded, gone)."""

    base: Snapshot
    sequence: int
    # The event id of the change at ``sequence`` ("" at 0): a feed that no longer holds that
    # change there (a store put back from a backup, or made again) is not caught up from.
    anchor: str
    rows: Mapping[str, IndexRow | None] = field(default_factory=dict)
    merge: Merge | None = None  # the base merged with ``rows`` (none while they are none)

    def snapshot(self) -> Snapshot:
        """The snapshot of the scope as of ``sequence``."""
        return self.merge.snapshot if self.merge is not None else self.base

    def taking(self, sequence: int, anchor: str, changed: Mapping[str, IndexRow | None]) -> Delta:
        """This delta with ``changed`` (each record's live head now, or ``None``) taken in:
        appended in place when they are all records new to the scope that sort last, else
        merged over the base afresh."""
        rows = {**self.rows, **changed}
        if not changed:
            return Delta(self.base, sequence, anchor, rows, self.merge)
        merge = None
        added = [row for row in changed.values() if row is not None]
        if self.merge is not None and all(self._new(record_id) for record_id in changed):
            merge = self.merge.appended(added)
        if merge is None:
            live = [row for row in rows.values() if row is not None]
            merge = Merge.over(self.base, list(rows), live)
        return Delta(self.base, sequence, anchor, rows, merge)

    def holds(self, record_id: str) -> bool:
        """Whether the base holds a row of ``record_id`` (an erased record's content)."""
        ids = self.base.record_ids
        at = bisect.bisect_left(ids, record_id)
        return at < self.base.size and ids[at] == record_id

    def _new(self, record_id: str) -> bool:
        """Whether neither the base nor an earlier change held ``record_id``."""
        if record_id in self.rows:
            return False
        ids = self.base.record_ids
        at = bisect.bisect_left(ids, record_id)
        return at == self.base.size or ids[at] != record_id


def last_change(feed: RecordChangeFeed, scope: Scope) -> tuple[int, RecordChange | None] | None:
    """The scope's last change sequence and that very change, read before the rows a base or
    an object is built from (every write they miss has a later sequence): ``(0, None)`` before
    its first change, ``None`` when the feed does not hold its own last change (a position
    nothing may be caught up from)."""
    last = feed.last_sequence(scope)
    if last == 0:
        return 0, None
    found = feed.scope_changes(scope, after=last - 1, limit=1)
    if not found or found[0].sequence != last:
        return None
    return last, found[0]


def position(feed: RecordChangeFeed, scope: Scope) -> tuple[int, str] | None:
    """``last_change`` as a delta names it: the sequence and that change's event id
    (``Delta.anchor``, "" at 0)."""
    at = last_change(feed, scope)
    if at is None:
        return None
    sequence, change = at
    return sequence, change.event_id if change is not None else ""


def advance(
    delta: Delta,
    feed: RecordChangeFeed,
    records: RecordStore,
    scope: Scope,
    embedder: EmbedderId | None,
) -> Delta | None:
    """``delta`` with every change of ``scope`` after its sequence applied, or ``None`` when
    the caller must rebuild instead (see the module docstring)."""
    if not delta.base.intact():
        return None
    bound = delta_bound(delta.base.size)
    changed: dict[str, None] = {}  # every record a change names, in order, once
    sequence, anchor = delta.sequence, delta.anchor
    # The first page starts at the anchor's own change, which must still be there.
    page = feed.scope_changes(scope, max(0, sequence - 1), limit=_PAGE)
    if sequence:
        if not page or (page[0].sequence, page[0].event_id) != (sequence, anchor):
            return None
        page = page[1:]
    elif anchor:
        return None
    while True:
        for change in page:
            if change.kind == "erased" and delta.holds(change.record_id):
                return None
            changed[change.record_id] = None
        if page:
            sequence, anchor = page[-1].sequence, page[-1].event_id
        if len(changed.keys() | delta.rows.keys()) > bound:
            return None
        if len(page) < _PAGE - 1:
            break
        page = feed.scope_changes(scope, sequence, limit=_PAGE)
    if not changed:  # the generation moved with no change in the feed: see the docstring
        return None
    return delta.taking(sequence, anchor, _current_rows(records, scope, embedder, list(changed)))


def _current_rows(
    records: RecordStore, scope: Scope, embedder: EmbedderId | None, record_ids: list[str]
) -> dict[str, IndexRow | None]:
    """Each record's live head now as an index row (its vector by ``embedder``), or ``None``."""
    heads = {}
    for record_id in record_ids:
        try:
            head = records.get(scope, record_id)
        except RecordNotFoundError:
            continue
        if head.live:
            heads[record_id] = head
    vectors = (
        records.vectors(scope, [v.ref for v in heads.values()], embedder)
        if embedder is not None and heads
        else {}
    )
    found: dict[str, IndexRow | None] = dict.fromkeys(record_ids)
    for record_id, head in heads.items():
        found[record_id] = row_of(head, vectors.get(head.ref))
    return found
