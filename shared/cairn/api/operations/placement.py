"""Which cairn scope an AgentCore record lives in, and finding it again by id or namespace.

AgentCore's record operations name no actor; cairn keeps long-term memory per actor. A record
written through the API is filed in the scope of the actor its namespace names through the
memory's strategy templates (``cairn.memories.actor_of``), else in the memory-wide scope of the
reserved actor ``cairn:shared``. Each placement is recorded in the ``RecordDirectory``, which
answers "where is record X" and "whose records lie under namespace N". Records written by cairn
itself (the ``cairn`` command) are not placed, so the API does not see them.
"""

from __future__ import annotations

from typing import Any

from cairn.api.context import ApiContext, scope_of
from cairn.api.errors import ApiError
from cairn.errors import RecordNotFoundError
from cairn.memories import MemoryConfig, actor_of
from cairn.models import RecordVersion, Scope, Status

# Records whose namespace names no actor; an AgentCore actor with this id shares their scope.
SHARED_ACTOR_ID = "cairn:shared"


def actor_for(memory: MemoryConfig, namespace: str, strategy_id: str | None) -> str:
    """The actor whose scope a record in ``namespace`` is filed in."""
    return actor_of(memory, namespace, strategy_id) or SHARED_ACTOR_ID


def located(
    ctx: ApiContext, memory: MemoryConfig, record_id: str, namespace: str | None = None
) -> tuple[Scope, RecordVersion]:
    """The scope and live head of a record placed in ``memory``; 404 if there is none (or it
    was deleted, or it is not in ``namespace`` when one is given)."""
    try:
        placement = ctx.directory.locate(memory.memory_id, record_id)
        scope = scope_of(memory, placement.actor_id)
        head = ctx.records.get(scope, record_id)
    except RecordNotFoundError:
        raise ApiError.not_found(f"memory record {record_id!r} does not exist") from None
    if head.status is not Status.ACTIVE:
        raise ApiError.not_found(f"memory record {record_id!r} was deleted")
    if namespace is not None and head.namespace != namespace:
        raise ApiError.not_found(f"memory record {record_id!r} is not in that namespace")
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
