"""UpdateMemory's changes to a memory configuration, computed as a new configuration (pure).

Strategies are deleted, then modified, then added, so one request can replace a strategy by
name. Indexed keys can only be added (AgentCore forbids removing them); ``namespaceKeys``
replaces the list.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cairn.api.errors import ApiError
from cairn.api.operations.episodic_wire import EPISODIC_SCHEMA_WHY, reflection_template_from_wire
from cairn.api.operations.record_schema_wire import record_schema_from_wire
from cairn.api.operations.strategies import (
    namespace_keys_from_wire,
    refuse,
    self_managed_from_wire,
    strategy_from_wire,
    template_of,
    triggers_from_wire,
)
from cairn.api.operations.stream_delivery import FIELD, stream_from_wire
from cairn.memories import (
    IndexedKey,
    MemoryConfig,
    NamespaceKey,
    SelfManagedConfig,
    StrategyConfig,
    StrategyKind,
)

_WHY_OVERRIDES = "an override is changed by deleting the strategy and adding it again"


def _modified_self_managed(
    current: SelfManagedConfig | None, change: dict[str, Any], field: str
) -> SelfManagedConfig:
    if current is None:
        return self_managed_from_wire(change, field)
    values: dict[str, Any] = current.model_dump()
    if change.get("triggerConditions") is not None:
        values["triggers"] = triggers_from_wire(change["triggerConditions"], field)
    invocation = change.get("invocationConfiguration") or {}
    if invocation.get("topicArn") is not None:
        values["topic_arn"] = invocation["topicArn"]
    if invocation.get("payloadDeliveryBucketName") is not None:
        values["payload_bucket"] = invocation["payloadDeliveryBucketName"]
    if change.get("historicalContextWindowSize") is not None:
        values["historical_context_window_size"] = change["historicalContextWindowSize"]
    return SelfManagedConfig.model_validate(values)


def _modified(
    strategy: StrategyConfig,
    change: dict[str, Any],
    field: str,
    now: datetime,
    keys: tuple[NamespaceKey, ...],
) -> StrategyConfig:
    if strategy.extracts_as is StrategyKind.EPISODIC:
        refuse(change, field, {"memoryRecordSchema": EPISODIC_SCHEMA_WHY})
    expiry = change.get("recordExpirySpecification")
    values: dict[str, Any] = strategy.model_dump()
    values["updated_at"] = now
    if expiry is not None:
        # REMOVE clears the strategy's expiry; days set it (records already filed keep theirs).
        removing = expiry.get("action") is not None
        values["record_expiry_days"] = None if removing else expiry["recordExpiryDurationDays"]
    if change.get("memoryRecordSchema") is not None:
        values["record_schema"] = record_schema_from_wire(
            change["memoryRecordSchema"], f"{field}.memoryRecordSchema"
        )
    if change.get("description") is not None:
        values["description"] = change["description"]
    template = template_of(change, field, strategy.kind, keys)
    if template is not None:
        values["namespace_template"] = template
    configuration = dict(change.get("configuration") or {})
    reflection = configuration.pop("reflection", None) or {}
    episodic = reflection.get("episodicReflectionConfiguration")
    if strategy.reflection_template is not None and (episodic is not None or template is not None):
        where = f"{field}.configuration.reflection.episodicReflectionConfiguration"
        given = episodic or {"namespaceTemplates": [strategy.reflection_template]}
        values["reflection_template"] = reflection_template_from_wire(
            given,
            where,
            values["namespace_template"],
            template_of(given, where, strategy.extracts_as, keys),
        )
        reflection = {k: v for k, v in reflection.items() if k != "episodicReflectionConfiguration"}
    refuse(
        {**configuration, "reflection": reflection or None},
        f"{field}.configuration",
        {
            "extraction": _WHY_OVERRIDES,
            "consolidation": _WHY_OVERRIDES,
            "reflection": _WHY_OVERRIDES,
        },
    )
    if configuration.get("selfManagedConfiguration") is not None:
        values["self_managed"] = _modified_self_managed(
            strategy.self_managed,
            configuration["selfManagedConfiguration"],
            f"{field}.configuration.selfManagedConfiguration",
        )
    return StrategyConfig.model_validate(values)


def _strategies(
    current: MemoryConfig, spec: dict[str, Any], now: datetime, keys: tuple[NamespaceKey, ...]
) -> tuple[StrategyConfig, ...]:
    strategies = {s.strategy_id: s for s in current.strategies}
    for index, item in enumerate(spec.get("deleteMemoryStrategies") or []):
        if strategies.pop(item["memoryStrategyId"], None) is None:
            field = f"memoryStrategies.deleteMemoryStrategies[{index}]"
            raise ApiError.validation(f"{field}: the memory has no such strategy", field=field)
    for index, item in enumerate(spec.get("modifyMemoryStrategies") or []):
        field = f"memoryStrategies.modifyMemoryStrategies[{index}]"
        found = strategies.get(item["memoryStrategyId"])
        if found is None:
            raise ApiError.validation(f"{field}: the memory has no such strategy", field=field)
        strategies[found.strategy_id] = _modified(found, item, field, now, keys)
    for index, item in enumerate(spec.get("addMemoryStrategies") or []):
        added = strategy_from_wire(
            item, f"memoryStrategies.addMemoryStrategies[{index}]", now, keys
        )
        strategies[added.strategy_id] = added
    return tuple(strategies.values())


def updated_memory(
    current: MemoryConfig,
    params: dict[str, Any],
    now: datetime,
    *,
    deliverable: frozenset[str] | None = None,
) -> MemoryConfig:
    """``current`` with the validated UpdateMemory ``params`` applied (the next revision);
    ``deliverable`` as in ``stream_delivery.stream_from_wire``."""
    keys = current.namespace_keys
    changes: dict[str, Any] = {}
    if params.get("namespaceKeys") is not None:
        keys = namespace_keys_from_wire(params["namespaceKeys"])
        changes["namespace_keys"] = keys
    for wire, name in (
        ("description", "description"),
        ("eventExpiryDuration", "event_expiry_days"),
        ("memoryExecutionRoleArn", "execution_role_arn"),
    ):
        if params.get(wire) is not None:
            changes[name] = params[wire]
    if params.get("memoryStrategies") is not None:
        changes["strategies"] = _strategies(current, params["memoryStrategies"], now, keys)
    added = [IndexedKey.model_validate(k) for k in params.get("addIndexedKeys") or []]
    if added:
        have = {k.key for k in current.indexed_keys}
        if any(k.key in have for k in added):
            raise ApiError.validation(
                "addIndexedKeys: a key is indexed already", field="addIndexedKeys"
            )
        changes["indexed_keys"] = (*current.indexed_keys, *added)
    if params.get(FIELD) is not None:
        changes["stream"] = stream_from_wire(
            params[FIELD], now, current.stream, deliverable=deliverable
        )
    strategies = changes.get("strategies", current.strategies)
    if any(s.record_expiry_days is not None for s in strategies):
        changes["records_expire"] = True
    return current.revised(now, **changes)
