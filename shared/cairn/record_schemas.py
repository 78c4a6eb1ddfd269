"""A strategy's record schema: the typed metadata fields its records carry (AgentCore's
``memoryRecordSchema``), and the checks a value must pass to be kept.

A field names a metadata ``key``, its ``type`` (``STRING``, ``STRINGLIST``, ``NUMBER``), how
extraction fills it and what a value may be:

- ``LLM_INFERRED`` (or no ``extractionType`` with an ``llmExtractionConfig``): the extraction
  model is shown the field's ``definition`` and ``instruction`` and proposes a value per
  record; a value of the wrong type or outside the field's validation is dropped (the record
  is kept without it). The offline heuristic proposes none.
- ``STRICTLY_CONSISTENT`` (the value copied from the events' own metadata) is refused: a
  staged rollout does not carry its events' metadata (``cairn.rollout/1``).
- A field without either only types the key: a record written through the API with that
  strategy must give it a valid value or leave it out.

Typed values are kept in the record's metadata under ``TYPED_METADATA_KEY`` as the wire's
JSON map (``{"priority": {"stringValue": "high"}}``), the form the AgentCore API reads back
and filters on (``cairn.api.record_codec``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from cairn.models import Frozen

TYPED_METADATA_KEY = "agentcore#metadata"
MetadataType = Literal["STRING", "STRINGLIST", "NUMBER"]
_WIRE_VALUE = {"STRING": "stringValue", "STRINGLIST": "stringListValue", "NUMBER": "numberValue"}
Text = Annotated[str, Field(min_length=1, max_length=1000)]
Allowed = tuple[Annotated[str, Field(min_length=1, max_length=256)], ...]


class FieldValidation(Frozen):
    """What a value may be: one of ``allowed_values`` (strings; each item of a list), at most
    ``max_items`` items, between ``min_value`` and ``max_value`` (numbers)."""

    kind: Literal["stringValidation", "stringListValidation", "numberValidation"]
    allowed_values: Annotated[Allowed, Field(min_length=1, max_length=10)] | None = None
    max_items: Annotated[int, Field(ge=1, le=5)] | None = None
    min_value: float | None = None
    max_value: float | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.kind == "stringValidation" and self.allowed_values is None:
            raise ValueError("stringValidation needs allowedValues")
        low, high = self.min_value, self.max_value
        if low is not None and high is not None and low > high:
            raise ValueError("numberValidation's minValue is above its maxValue")
        return self


_VALIDATION_FOR = {
    "STRING": "stringValidation",
    "STRINGLIST": "stringListValidation",
    "NUMBER": "numberValidation",
}


class MetadataField(Frozen):
    key: Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[a-zA-Z0-9\s._:/=+@-]*$")]
    type: MetadataType | None = None
    extraction_type: Literal["LLM_INFERRED", "STRICTLY_CONSISTENT"] | None = None
    definition: Text | None = None
    instruction: Text | None = None
    validation: FieldValidation | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.extraction_type == "STRICTLY_CONSISTENT":
            raise ValueError(
                f"field {self.key!r}: STRICTLY_CONSISTENT is not supported: a staged rollout "
                "does not carry its events' metadata, so extraction cannot copy it; use "
                "LLM_INFERRED or write the value with BatchCreateMemoryRecords"
            )
        if self.extraction_type == "LLM_INFERRED" and self.definition is None:
            raise ValueError(f"field {self.key!r}: LLM_INFERRED needs llmExtractionConfig")
        if self.validation is not None:
            wanted = _VALIDATION_FOR.get(self.type or "STRING")
            if self.validation.kind != wanted:
                raise ValueError(
                    f"field {self.key!r} of type {self.type or 'STRING'} takes {wanted}, "
                    f"not {self.validation.kind}"
                )
        return self

    @property
    def inferred(self) -> bool:
        """Whether extraction asks the model for this field's value."""
        return self.definition is not None

    def problem(self, value: Any) -> str | None:
        """Why ``value`` (a plain string, number or list of strings) cannot be this field's,
        else ``None``."""
        kind = self.type or "STRING"
        rule = self.validation
        if kind == "NUMBER":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"{self.key!r} takes a number"
            low = rule.min_value if rule else None
            high = rule.max_value if rule else None
            if (low is not None and value < low) or (high is not None and value > high):
                return f"{self.key!r} must be between {low} and {high}"
            return None
        items = value if kind == "STRINGLIST" else [value]
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return (
                f"{self.key!r} takes {'a list of strings' if kind == 'STRINGLIST' else 'a string'}"
            )
        if rule is not None and rule.max_items is not None and len(items) > rule.max_items:
            return f"{self.key!r} takes at most {rule.max_items} items"
        allowed = rule.allowed_values if rule is not None else None
        if allowed is not None and (outside := [i for i in items if i not in allowed]):
            return f"{self.key!r} may not be {outside[0]!r}: allowed {list(allowed)}"
        return None

    def wire_value(self, value: Any) -> dict[str, Any]:
        kind = self.type or "STRING"
        return {_WIRE_VALUE[kind]: float(value) if kind == "NUMBER" else value}


class RecordSchema(Frozen):
    fields: tuple[MetadataField, ...] = Field(min_length=1, max_length=20)

    @model_validator(mode="after")
    def _keys_are_distinct(self) -> Self:
        keys = [f.key for f in self.fields]
        if len(keys) != len(set(keys)):
            raise ValueError("two fields of a memoryRecordSchema share a key")
        return self

    def field(self, key: str) -> MetadataField | None:
        return next((f for f in self.fields if f.key == key), None)

    @property
    def inferred(self) -> tuple[MetadataField, ...]:
        return tuple(f for f in self.fields if f.inferred)

    def wire_problem(self, metadata: dict[str, dict[str, Any]]) -> str | None:
        """Why a record's wire metadata breaks this schema (a declared key of the wrong type
        or an invalid value), else ``None``; undeclared keys pass."""
        for key, typed in metadata.items():
            declared = self.field(key)
            if declared is None:
                continue
            wanted = _WIRE_VALUE[declared.type or "STRING"]
            if wanted not in typed:
                return f"metadata {key!r} takes {wanted} (the strategy's memoryRecordSchema)"
            if problem := declared.problem(typed[wanted]):
                return f"metadata {problem} (the strategy's memoryRecordSchema)"
        return None

    def kept(self, proposed: dict[str, Any]) -> dict[str, str]:
        """The record metadata holding the proposed values that are inferred fields' and valid
        (others dropped); empty when none is."""
        typed = {
            key: field.wire_value(value)
            for key, value in proposed.items()
            if (field := self.field(key)) is not None
            and field.inferred
            and field.problem(value) is None
        }
        if not typed:
            return {}
        return {TYPED_METADATA_KEY: json.dumps(typed, ensure_ascii=False, sort_keys=True)}
