"""Long-term records by id: BatchCreate/Update/Delete, GetMemoryRecord, DeleteMemoryRecord.

An update is a revision (a new version; the old stays in history); a delete is a soft
retraction: the record stops being listed or recalled but its content stays in its history
until ``cairn erase`` destroys it. See ``cairn.api.record_codec`` for the field mapping.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from cairn.api.codec import from_epoch
from cairn.api.context import ApiContext, scope_of
from cairn.api.errors import ApiError
from cairn.api.guard import refuse_foreign_write
from cairn.api.idempotency import Outcome, as_stored, replay_stored, run_once
from cairn.api.operations.batches import BatchResult, Planned, apply_planned, vectors_for
from cairn.api.operations.placement import actor_for, located
from cairn.api.operations.record_schema_wire import check_record_metadata
from cairn.api.record_codec import (
    API_SOURCE,
    STRATEGY_ID_KEY,
    Expiry,
    expiry_days,
    new_record,
    packed_metadata,
    record_to_wire,
)
from cairn.changes import Create, RecordPatch, Retract, Revise, Vector
from cairn.errors import ConflictError
from cairn.ids import new_record_id
from cairn.memories import MemoryConfig
from cairn.ports import RecordPlacement

DELETE_REASON = "deleted through the AgentCore API"


def _expiry_days(params: dict[str, Any], *, creating: bool) -> int | None:
    """The days ``recordExpirySpecification`` gives (0: ``action`` REMOVE, which clears an
    expiry and applies only to updates); ``None`` without one."""
    spec = params.get("recordExpirySpecification")
    if spec is None:
        return None
    if spec.get("action") is not None:
        if creating:
            field = "recordExpirySpecification.action"
            raise ApiError.validation(
                f"{field} applies only to BatchUpdateMemoryRecords (it clears an expiry); "
                "give recordExpiryDurationDays",
                field=field,
            )
        return 0
    days: int = spec["recordExpiryDurationDays"]
    return days


def mark_records_expire(ctx: ApiContext, memory: MemoryConfig) -> None:
    """Record on the memory, before any record is written, that its records may expire."""
    current = memory
    for _ in range(3):
        if current.records_expire:
            return
        try:
            ctx.memories.replace(
                current.model_copy(
                    update={"records_expire": True, "revision": current.revision + 1}
                ),
                expected_revision=current.revision,
            )
            return
        except ConflictError:
            current = ctx.memory(current.memory_id)
    raise ApiError.conflict("the memory kept changing; retry the request")


def _plan_creates(
    ctx: ApiContext,
    memory: MemoryConfig,
    items: list[dict[str, Any]],
    result: BatchResult,
    vectors: list[Vector | None],
    expiry: Expiry | None,
) -> list[Planned]:
    planned: list[Planned] = []
    record_ids = [new_record_id() for _ in items]
    for index, (item, record_id, vector) in enumerate(zip(items, record_ids, vectors, strict=True)):
        request_id = item["requestIdentifier"]
        try:
            record = new_record(item, memory, vector, record_id, expiry)
        except ValidationError as exc:
            result.fail_invalid(index, record_id, exc, request_id)
            continue
        try:
            check_record_metadata(memory, item.get("memoryStrategyId"), item.get("metadata"))
            actor = actor_for(memory, record.namespace, item.get("memoryStrategyId"))
            refuse_foreign_write(ctx, actor, record.namespace)
        except ApiError as exc:
            result.fail(index, record_id, exc, request_id)
            continue
        placement = RecordPlacement(record_id=record_id, actor_id=actor, namespace=record.namespace)
        planned.append(
            Planned(
                index=index,
                scope=scope_of(memory, actor),
                record_id=record_id,
                change=Create(record=record),
                request_id=request_id,
                placement=placement,
            )
        )
    return planned


def batch_create(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    days = _expiry_days(params, creating=True)

    def execute() -> Outcome:
        result = BatchResult()
        items = params["records"]
        vectors = vectors_for(ctx.embedder, [item["content"]["text"] for item in items])
        expiry = None
        if days is not None:
            mark_records_expire(ctx, memory)
            expiry = Expiry(now=ctx.clock.now(), days=days)
        planned = _plan_creates(ctx, memory, items, result, vectors, expiry)
        apply_planned(ctx, memory.memory_id, planned, result)
        return as_stored(result.wire())

    return run_once(
        ctx,
        scope=memory.memory_id,
        operation="BatchCreateMemoryRecords",
        params=params,
        execute=execute,
        replay=replay_stored,
    )


def _plan_update(
    ctx: ApiContext,
    memory: MemoryConfig,
    index: int,
    item: dict[str, Any],
    vector: Vector | None,
    days: int | None,
) -> Planned:
    record_id = item["memoryRecordId"]
    scope, head = located(ctx, memory, record_id)
    namespaces = item.get("namespaces")
    if namespaces and namespaces[0] != head.namespace:
        raise ApiError.validation(
            "a cairn record never moves to another namespace; create a new record there "
            "and delete this one"
        )
    strategy_id = item.get("memoryStrategyId") or head.metadata.get(STRATEGY_ID_KEY)
    check_record_metadata(memory, strategy_id, item.get("metadata"))
    content = item.get("content")
    # The service's rule: given days overwrite; REMOVE (0) clears; without either, a record
    # that has an expiry gets it again from now, with the days last applied.
    if days is None:
        days = expiry_days(head)
    expiry = None if days is None else Expiry(now=ctx.clock.now(), days=days or None)
    patch = RecordPatch(
        content=content["text"] if content else None,
        valid_from=from_epoch(item["timestamp"]),
        metadata=packed_metadata(
            item.get("memoryStrategyId"),
            item.get("metadata"),
            keep=head.metadata,
            expiry=expiry,
        ),
    )
    change = Revise(record_id=record_id, patch=patch, add_sources=(API_SOURCE,), vector=vector)
    return Planned(index=index, scope=scope, record_id=record_id, change=change)


def batch_update(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    days = _expiry_days(params, creating=False)
    if days:
        mark_records_expire(ctx, memory)
    items: list[dict[str, Any]] = params["records"]
    result = BatchResult()
    changed = [i for i, item in enumerate(items) if item.get("content")]
    vectors = dict(
        zip(
            changed,
            vectors_for(ctx.embedder, [items[i]["content"]["text"] for i in changed]),
            strict=True,
        )
    )
    planned: list[Planned] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        record_id = item["memoryRecordId"]
        try:
            if record_id in seen:
                raise ApiError.validation("the batch names this record more than once")
            seen.add(record_id)
            planned.append(_plan_update(ctx, memory, index, item, vectors.get(index), days))
        except ApiError as exc:
            result.fail(index, record_id, exc, None)
        except ValidationError as exc:
            result.fail_invalid(index, record_id, exc, None)
    apply_planned(ctx, memory.memory_id, planned, result)
    return result.wire()


def batch_delete(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    result = BatchResult()
    planned: list[Planned] = []
    seen: set[str] = set()
    for index, item in enumerate(params["records"]):
        record_id = item["memoryRecordId"]
        try:
            if record_id in seen:
                raise ApiError.validation("the batch names this record more than once")
            seen.add(record_id)
            scope, _ = located(ctx, memory, record_id, item.get("namespace"))
        except ApiError as exc:
            result.fail(index, record_id, exc, None)
            continue
        change = Retract(record_id=record_id, reason=DELETE_REASON)
        planned.append(Planned(index=index, scope=scope, record_id=record_id, change=change))
    apply_planned(ctx, memory.memory_id, planned, result)
    return result.wire()


def get_memory_record(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    _, head = located(ctx, memory, params["memoryRecordId"], params.get("namespace"))
    return {"memoryRecord": record_to_wire(head, full=True)}


def delete_memory_record(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    record_id = params["memoryRecordId"]
    scope, _ = located(ctx, memory, record_id, params.get("namespace"))
    ctx.records.apply(scope, [Retract(record_id=record_id, reason=DELETE_REASON)])
    return {"memoryRecordId": record_id}
