"""``memoryRecordSchema`` on the wire <-> ``cairn.record_schemas.RecordSchema``.

Validated as botocore models it (the request's shapes), then as cairn enforces it: distinct
keys, a validation that fits the field's type, ``llmExtractionConfig`` for ``LLM_INFERRED``;
``STRICTLY_CONSISTENT`` is refused (``cairn.record_schemas``). GetMemory returns it as given.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from cairn.api.errors import ApiError
from cairn.memories import MemoryConfig
from cairn.record_schemas import FieldValidation, MetadataField, RecordSchema

_VALIDATION_KEYS = {
    "allowedValues": "allowed_values",
    "maxItems": "max_items",
    "minValue": "min_value",
    "maxValue": "max_value",
}


def _field(entry: dict[str, Any]) -> MetadataField:
    llm = (entry.get("extractionConfig") or {}).get("llmExtractionConfig") or {}
    validation = None
    for kind, spec in (llm.get("validation") or {}).items():
        if spec is not None:
            values = {_VALIDATION_KEYS[k]: v for k, v in spec.items() if v is not None}
            validation = FieldValidation.model_validate({"kind": kind, **values})
    return MetadataField(
        key=entry["key"],
        type=entry.get("type"),
        extraction_type=entry.get("extractionType"),
        definition=llm.get("definition"),
        instruction=llm.get("llmExtractionInstruction"),
        validation=validation,
    )


def record_schema_from_wire(spec: dict[str, Any] | None, field: str) -> RecordSchema | None:
    """The schema a ``MemoryRecordSchema`` gives; a validation error naming ``field`` (and
    what is wrong) when cairn cannot enforce it."""
    if spec is None:
        return None
    try:
        return RecordSchema(fields=tuple(_field(entry) for entry in spec["metadataSchema"]))
    except ValidationError as exc:
        problem = exc.errors()[0]
        reason = str(problem.get("ctx", {}).get("error") or problem["msg"])
        raise ApiError.validation(
            f"{field}.metadataSchema: {reason.removeprefix('Value error, ')}", field=field
        ) from None


def _validation_to_wire(validation: FieldValidation) -> dict[str, Any]:
    values = {wire: getattr(validation, name) for wire, name in _VALIDATION_KEYS.items()}
    return {
        validation.kind: {
            k: list(v) if isinstance(v, tuple) else v for k, v in values.items() if v is not None
        }
    }


def record_schema_to_wire(schema: RecordSchema) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    for declared in schema.fields:
        entry: dict[str, Any] = {"key": declared.key}
        if declared.type is not None:
            entry["type"] = declared.type
        if declared.extraction_type is not None:
            entry["extractionType"] = declared.extraction_type
        if declared.definition is not None:
            llm: dict[str, Any] = {"definition": declared.definition}
            if declared.instruction is not None:
                llm["llmExtractionInstruction"] = declared.instruction
            if declared.validation is not None:
                llm["validation"] = _validation_to_wire(declared.validation)
            entry["extractionConfig"] = {"llmExtractionConfig": llm}
        entries.append(entry)
    return {"metadataSchema": entries}


def check_record_metadata(
    memory: MemoryConfig, strategy_id: str | None, metadata: dict[str, Any] | None
) -> None:
    """A validation error when a record written with ``strategy_id`` gives metadata its
    strategy's schema declares with another type or an invalid value (nothing is written)."""
    strategy = memory.strategy(strategy_id) if strategy_id else None
    if strategy is None or strategy.record_schema is None or not metadata:
        return
    problem = strategy.record_schema.wire_problem(metadata)
    if problem is not None:
        raise ApiError.validation(problem, field="metadata")
