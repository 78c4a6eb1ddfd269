"""``streamDeliveryResources`` on CreateMemory, UpdateMemory and GetMemory.

The service's shape: ``{"resources": [{"kinesis": {"dataStreamArn", "contentConfigurations":
[{"type": "MEMORY_RECORDS", "level": "METADATA_ONLY" | "FULL_CONTENT"}]}}]}``, at most one
resource, exactly one content configuration. cairn keeps it as ``memories.StreamDelivery``
and answers it back as given; ``resources: []`` on UpdateMemory turns delivery off. What is
delivered, and by whom in each deployment shape, is docs/deploy.md's "Record streaming".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, get_args

from pydantic import ValidationError

from cairn.api.errors import ApiError
from cairn.memories import StreamDelivery, StreamLevel

FIELD = "streamDeliveryResources"


def stream_from_wire(
    wire: Any,
    now: datetime,
    current: StreamDelivery | None = None,
    *,
    deliverable: frozenset[str] | None = None,
) -> StreamDelivery | None:
    """The delivery ``wire`` asks for (``None``: none), or a 400 naming what is wrong (a
    stream outside ``deliverable``, when given, included). It is enabled ``now`` unless it
    keeps ``current``'s stream (a level change only)."""
    if not isinstance(wire, dict) or not isinstance(wire.get("resources"), list):
        raise _invalid(FIELD, "give an object with a resources list")
    resources = wire["resources"]
    if not resources:
        return None
    if len(resources) > 1:
        raise _invalid(f"{FIELD}.resources", "give at most one resource")
    (resource,) = resources
    kinesis = resource.get("kinesis") if isinstance(resource, dict) else None
    if not isinstance(kinesis, dict):
        raise _invalid(f"{FIELD}.resources[0]", "give a kinesis resource")
    configurations = kinesis.get("contentConfigurations")
    field = f"{FIELD}.resources[0].kinesis.contentConfigurations"
    if not isinstance(configurations, list) or len(configurations) != 1:
        raise _invalid(field, "give exactly one content configuration")
    (content,) = configurations
    if not isinstance(content, dict) or content.get("type") != "MEMORY_RECORDS":
        raise _invalid(f"{field}[0].type", "the only content type is MEMORY_RECORDS")
    level = content.get("level")
    if level is not None and level not in get_args(StreamLevel):
        raise _invalid(f"{field}[0].level", "give METADATA_ONLY or FULL_CONTENT")
    arn = kinesis.get("dataStreamArn")
    kept = current is not None and current.data_stream_arn == arn
    enabled_at = current.enabled_at if current is not None and kept else now
    field = f"{FIELD}.resources[0].kinesis.dataStreamArn"
    try:
        stream = StreamDelivery(data_stream_arn=arn, level=level, enabled_at=enabled_at)
    except ValidationError:
        raise _invalid(
            field,
            "give a Kinesis data stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>)",
        ) from None
    if deliverable is not None and stream.data_stream_arn not in deliverable:
        named = ", ".join(sorted(deliverable)) or "none (deploy it with -c recordStreamArn=...)"
        raise _invalid(field, f"this deployment delivers only to the stream it names: {named}")
    return stream


def stream_to_wire(stream: StreamDelivery) -> dict[str, Any]:
    content: dict[str, Any] = {"type": "MEMORY_RECORDS"}
    if stream.level is not None:
        content["level"] = stream.level
    kinesis = {"dataStreamArn": stream.data_stream_arn, "contentConfigurations": [content]}
    return {"resources": [{"kinesis": kinesis}]}


def _invalid(field: str, remedy: str) -> ApiError:
    return ApiError.validation(f"{field}: {remedy}", field=field)
