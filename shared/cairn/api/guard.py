"""What a principal may do, applied to each request before anything is read (issue 17).

``admit`` runs in the router for every operation: the operation's access (read, write,
control) and, when the request names an actor (``actorId``: events, sessions), that actor.
Both depend only on the principals document, never on what is stored, so a refusal says nothing
about whether the actor exists: a principal gets the same 403 for an actor it may not touch
whether or not that actor has anything.

Operations that find records or jobs by id, or read across actors, narrow through the helpers
below: a record or job of an actor the principal may not touch answers exactly as a missing one
(404), and fan-out reads (ListActors, ListMemoryRecords, RetrieveMemoryRecords,
ListMemoryExtractionJobs) see only what the principal may touch, as if nothing else existed.
Without principals (``ApiContext.principal`` is None) every helper lets everything through.
"""

from __future__ import annotations

from typing import Any

from cairn.api.context import ApiContext
from cairn.api.errors import ApiError
from cairn.api.principals import Access, Principal

_READS = (
    "GetEvent",
    "ListEvents",
    "ListActors",
    "ListSessions",
    "RetrieveMemoryRecords",
    "ListMemoryRecords",
    "GetMemoryRecord",
    "ListMemoryExtractionJobs",
)
_WRITES = (
    "CreateEvent",
    "DeleteEvent",
    "IngestData",
    "DeleteMemoryRecord",
    "BatchCreateMemoryRecords",
    "BatchUpdateMemoryRecords",
    "BatchDeleteMemoryRecords",
    "StartMemoryExtractionJob",
)
_CONTROL = ("CreateMemory", "UpdateMemory", "DeleteMemory")
# Reading a memory's configuration (its strategies and templates, no content) needs any access.
_ANY_ACCESS = ("GetMemory", "ListMemories")

OPERATION_ACCESS: dict[str, Access | None] = {
    **dict.fromkeys(_READS, Access.READ),
    **dict.fromkeys(_WRITES, Access.WRITE),
    **dict.fromkeys(_CONTROL, Access.CONTROL),
    **dict.fromkeys(_ANY_ACCESS, None),
}


def admit(principal: Principal, operation: str, params: dict[str, Any]) -> None:
    """Refuse (403) an operation the principal has no access for, or an actor it may not
    touch; an operation missing from ``OPERATION_ACCESS`` is refused too."""
    if operation not in OPERATION_ACCESS:
        raise ApiError.access_denied(f"no principal may call {operation} on this server")
    needed = OPERATION_ACCESS[operation]
    if needed is not None and not principal.may(needed):
        raise ApiError.access_denied(
            f"principal {principal.name!r} has no {needed.value} access, which {operation} needs"
        )
    actor = params.get("actorId")
    if isinstance(actor, str) and not principal.may_touch_actor(actor):
        raise ApiError.access_denied(f"principal {principal.name!r} may not touch actor {actor!r}")


def touches_actor(ctx: ApiContext, actor_id: str) -> bool:
    """Whether the request's principal may touch the actor's events, sessions and jobs."""
    return ctx.principal is None or ctx.principal.may_touch_actor(actor_id)


def touches_record(ctx: ApiContext, actor_id: str, namespace: str) -> bool:
    """Whether the request's principal may touch a record of ``actor_id`` in ``namespace``."""
    return ctx.principal is None or ctx.principal.may_touch_record(actor_id, namespace)


def may_hold_visible_records(ctx: ApiContext, actor_id: str) -> bool:
    """Whether any record of the actor could be the principal's (its actor is granted, or the
    principal is granted namespaces, which any actor's records may lie under)."""
    principal = ctx.principal
    return principal is None or principal.may_touch_actor(actor_id) or bool(principal.namespaces)


def refuse_foreign_write(ctx: ApiContext, actor_id: str, namespace: str) -> None:
    """A 403 for writing a record the principal may not touch (named by the write itself, so
    the refusal depends on the document alone)."""
    if not touches_record(ctx, actor_id, namespace):
        name = ctx.principal.name if ctx.principal is not None else ""
        raise ApiError.access_denied(
            f"principal {name!r} may not write records in namespace {namespace!r}"
        )
