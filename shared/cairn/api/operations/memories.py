"""The control plane: CreateMemory, GetMemory, UpdateMemory, DeleteMemory, ListMemories.

A memory is ACTIVE as soon as CreateMemory answers (nothing is provisioned), so the SDK's
``create_memory_and_wait`` returns at its first poll. DeleteMemory is synchronous: it erases
every event, record, journal entry, rollout and staged payload of the memory (content destroyed,
tombstones with digests kept; ``cairn.erasure.erase_actor``, as ``cairn erase``) before it
answers ``DELETING``; a GetMemory after it is 404.
"""

from __future__ import annotations

from typing import Any

from cairn.api.codec import to_epoch
from cairn.api.context import ApiContext, scope_of
from cairn.api.idempotency import CONTROL_SCOPE, Outcome, as_stored, replay_stored, run_once
from cairn.api.operations.assembled_pages import DEFAULT_MAX_RESULTS
from cairn.api.operations.strategies import (
    namespace_key_to_wire,
    namespace_keys_from_wire,
    refuse,
    strategy_from_wire,
    strategy_to_wire,
)
from cairn.api.operations.stream_delivery import FIELD, stream_from_wire, stream_to_wire
from cairn.api.operations.updates import updated_memory
from cairn.erasure import erase_actor
from cairn.memories import (
    IndexedKey,
    MemoryConfig,
    MemoryStatus,
    memory_arn,
    new_resource_id,
)
from cairn.ports import MAX_PAGE_SIZE

UNSUPPORTED_MEMORY_FIELDS = {
    "encryptionKeyArn": "cairn encrypts with its deployment's own key, not one per memory",
}


def memory_to_wire(memory: MemoryConfig) -> dict[str, Any]:
    """An AgentCore ``Memory``."""
    wire: dict[str, Any] = {
        "arn": memory.arn,
        "id": memory.memory_id,
        "name": memory.name,
        "eventExpiryDuration": memory.event_expiry_days,
        "status": memory.status.value,
        "createdAt": to_epoch(memory.created_at),
        "updatedAt": to_epoch(memory.updated_at),
        "strategies": [strategy_to_wire(s) for s in memory.strategies],
    }
    if memory.description is not None:
        wire["description"] = memory.description
    if memory.execution_role_arn is not None:
        wire["memoryExecutionRoleArn"] = memory.execution_role_arn
    if memory.indexed_keys:
        wire["indexedKeys"] = [k.model_dump() for k in memory.indexed_keys]
    if memory.namespace_keys:
        wire["namespaceKeys"] = [namespace_key_to_wire(k) for k in memory.namespace_keys]
    if memory.stream is not None:
        wire["streamDeliveryResources"] = stream_to_wire(memory.stream)
    return wire


def _current(ctx: ApiContext, reference: dict[str, Any]) -> dict[str, Any]:
    return {"memory": memory_to_wire(ctx.memories.get(reference["memoryId"]))}


def create_memory(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    refuse(params, "(body)", UNSUPPORTED_MEMORY_FIELDS)
    now = ctx.clock.now()
    keys = namespace_keys_from_wire(params.get("namespaceKeys"))
    strategies = tuple(
        strategy_from_wire(item, f"memoryStrategies[{i}]", now, keys)
        for i, item in enumerate(params.get("memoryStrategies") or [])
    )
    memory_id = new_resource_id(params["name"])
    memory = MemoryConfig(
        memory_id=memory_id,
        arn=memory_arn(ctx.settings.region, ctx.settings.account_id, memory_id),
        name=params["name"],
        description=params.get("description"),
        event_expiry_days=params["eventExpiryDuration"],
        created_at=now,
        updated_at=now,
        strategies=strategies,
        execution_role_arn=params.get("memoryExecutionRoleArn"),
        indexed_keys=tuple(IndexedKey.model_validate(k) for k in params.get("indexedKeys") or []),
        namespace_keys=keys,
        records_expire=any(s.record_expiry_days is not None for s in strategies),
        stream=None
        if (wire := params.get(FIELD)) is None
        else stream_from_wire(wire, now, deliverable=ctx.settings.delivery_streams),
    )

    def execute() -> Outcome:
        ctx.memories.create(memory)
        return Outcome({"memory": memory_to_wire(memory)}, {"memoryId": memory.memory_id})

    return run_once(
        ctx,
        scope=CONTROL_SCOPE,
        operation="CreateMemory",
        params=params,
        execute=execute,
        replay=lambda reference: _current(ctx, reference),
    )


def get_memory(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    return {"memory": memory_to_wire(ctx.memories.get(params["memoryId"]))}


def update_memory(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    current = ctx.memories.get(params["memoryId"])
    updated = updated_memory(
        current, params, ctx.clock.now(), deliverable=ctx.settings.delivery_streams
    )

    def execute() -> Outcome:
        ctx.memories.replace(updated, expected_revision=current.revision)
        return Outcome({"memory": memory_to_wire(updated)}, {"memoryId": updated.memory_id})

    return run_once(
        ctx,
        scope=current.memory_id,
        operation="UpdateMemory",
        params=params,
        execute=execute,
        replay=lambda reference: _current(ctx, reference),
    )


def _actors_of(ctx: ApiContext, memory_id: str) -> set[str]:
    """Every actor with anything in the memory: API placements, events, and records no
    placement names (``cairn remember`` into an API memory)."""
    actors = set(ctx.directory.actors(memory_id)) | set(ctx.records.actors(memory_id))
    cursor: str | None = None
    while True:
        page = ctx.events.list_actors(memory_id, limit=MAX_PAGE_SIZE, cursor=cursor)
        actors.update(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return actors


def delete_memory(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memories.get(params["memoryId"])

    def execute() -> Outcome:
        # The deletion mark first: a fenced write (the record batches' records and placements,
        # CreateEvent's and IngestData's events) that checked the memory before this and
        # commits after it writes nothing (docs/security.md), even for an actor the erase
        # below would not know of.
        ctx.memories.mark_deleting(memory.memory_id)
        if memory.status is not MemoryStatus.DELETING:
            # Marked first: data-plane calls stop while the erase runs, and a failed erase
            # leaves a DELETING memory that a second DeleteMemory finishes.
            ctx.memories.replace(
                memory.revised(ctx.clock.now(), status=MemoryStatus.DELETING),
                expected_revision=memory.revision,
            )
        staging = ctx.extraction.staging if ctx.extraction is not None else None
        for actor in sorted(_actors_of(ctx, memory.memory_id)):
            erase_actor(ctx.stores, scope_of(memory, actor), staging=staging)
        ctx.memories.delete(memory.memory_id)
        return as_stored({"memoryId": memory.memory_id, "status": MemoryStatus.DELETING.value})

    return run_once(
        ctx,
        scope=memory.memory_id,
        operation="DeleteMemory",
        params=params,
        execute=execute,
        replay=replay_stored,
    )


def list_memories(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    page = ctx.memories.list_memories(
        limit=params.get("maxResults") or DEFAULT_MAX_RESULTS, cursor=params.get("nextToken")
    )
    answer: dict[str, Any] = {
        "memories": [
            {
                "arn": m.arn,
                "id": m.memory_id,
                "status": m.status.value,
                "createdAt": to_epoch(m.created_at),
                "updatedAt": to_epoch(m.updated_at),
            }
            for m in page.items
        ]
    }
    if page.next_cursor is not None:
        answer["nextToken"] = page.next_cursor
    return answer
