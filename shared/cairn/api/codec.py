"""Wire JSON <-> cairn values for timestamps and events.

Timestamps travel as JSON numbers of epoch seconds, in both directions (the service's own
format; botocore parses numbers and ISO strings alike). Event timestamps are kept at millisecond
resolution, as AgentCore stores and orders them. Payloads keep their wire form: a blob is any
JSON value, stored as parsed and returned as stored, so it round-trips exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from cairn.models import (
    BlobPayload,
    Branch,
    Conversational,
    Event,
    EventInput,
    JsonPayload,
    Payload,
    Role,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_epoch(seconds: float) -> datetime:
    """An aware UTC datetime for epoch seconds (the validator has checked the range)."""
    return EPOCH + timedelta(seconds=seconds)


def from_epoch_millis(seconds: float) -> datetime:
    """Epoch seconds truncated to the millisecond, AgentCore's event-time resolution."""
    moment = from_epoch(seconds)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def to_epoch(moment: datetime) -> float | int:
    """Epoch seconds of an aware datetime: an int when whole, else a float."""
    delta = moment - EPOCH
    whole = delta.days * 86_400 + delta.seconds
    if delta.microseconds == 0:
        return whole
    return whole + delta.microseconds / 1_000_000


def payload_from_wire(item: dict[str, Any]) -> Payload:
    """One validated wire payload item (exactly one member set) as a cairn payload."""
    if item.get("conversational") is not None:
        conversational = item["conversational"]
        return Conversational(
            role=Role(conversational["role"]), text=conversational["content"]["text"]
        )
    if item.get("json") is not None:
        return JsonPayload(document=item["json"]["content"])
    return BlobPayload(blob=item["blob"])


def payload_to_wire(payload: Payload) -> dict[str, Any]:
    if isinstance(payload, Conversational):
        return {"conversational": {"content": {"text": payload.text}, "role": payload.role.value}}
    if isinstance(payload, JsonPayload):
        return {"json": {"content": payload.document}}
    return {"blob": payload.blob}


def string_metadata_from_wire(metadata: dict[str, Any] | None) -> dict[str, str]:
    """Event metadata ``{key: {stringValue}}`` as cairn's plain string map."""
    return {key: value["stringValue"] for key, value in (metadata or {}).items()}


def string_metadata_to_wire(metadata: dict[str, str]) -> dict[str, Any]:
    return {key: {"stringValue": value} for key, value in metadata.items()}


def event_input_from_wire(
    body: dict[str, Any], *, session_id: str, timestamp_key: str = "eventTimestamp"
) -> EventInput:
    """The ``EventInput`` a validated CreateEvent (or IngestData) body describes."""
    branch = body.get("branch")
    return EventInput(
        session_id=session_id,
        event_timestamp=from_epoch_millis(body[timestamp_key]),
        payload=tuple(payload_from_wire(item) for item in body["payload"]),
        branch=(
            Branch(name=branch["name"], root_event_id=branch.get("rootEventId")) if branch else None
        ),
        metadata=string_metadata_from_wire(body.get("metadata")),
    )


def event_to_wire(event: Event, *, include_payloads: bool = True) -> dict[str, Any]:
    """An AgentCore ``Event``; payloads are left out (an empty list) when not asked for."""
    wire: dict[str, Any] = {
        "memoryId": event.memory_id,
        "actorId": event.actor_id,
        "sessionId": event.session_id,
        "eventId": event.event_id,
        "eventTimestamp": to_epoch(event.event_timestamp),
        "payload": [payload_to_wire(p) for p in event.payload] if include_payloads else [],
    }
    if event.branch is not None:
        wire["branch"] = {"name": event.branch.name}
        if event.branch.root_event_id is not None:
            wire["branch"]["rootEventId"] = event.branch.root_event_id
    if event.metadata:
        wire["metadata"] = string_metadata_to_wire(event.metadata)
    return wire
