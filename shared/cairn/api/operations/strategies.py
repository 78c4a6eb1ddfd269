"""Memory strategies on the wire: ``MemoryStrategyInput`` in, ``MemoryStrategy`` out.

Supported: ``semanticMemoryStrategy``, ``summaryMemoryStrategy``,
``userPreferenceMemoryStrategy`` and ``customMemoryStrategy`` with a
``selfManagedConfiguration``, a built-in strategy's override (``semanticOverride``,
``summaryOverride``, ``userPreferenceOverride``: extracted as that strategy with the
``appendToPrompt`` added to its instructions; for a summary, whose text cairn writes in
extraction, the consolidation prompt is the one added; ``episodicOverride``'s reflection step
also names where its reflections go), or no configuration; and ``episodicMemoryStrategy``,
whose ``reflectionConfiguration`` names where its reflections go (returned as
``configuration.reflection.episodicReflectionConfiguration``). The model ids are kept and
returned, not called: a deployment has one model provider. Refused, naming the field,
because cairn would store it without acting on it: an episodic strategy's
``memoryRecordSchema``. Any other strategy's ``memoryRecordSchema`` types
its records' metadata (``cairn.api.operations.record_schema_wire``). A strategy's
``recordExpirySpecification`` makes the records it extracts expire.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cairn.api.codec import to_epoch
from cairn.api.errors import ApiError
from cairn.api.operations.episodic_wire import EPISODIC_SCHEMA_WHY, reflection_template_from_wire
from cairn.api.operations.overrides import OVERRIDES, override_from_wire, override_to_wire
from cairn.api.operations.record_schema_wire import record_schema_from_wire, record_schema_to_wire
from cairn.memories import (
    BUILT_IN_VARIABLES,
    NamespaceKey,
    PromptOverride,
    SelfManagedConfig,
    StrategyConfig,
    StrategyKind,
    TriggerConditions,
    new_resource_id,
    template_variables,
)

_KINDS = {
    "semanticMemoryStrategy": StrategyKind.SEMANTIC,
    "summaryMemoryStrategy": StrategyKind.SUMMARY,
    "userPreferenceMemoryStrategy": StrategyKind.USER_PREFERENCE,
    "customMemoryStrategy": StrategyKind.CUSTOM,
    "episodicMemoryStrategy": StrategyKind.EPISODIC,
}
_WIRE_TYPES = {
    StrategyKind.SEMANTIC: "SEMANTIC",
    StrategyKind.SUMMARY: "SUMMARIZATION",
    StrategyKind.USER_PREFERENCE: "USER_PREFERENCE",
    StrategyKind.CUSTOM: "CUSTOM",
    StrategyKind.EPISODIC: "EPISODIC",
}
# The AgentCore SDK's defaults (bedrock_agentcore.memory.constants.DEFAULT_NAMESPACES).
_DEFAULT_TEMPLATES = {
    StrategyKind.SEMANTIC: "/strategies/{memoryStrategyId}/actors/{actorId}/",
    StrategyKind.USER_PREFERENCE: "/strategies/{memoryStrategyId}/actors/{actorId}/",
    StrategyKind.SUMMARY: "/strategies/{memoryStrategyId}/actors/{actorId}/sessions/{sessionId}/",
    StrategyKind.CUSTOM: "/strategies/{memoryStrategyId}/actors/{actorId}/",
    StrategyKind.EPISODIC: "/strategies/{memoryStrategyId}/actors/{actorId}/sessions/{sessionId}/",
}


def unsupported(field: str, why: str) -> ApiError:
    return ApiError.validation(f"{field} is not supported by cairn: {why}", field=field)


def refuse(spec: dict[str, Any], field: str, names: dict[str, str]) -> None:
    for name, why in names.items():
        if spec.get(name) is not None:
            raise unsupported(f"{field}.{name}", why)


def template_of(
    spec: dict[str, Any], field: str, kind: StrategyKind, keys: tuple[NamespaceKey, ...]
) -> str | None:
    """The one namespace template given (``namespaceTemplates`` or legacy ``namespaces``),
    checked to use only known variables; ``None`` when neither is given."""
    given = [name for name in ("namespaceTemplates", "namespaces") if spec.get(name)]
    if len(given) > 1:
        raise ApiError.validation(
            f"{field}: give namespaceTemplates or namespaces, not both", field=field
        )
    if not given:
        return None
    template: str = spec[given[0]][0]
    known = BUILT_IN_VARIABLES | {key.key for key in keys}
    unknown = [v for v in template_variables(template) if v not in known]
    if unknown:
        raise ApiError.validation(
            f"{field}.{given[0]}: unknown template variable {{{unknown[0]}}}; use actorId, "
            "sessionId, memoryStrategyId or a declared namespace key",
            field=f"{field}.{given[0]}",
        )
    return template


def triggers_from_wire(conditions: list[dict[str, Any]], field: str) -> TriggerConditions:
    values: dict[str, int] = {}
    for condition in conditions:
        for wire, (name, attribute) in {
            "messageBasedTrigger": ("message_count", "messageCount"),
            "tokenBasedTrigger": ("token_count", "tokenCount"),
            "timeBasedTrigger": ("idle_session_timeout_seconds", "idleSessionTimeout"),
        }.items():
            if condition.get(wire) is None:
                continue
            if name in values:
                raise ApiError.validation(f"{field}: {wire} is given twice", field=field)
            if condition[wire].get(attribute) is None:
                raise ApiError.validation(f"{field}: {wire}.{attribute} is required", field=field)
            values[name] = condition[wire][attribute]
    return TriggerConditions.model_validate(values)


def self_managed_from_wire(spec: dict[str, Any], field: str) -> SelfManagedConfig:
    invocation = spec["invocationConfiguration"]
    values: dict[str, Any] = {
        "triggers": triggers_from_wire(spec.get("triggerConditions") or [], field),
        "topic_arn": invocation["topicArn"],
        "payload_bucket": invocation["payloadDeliveryBucketName"],
    }
    if spec.get("historicalContextWindowSize") is not None:
        values["historical_context_window_size"] = spec["historicalContextWindowSize"]
    return SelfManagedConfig.model_validate(values)


@dataclass(frozen=True)
class _Custom:
    self_managed: SelfManagedConfig | None = None
    override: PromptOverride | None = None
    extraction_prompt: str | None = None


def _custom_configuration(spec: dict[str, Any], field: str) -> _Custom:
    configuration = spec.get("configuration")
    if configuration is None:
        return _Custom()
    where = f"{field}.configuration"
    given = [k for k, v in configuration.items() if v is not None]
    if len(given) != 1:
        raise ApiError.validation(
            f"{where}: give exactly one of selfManagedConfiguration, semanticOverride, "
            "summaryOverride, userPreferenceOverride or episodicOverride",
            field=where,
        )
    (name,) = given
    if name in OVERRIDES:
        override, appended = override_from_wire(name, configuration[name])
        return _Custom(override=override, extraction_prompt=appended)
    return _Custom(
        self_managed=self_managed_from_wire(
            configuration["selfManagedConfiguration"], f"{where}.selfManagedConfiguration"
        )
    )


def expiry_days_from_wire(spec: dict[str, Any] | None, field: str) -> int | None:
    """A strategy's ``recordExpirySpecification`` in days; ``action`` applies to records only."""
    if spec is None:
        return None
    if spec.get("action") is not None:
        where = f"{field}.recordExpirySpecification.action"
        raise ApiError.validation(
            f"{where} applies to BatchUpdateMemoryRecords; give recordExpiryDurationDays",
            field=where,
        )
    days: int = spec["recordExpiryDurationDays"]
    return days


def strategy_from_wire(
    item: dict[str, Any], field: str, now: datetime, keys: tuple[NamespaceKey, ...]
) -> StrategyConfig:
    """The strategy one validated ``MemoryStrategyInput`` union item describes."""
    ((wire_kind, spec),) = [(k, v) for k, v in item.items() if k in _KINDS and v is not None]
    inner = f"{field}.{wire_kind}"
    kind = _KINDS[wire_kind]
    if kind is StrategyKind.EPISODIC:
        refuse(spec, inner, {"memoryRecordSchema": EPISODIC_SCHEMA_WHY})
    custom = _custom_configuration(spec, inner) if kind is StrategyKind.CUSTOM else _Custom()
    base = custom.override.base if custom.override is not None else kind
    template = template_of(spec, inner, kind, keys) or _DEFAULT_TEMPLATES[base]
    reflections = None
    if base is StrategyKind.EPISODIC:
        where = f"{inner}.reflectionConfiguration"
        reflection = spec.get("reflectionConfiguration") or {}
        if kind is StrategyKind.CUSTOM:
            where = f"{inner}.configuration.episodicOverride.reflection"
            reflection = spec["configuration"]["episodicOverride"].get("reflection") or {}
            refuse(spec, inner, {"memoryRecordSchema": EPISODIC_SCHEMA_WHY})
        reflections = reflection_template_from_wire(
            reflection, where, template, template_of(reflection, where, base, keys)
        )
    return StrategyConfig(
        strategy_id=new_resource_id(spec["name"]),
        name=spec["name"],
        description=spec.get("description"),
        kind=kind,
        namespace_template=template,
        reflection_template=reflections,
        record_schema=record_schema_from_wire(
            spec.get("memoryRecordSchema"), f"{inner}.memoryRecordSchema"
        ),
        self_managed=custom.self_managed,
        extraction_prompt=custom.extraction_prompt,
        override=custom.override,
        record_expiry_days=expiry_days_from_wire(spec.get("recordExpirySpecification"), inner),
        created_at=now,
        updated_at=now,
    )


def self_managed_to_wire(config: SelfManagedConfig) -> dict[str, Any]:
    triggers = config.triggers
    conditions = [
        {"messageBasedTrigger": {"messageCount": triggers.message_count}}
        if triggers.message_count is not None
        else None,
        {"tokenBasedTrigger": {"tokenCount": triggers.token_count}}
        if triggers.token_count is not None
        else None,
        {"timeBasedTrigger": {"idleSessionTimeout": triggers.idle_session_timeout_seconds}}
        if triggers.idle_session_timeout_seconds is not None
        else None,
    ]
    return {
        "triggerConditions": [c for c in conditions if c is not None],
        "invocationConfiguration": {
            "topicArn": config.topic_arn,
            "payloadDeliveryBucketName": config.payload_bucket,
        },
        "historicalContextWindowSize": config.historical_context_window_size,
    }


def strategy_to_wire(strategy: StrategyConfig) -> dict[str, Any]:
    """A ``MemoryStrategy``; every strategy is ACTIVE as soon as it is stored."""
    wire: dict[str, Any] = {
        "strategyId": strategy.strategy_id,
        "name": strategy.name,
        "type": _WIRE_TYPES[strategy.kind],
        "namespaces": [strategy.namespace_template],
        "namespaceTemplates": [strategy.namespace_template],
        "createdAt": to_epoch(strategy.created_at),
        "updatedAt": to_epoch(strategy.updated_at),
        "status": "ACTIVE",
    }
    if strategy.description is not None:
        wire["description"] = strategy.description
    if strategy.self_managed is not None:
        wire["configuration"] = {
            "type": "SELF_MANAGED",
            "selfManagedConfiguration": self_managed_to_wire(strategy.self_managed),
        }
    if strategy.override is not None:
        wire["configuration"] = override_to_wire(strategy)
    if strategy.reflection_template is not None and strategy.override is None:
        templates = [strategy.reflection_template]
        reflection = {"namespaces": templates, "namespaceTemplates": templates}
        wire["configuration"] = {"reflection": {"episodicReflectionConfiguration": reflection}}
    if strategy.record_schema is not None:
        wire["memoryRecordSchema"] = record_schema_to_wire(strategy.record_schema)
    if strategy.record_expiry_days is not None:
        wire["recordExpiryDurationDays"] = strategy.record_expiry_days
    return wire


def namespace_key_to_wire(key: NamespaceKey) -> dict[str, Any]:
    validation: dict[str, Any] = {}
    if key.allowed_values is not None:
        validation["allowedValues"] = list(key.allowed_values)
    if key.regex_pattern is not None:
        validation["regexPattern"] = key.regex_pattern
    return {"key": key.key, **({"validation": validation} if validation else {})}


def namespace_keys_from_wire(entries: list[dict[str, Any]] | None) -> tuple[NamespaceKey, ...]:
    return tuple(
        NamespaceKey(
            key=entry["key"],
            allowed_values=(entry.get("validation") or {}).get("allowedValues"),
            regex_pattern=(entry.get("validation") or {}).get("regexPattern"),
        )
        for entry in entries or []
    )
