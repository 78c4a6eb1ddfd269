"""Which cairn scope an AgentCore record lives in, and finding it again by id or namespace.

AgentCore's record operations name no actor; cairn keeps long-term memory per actor. A record
written through the API is filed in the scope of the actor its namespace names through the
memory's strategy templates (``cairn.namespace_actors.actor_of``: exact, segment by segment),
else in the memory-wide scope of the reserved actor ``cairn:shared``, which no caller may
name. Each placement is recorded in the ``RecordDirectory``, which answers "where is record X"
and "whose records lie under namespace N". Records written by cairn
itself (the ``cairn`` command) are not placed, so the API does not see them.
"""

from __future__ import annotations

from typing import Any

from cairn.api.context import ApiContext, scope_of
from cairn.api.errors import ApiError
from cairn.api.guard import may_hold_visible_records, touches_record
from cairn.api.record_codec import expired
from cairn.errors import InvalidInputError, RecordNotFoundError
from cairn.memories import MemoryConfig
from cairn.models import RecordVersion, Scope, Status
from cairn.namespace_actors import (
    SHARED_ACTOR_ID,
    actor_of,
    prefix_reads_actor,
    refuse_nested_actor,
    refuse_nested_namespace,
    refuse_reserved_actor,
)


def actor_for(memory: MemoryConfig, namespace: str, strategy_id: str | None) -> str:
    """The actor whose scope a record in ``namespace`` is filed in; a validation error (and
    nothing written) when the namespace names two actors or a reserved one."""
    try:
        actor = actor_of(memory, namespace, strategy_id)
        if actor is not None:
            refuse_nested_namespace(memory, namespace, actor)
    except InvalidInputError as exc:
        raise ApiError.validation(exc.message, field="namespaces") from None
    return actor or SHARED_ACTOR_ID


def caller_scope(memory: MemoryConfig, actor_id: str, *, session_id: str | None = None) -> Scope:
    """The scope of the actor a caller names (events, sessions); a validation error for an
    actor id in cairn's reserved space, and, when the caller writes a session's events, for
    one whose records the templates would file under another actor's namespace."""
    try:
        refuse_reserved_actor(actor_id)
        if session_id is not None:
            refuse_nested_actor(memory, actor_id, session_id)
    except InvalidInputError as exc:
        raise ApiError.validation(exc.message, field="actorId") from None
    return scope_of(memory, actor_id)


def actors_under(ctx: ApiContext, memory: MemoryConfig, prefix: str | None) -> tuple[str, ...]:
    """The actors whose records a read under ``prefix`` (the whole memory when None) may
    return: those holding records there, less any whose id the prefix stops inside of (it
    names a shorter actor id), and less any none of whose records the request's principal may
    touch."""
    return tuple(
        actor
        for actor in ctx.directory.actors(memory.memory_id, namespace_prefix=prefix)
        if (prefix is None or prefix_reads_actor(memory, prefix, actor))
        and may_hold_visible_records(ctx, actor)
    )


def located(
    ctx: ApiContext, memory: MemoryConfig, record_id: str, namespace: str | None = None
) -> tuple[Scope, RecordVersion]:
    """The scope and live head of a record placed in ``memory``; 404 if there is none, or it
    was deleted or has expired, or it is not in ``namespace`` when one is given. All answer
    alike, so nobody learns that a record exists elsewhere (a foreign record looks missing), and
    so does a record the request's principal may not touch, before the record is read."""
    absent = ApiError.not_found(f"memory record {record_id!r} does not exist")
    try:
        placement = ctx.directory.locate(memory.memory_id, record_id)
        if not touches_record(ctx, placement.actor_id, placement.namespace):
            raise absent
        scope = scope_of(memory, placement.actor_id)
        head = ctx.records.get(scope, record_id)
    except RecordNotFoundError:
        raise absent from None
    if head.status is not Status.ACTIVE or (namespace is not None and head.namespace != namespace):
        raise absent
    if expired(head, ctx.clock.now()):
        raise absent
    return scope, head


def namespace_prefix(params: dict[str, Any]) -> str | None:
    """The prefix a Retrieve or ListMemoryRecords reads under: ``namespace`` or
    ``namespacePath``, matched on segment boundaries; neither (both are optional in the model)
    reads the whole memory; wildcards, and both at once, are refused."""
    given: dict[str, str] = {
        k: params[k] for k in ("namespace", "namespacePath") if params.get(k) is not None
    }
    if not given:
        return None
    if len(given) > 1:
        raise ApiError.validation(
            "give namespace or namespacePath, not both (leave both out to read the whole memory)",
            field="namespace",
        )
    ((field, prefix),) = given.items()
    if "*" in prefix:
        raise ApiError.validation(
            f"{field}: wildcards (*) are not supported; give a namespace prefix", field=field
        )
    return prefix
