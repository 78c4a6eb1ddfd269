"""The event delivered for one record change (docs/deploy.md, "Record streaming").

One JSON object per change: ``eventId`` (``RecordChange.event_id``: the same on every
redelivery), ``eventType`` as the service names them (``MemoryRecordCreated``,
``MemoryRecordUpdated``, ``MemoryRecordDeleted``), ``change`` (cairn's kind: created, updated,
deleted, erased; a ``re-embedded`` change is no event: ``delivery`` passes it over),
``sequence`` (the scope's change sequence: consumers order and deduplicate by
it), ids, version and time. A metadata event adds the version's namespace, strategy, status and
trust; a full-content event (``FULL_CONTENT``) adds its ``content``. The version is read when
the event is made, so a record erased since its change was written is delivered as its
tombstone (no content), and an ``erased`` change is only a tombstone: ids, never content.
"""

from __future__ import annotations

from typing import Any

from cairn.api.record_codec import wire_strategy_id
from cairn.memories import StreamDelivery
from cairn.models import RecordVersion, Status
from cairn.ports import RecordChange

EVENT_TYPES = {
    "created": "MemoryRecordCreated",
    "updated": "MemoryRecordUpdated",
    "deleted": "MemoryRecordDeleted",
    "erased": "MemoryRecordDeleted",
}


def stream_event(
    change: RecordChange, version: RecordVersion | None, stream: StreamDelivery
) -> dict[str, Any]:
    """The event for ``change``; ``version`` is the version it names as read now (``None``
    for an erasure, or when the version is no longer readable)."""
    event: dict[str, Any] = {
        "eventId": change.event_id,
        "eventType": EVENT_TYPES[change.kind],
        "eventTime": change.at.isoformat(),
        "change": change.kind,
        "sequence": change.sequence,
        "memoryId": change.memory_id,
        "actorId": change.actor_id,
        "memoryRecordId": change.record_id,
        "version": change.version,
    }
    erased = change.kind == "erased" or version is None or version.status is Status.ERASED
    if erased:
        event["tombstone"] = True
        return event
    assert version is not None  # for the type checker: erased covers None
    event["namespaces"] = [version.namespace]
    event["status"] = version.status.value
    event["trust"] = version.trust.value
    event["memoryStrategyId"] = wire_strategy_id(version)
    if stream.full_content:
        event["content"] = {"text": version.content}
    return event
