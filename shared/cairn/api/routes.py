"""Routing on the raw path: split on ``/`` first, percent-decode each segment after.

AgentCore clients percent-encode each URI label, ``/`` included (an actor ``user/a1`` arrives
as ``user%2Fa1``, reference §1), so decoding the path before splitting would break it apart.
The table is built from the vendored service models: every memory operation's method and
``requestUri``, both planes in one table (their paths do not collide).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from cairn.api.errors import ApiError
from cairn.api.shapes import Operation, Service, load_service

DATA_PLANE = "bedrock-agentcore"
CONTROL_PLANE = "bedrock-agentcore-control"

DATA_PLANE_OPERATIONS = (
    "CreateEvent",
    "GetEvent",
    "DeleteEvent",
    "ListEvents",
    "ListActors",
    "ListSessions",
    "RetrieveMemoryRecords",
    "ListMemoryRecords",
    "GetMemoryRecord",
    "DeleteMemoryRecord",
    "BatchCreateMemoryRecords",
    "BatchUpdateMemoryRecords",
    "BatchDeleteMemoryRecords",
    "StartMemoryExtractionJob",
    "ListMemoryExtractionJobs",
    "IngestData",
)
CONTROL_PLANE_OPERATIONS = (
    "CreateMemory",
    "GetMemory",
    "UpdateMemory",
    "DeleteMemory",
    "ListMemories",
)


@dataclass(frozen=True)
class Route:
    """One operation's method and path template, split into segments (``{label}`` or literal)."""

    service: Service
    operation: Operation
    segments: tuple[str, ...]

    @property
    def literal_count(self) -> int:
        return sum(1 for segment in self.segments if not segment.startswith("{"))


@dataclass(frozen=True)
class Match:
    """The route a request took and its URI labels, percent-decoded."""

    service: Service
    operation: Operation
    labels: dict[str, str]


def _segments(path: str) -> tuple[str, ...]:
    return tuple(path.split("?", 1)[0].split("/"))


def build_routes() -> tuple[Route, ...]:
    """Every memory operation of both planes, most literal segments first."""
    routes = []
    for name, operations in (
        (DATA_PLANE, DATA_PLANE_OPERATIONS),
        (CONTROL_PLANE, CONTROL_PLANE_OPERATIONS),
    ):
        service = load_service(name)
        for op_name in operations:
            op = service.operations[op_name]
            routes.append(Route(service, op, _segments(op.request_uri)))
    # A literal segment beats a label (``/memories/create`` is CreateMemory, not a memory id).
    routes.sort(key=lambda route: -route.literal_count)
    return tuple(routes)


def _decode(segment: str, label: str) -> str:
    try:
        value = unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise ApiError.validation(
            f"the {label} in the path is not valid percent-encoded UTF-8", field=label
        ) from None
    if not value:
        raise ApiError.validation(f"the {label} in the path is empty", field=label)
    return value


def match_route(routes: Iterable[Route], method: str, raw_path: str) -> Match:
    """The operation for ``method`` on ``raw_path``; ``UnknownOperationException`` if none."""
    segments = _segments(raw_path)
    for route in routes:
        if route.operation.method != method or len(route.segments) != len(segments):
            continue
        if all(
            template.startswith("{") or template == segment
            for template, segment in zip(route.segments, segments, strict=True)
        ):
            labels = {
                template[1:-1]: _decode(segment, template[1:-1])
                for template, segment in zip(route.segments, segments, strict=True)
                if template.startswith("{")
            }
            return Match(route.service, route.operation, labels)
    raise ApiError.unknown_operation(method)
