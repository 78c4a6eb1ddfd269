"""One model call: what it asks for (``ModelRequest``) and what it returns (``ModelResponse``).

Every call is bounded: ``max_output_tokens`` caps the answer, ``timeout_seconds`` caps the wall
time, and the prompt itself is capped at ``MAX_PROMPT_CHARS``. Every answer carries its usage,
so a caller can count tokens whatever the provider.

Structured output is asked for with ``OutputSchema`` (a name and a JSON Schema); each provider
maps it to its own mechanism (Bedrock: a forced tool; OpenAI-compatible: ``response_format``)
and always returns the JSON document as ``ModelResponse.text``.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, Field, model_validator

from cairn.models import Frozen

# A guard, not a budget: prompt builders fit their inputs well under it (extraction uses
# ~60 KB). Past it a request is a bug, and providers would refuse it anyway.
MAX_PROMPT_CHARS = 400_000
MAX_OUTPUT_TOKENS = 8192
# Lambda's own ceiling is 900 s; a model call that needs more than 5 minutes is stuck.
MAX_TIMEOUT_SECONDS = 300.0
SCHEMA_NAME_PATTERN = r"^[a-zA-Z0-9_\-]{1,64}$"


class ModelMessage(Frozen):
    role: Literal["user", "assistant"]
    text: Annotated[str, Field(min_length=1)]


class OutputSchema(Frozen):
    """Structured output: the answer must be one JSON document valid against ``json_schema``."""

    name: Annotated[str, Field(pattern=SCHEMA_NAME_PATTERN)]
    description: Annotated[str, Field(max_length=1000)] = ""
    json_schema: dict[str, Any]

    @classmethod
    def of(cls, model: type[BaseModel], name: str, description: str = "") -> OutputSchema:
        """The schema of a pydantic model with every ``$ref`` inlined: several providers'
        structured-output modes (Bedrock tools among them) do not follow references."""
        schema = model.model_json_schema()
        definitions = schema.pop("$defs", {})
        return cls(name=name, description=description, json_schema=_inlined(schema, definitions))


def schema_instruction(output: OutputSchema) -> str:
    """The instruction a provider without a structured-output mode appends to the system prompt
    (the answer is then parsed and validated like any other)."""
    return (
        "Answer with only one JSON document, no prose and no code fence, valid against this "
        f"JSON Schema:\n{json.dumps(output.json_schema, separators=(',', ':'))}"
    )


def _inlined(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            return _inlined(definitions[reference.removeprefix("#/$defs/")], definitions)
        return {key: _inlined(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(item, definitions) for item in node]
    return node


class ModelRequest(Frozen):
    """A bounded model call: at most ``max_output_tokens`` out, ``timeout_seconds`` of wall time."""

    system: str = ""
    messages: tuple[ModelMessage, ...] = Field(min_length=1)
    output: OutputSchema | None = None
    max_output_tokens: int = Field(default=2048, ge=1, le=MAX_OUTPUT_TOKENS)
    timeout_seconds: float = Field(default=60.0, gt=0.0, le=MAX_TIMEOUT_SECONDS)
    temperature: float = Field(default=0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _bounded_and_ends_with_the_user(self) -> Self:
        if self.messages[-1].role != "user":
            raise ValueError("the last message must be the user's: the model answers it")
        size = len(self.system) + sum(len(m.text) for m in self.messages)
        if size > MAX_PROMPT_CHARS:
            raise ValueError(
                f"the prompt has {size} characters, over the {MAX_PROMPT_CHARS} a request may "
                "carry; shorten the inputs"
            )
        return self


class ModelUsage(Frozen):
    """Tokens a call (or a sum of calls) consumed, as the provider reported them."""

    calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)

    def __add__(self, other: ModelUsage) -> ModelUsage:
        return ModelUsage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


NO_USAGE = ModelUsage()


class StopReason(StrEnum):
    """Why the answer ended, in provider-neutral words."""

    END = "end"  # the model finished (or answered through the forced tool)
    MAX_TOKENS = "max_tokens"  # cut off at max_output_tokens: structured output is incomplete
    REFUSED = "refused"  # a guardrail or content filter stopped it
    OTHER = "other"


class ModelResponse(Frozen):
    """One answer: its text (the JSON document, for structured output) and what it cost."""

    text: str
    usage: ModelUsage
    model_id: str
    latency_ms: int = Field(ge=0)
    stop_reason: StopReason = StopReason.END
