"""Structured output: ask for a JSON document, validate it with pydantic, retry once if invalid.

The first invalid answer is shown back to the model with what was wrong (field paths and rule
names only, never the answer's content) and the question is asked once more. A second invalid
answer is returned as a failure with that reason; the caller decides what it means (extraction
leaves the rollout pending). Timeouts and throttling are not retried here: they propagate as the
retryable errors they are, so the queue's own retry and backoff apply.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from cairn.errors import InvalidModelOutputError
from cairn.model_request import (
    NO_USAGE,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    StopReason,
)
from cairn.ports import ModelProvider

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

ATTEMPTS = 2
# What of an invalid answer is echoed back to the model: enough to see its own mistake.
_ECHO_CHARS = 4000
_MAX_PROBLEMS = 3


@dataclass(frozen=True, slots=True)
class StructuredAnswer(Generic[T]):
    """A validated value, or ``None`` with the reason the last answer was refused."""

    value: T | None
    reason: str | None
    usage: ModelUsage
    attempts: int


def parse_json_model(text: str, output_type: type[M]) -> M:
    """``text`` as an ``output_type``; ``InvalidModelOutputError`` naming what was wrong.

    A Markdown code fence around the document is tolerated (small local models add one).
    """
    try:
        document = json.loads(_unfenced(text))
    except ValueError:
        raise InvalidModelOutputError("the answer is not a JSON document") from None
    try:
        return output_type.model_validate(document)
    except ValidationError as exc:
        raise InvalidModelOutputError(describe_validation(exc)) from None


def describe_validation(exc: ValidationError) -> str:
    """Field paths and rule messages of a validation failure; the offending values are left
    out because they are model output, which may quote memory content."""
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or 'the document'}: {error['msg']}"
        for error in exc.errors(include_input=False, include_url=False)[:_MAX_PROBLEMS]
    ]
    more = exc.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _unfenced(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped


def ask_structured(
    model: ModelProvider, request: ModelRequest, read: Callable[[str], T]
) -> StructuredAnswer[T]:
    """Call ``model`` and ``read`` its answer, asking once more if ``read`` refuses it.

    ``read`` raises ``InvalidModelOutputError`` for an unusable answer. Usage of every call
    made is returned, valid or not.
    """
    usage = NO_USAGE
    reason = "no answer"
    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = model.complete(request)
        except InvalidModelOutputError as exc:
            reason = exc.reason
            request = _asked_again(request, "", reason)
            continue
        usage += response.usage
        try:
            return StructuredAnswer(
                value=read(_checked_text(response, request)),
                reason=None,
                usage=usage,
                attempts=attempt,
            )
        except InvalidModelOutputError as exc:
            reason = exc.reason
            request = _asked_again(request, response.text, reason)
    return StructuredAnswer(value=None, reason=reason, usage=usage, attempts=ATTEMPTS)


def _checked_text(response: ModelResponse, request: ModelRequest) -> str:
    if response.stop_reason is StopReason.MAX_TOKENS:
        raise InvalidModelOutputError(
            f"the answer was cut off at max_output_tokens ({request.max_output_tokens})"
        )
    if response.stop_reason is StopReason.REFUSED:
        raise InvalidModelOutputError("the provider's guardrail or content filter stopped it")
    return response.text


def _asked_again(request: ModelRequest, answer: str, reason: str) -> ModelRequest:
    correction = (
        f"That answer was not valid: {reason}. Reply again with only one JSON document that "
        "matches the schema, and nothing else."
    )
    messages = (
        *request.messages,
        ModelMessage(role="assistant", text=answer[:_ECHO_CHARS] or "(no answer)"),
        ModelMessage(role="user", text=correction),
    )
    # Re-validated, not model_copy: the longer conversation must still fit the prompt bound.
    return ModelRequest(**{**dict(request), "messages": messages})
