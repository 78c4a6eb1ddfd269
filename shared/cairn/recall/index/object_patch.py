"""A stale index object caught up with the scope's change feed, instead of a full read.

An object current to feed sequence ``s`` holds every change of the scope up to ``s`` and names
the change at ``s`` by a digest (``object_codec``; ``position`` says where a full read starts).
``patch`` reads the feed's last sequence ``q`` (after the generation the caller read, so ``q``
covers every write that generation reflects) and, when ``q - s`` is at most
``MAX_PATCH_CHANGES``, the changes from ``s`` on in one feed read: they must start with the very
change the object names (a table restored from a backup reuses sequences for other changes)
and run gapless to ``q`` at least. Then it reads the heads of the records those changes name,
strongly consistent (``HeadRowReader``): an active head replaces the record's row, any other
(retracted, superseded, erased) drops it. The heads are read after the feed, so a change that
lands meanwhile is either read now or listed after the last change read; reading a record's
head twice is harmless. The result holds every change up to the last one read, and is tagged
with it. Anything else is ``None``, and the caller reads the whole scope as before the feed
existed: no position, a feed that does not reach back, too many changes, a generation that
moved with no change in the feed (a quarantine change, or a writer running code older than the
feed: its write is not in the feed, and a read whole is the only way to see it), or rows last
read whole more than ``MAX_CATCH_UP_AGE`` ago (so whatever a catch-up cannot see, such as an
older writer's write followed by a newer one's, lasts at most that long).

A vector added by re-embedding (``cairn reindex``) is a ``re-embedded`` change in the feed,
patched like any other: that record's head and its vector are read again. An object written
before that kind existed (format 3 and older, ``object_codec``) is never read, so a vector an
older writer stored with no change after it cannot hide behind a later change.

Requests: a GetItem of the sequence, one feed Query, and per 100 changed records one
BatchGetItem of heads and one of their vectors; never a read of the unchanged rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cairn.models import EmbedderId, Scope
from cairn.ports import HeadRowReader, IndexRow, RecordChange, RecordChangeFeed
from cairn.recall.index.catch_up import last_change
from cairn.recall.index.object_codec import DecodedObject

# The most changes an object is caught up by (one feed read of at most 1,000 changes, from the
# object's own change on); more, and the whole scope is read.
MAX_PATCH_CHANGES = 999
# How long an object is caught up before its rows are read whole again, in seconds.
MAX_CATCH_UP_AGE = 3600.0


@dataclass(frozen=True, slots=True)
class Patched:
    """Rows current to feed ``sequence``, whose change is named by ``change``."""

    rows: list[IndexRow]
    sequence: int | None
    change: str | None
    whole_at: float | None


def change_digest(change: RecordChange) -> str:
    """How an object names the change it is current to: no ids in the clear."""
    return hashlib.sha256(change.event_id.encode("utf-8")).hexdigest()[:32]


def position(feed: RecordChangeFeed, scope: Scope) -> tuple[int | None, str | None]:
    """Where a full read of ``scope`` starting now stands in its feed (read before the rows):
    ``catch_up.last_change``, the change named by its digest. ``(None, None)`` if the feed
    does not hold its own last change (then the object is never patched)."""
    at = last_change(feed, scope)
    if at is None:
        return None, None
    last, change = at
    return last, change_digest(change) if change is not None else None


def patch(
    base: DecodedObject,
    scope: Scope,
    embedder: EmbedderId | None,
    feed: RecordChangeFeed,
    heads: HeadRowReader,
    now: float,
) -> Patched | None:
    """``base``'s rows with every change since its sequence applied, or ``None``."""
    start, whole_at = base.sequence, base.whole_at
    if start is None or whole_at is None or not 0 <= now - whole_at <= MAX_CATCH_UP_AGE:
        return None
    last = feed.last_sequence(scope)
    if not start <= last <= start + MAX_PATCH_CHANGES:
        return None
    if start:  # read the object's own change too, to check the feed is the one it followed
        changes = feed.scope_changes(scope, after=start - 1, limit=last - start + 1)
        if not changes or changes[0].sequence != start or change_digest(changes[0]) != base.change:
            return None
        changes = changes[1:]
    else:
        changes = feed.scope_changes(scope, after=0, limit=last) if last else ()
    sequences = [change.sequence for change in changes]
    if sequences != list(range(start + 1, start + 1 + len(changes))) or start + len(changes) < last:
        return None
    if not changes:  # the generation moved without a change in the feed: see the docstring
        return None
    changed = {change.record_id for change in changes}
    fresh = heads.index_rows_of(scope, embedder, sorted(changed))
    kept = [row for row in base.rows if row.record_id not in changed]
    rows = sorted([*kept, *fresh.values()], key=lambda row: row.record_id)
    return Patched(rows, changes[-1].sequence, change_digest(changes[-1]), whole_at)
