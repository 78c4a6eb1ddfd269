"""Deliver a scope's record changes to its memory's stream, at least once, in sequence order.

``deliver_scope`` reads the scope's change feed after the scope's delivery cursor, makes one
event per change (``events.stream_event``), puts them to the memory's Kinesis stream, and only
then moves the cursor. A crash between the put and the move delivers those changes again on
the next run, with the same ``eventId``s: at least once, a redelivery recognisable. A change
committed before the memory's delivery was enabled (``StreamDelivery.enabled_at``) is passed
over (the cursor moves past it, nothing is put), and so is a ``re-embedded`` change (a vector
stored by ``cairn reindex``: derived data, no record event of the service's); a memory without
delivery is not read at all.
A memory deleted since (DeleteMemory erases every record first) still has its erasures
delivered, as tombstones, to the stream the scope's cursor last delivered to: a consumer that
was sent content is told it is gone.

Two deliverers of one scope at once (two stream triggers in flight) both put, and the cursor
only ever moves forward (``StreamCursors.advance`` is conditional): duplicates, never a gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from cairn.errors import MemoryNotFoundError, RecordNotFoundError
from cairn.memories import StreamDelivery
from cairn.models import RecordVersion, Scope
from cairn.ports import MemoryConfigStore, RecordChange, RecordChangeFeed, RecordStore
from cairn.streaming.events import EVENT_TYPES, stream_event

PAGE = 500  # Kinesis PutRecords takes at most 500 records
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class StreamCursors(Protocol):
    def delivered(self, scope: Scope) -> tuple[int, str | None]:
        """The last change sequence of the scope delivered (0 before the first) and the
        stream it was delivered to (``None`` before the first)."""
        ...

    def advance(self, scope: Scope, to: int, stream_arn: str) -> None:
        """Move the cursor to ``to`` (delivered to ``stream_arn``); a cursor already there or
        past it (another deliverer) stays where it is."""
        ...


class EventSink(Protocol):
    def put(self, stream_arn: str, events: Sequence[dict[str, Any]]) -> None:
        """Put every event to the stream (partition key: the event's scope), or raise a
        retryable error having put only some: the caller delivers them all again."""
        ...


def deliver_scope(
    scope: Scope,
    *,
    feed: RecordChangeFeed,
    records: RecordStore,
    memories: MemoryConfigStore,
    cursors: StreamCursors,
    sink: EventSink,
) -> int:
    """Deliver every change of ``scope`` after its cursor; return how many events were put."""
    after, delivered_to = cursors.delivered(scope)
    try:
        stream: StreamDelivery | None = memories.get(scope.memory_id).stream
    except MemoryNotFoundError:
        if delivered_to is None:
            return 0  # deleted before anything of the scope was delivered: nothing to retract
        # Every record of a deleted memory is erased, so each event is a tombstone.
        stream = StreamDelivery(data_stream_arn=delivered_to, enabled_at=_EPOCH)
    if stream is None:
        return 0
    put = 0
    while page := feed.scope_changes(scope, after, limit=PAGE):
        events = [
            stream_event(c, _version(records, scope, c), stream)
            for c in page
            if c.at >= stream.enabled_at and c.kind in EVENT_TYPES
        ]
        if events:
            sink.put(stream.data_stream_arn, events)
            put += len(events)
        after = page[-1].sequence
        cursors.advance(scope, after, stream.data_stream_arn)
    return put


def _version(records: RecordStore, scope: Scope, change: RecordChange) -> RecordVersion | None:
    if change.kind == "erased":
        return None  # a tombstone: no read, no content
    try:
        return records.get_version(scope, change.record_id, change.version)
    except RecordNotFoundError:
        return None
