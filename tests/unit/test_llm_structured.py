"""Structured output with one retry, and the scripted provider tests use to drive it."""

from __future__ import annotations

import pytest

from cairn.answers.extraction import ExtractionAnswer
from cairn.errors import ConfigurationError, InvalidModelOutputError, ModelTimeoutError
from cairn.llm.structured import ask_structured, parse_json_model
from cairn.model_request import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    OutputSchema,
    StopReason,
)
from cairn.testing import ScriptedModel

REQUEST = ModelRequest(
    system="Extract.",
    messages=(ModelMessage(role="user", text='{"messages": []}'),),
    output=OutputSchema.of(ExtractionAnswer, "cairn_extraction"),
)
VALID = '{"candidates": [{"content": "The user likes tea.", "evidence": [1]}]}'


def _read(text: str) -> ExtractionAnswer:
    return parse_json_model(text, ExtractionAnswer)


def test_a_valid_answer_is_read_in_one_call() -> None:
    model = ScriptedModel([VALID])
    answered = ask_structured(model, REQUEST, _read)
    assert answered.value is not None
    assert answered.value.candidates[0].content == "The user likes tea."
    assert (answered.attempts, answered.usage.calls) == (1, 1)


def test_an_invalid_answer_is_shown_what_was_wrong_and_asked_once_more() -> None:
    model = ScriptedModel(['{"candidates": [{"content": "secret words"}]}', VALID])
    answered = ask_structured(model, REQUEST, _read)

    assert answered.value is not None
    assert (answered.attempts, answered.usage.calls) == (2, 2)
    retry = model.requests[1]
    assert [m.role for m in retry.messages] == ["user", "assistant", "user"]
    correction = retry.messages[-1].text
    assert "candidates.0.evidence" in correction
    assert "secret words" not in correction  # the reason names fields, never the content


def test_two_invalid_answers_give_up_with_a_content_free_reason_and_the_usage() -> None:
    model = ScriptedModel(["Sure! The user said their PIN is 1234.", '{"candidates": "none"}'])
    answered = ask_structured(model, REQUEST, _read)
    assert answered.value is None
    assert answered.reason is not None
    assert "1234" not in answered.reason
    assert answered.usage.calls == 2
    assert model.remaining == 0  # exactly one retry, never a third call


def test_a_fenced_json_answer_is_accepted() -> None:
    answered = ask_structured(ScriptedModel([f"```json\n{VALID}\n```"]), REQUEST, _read)
    assert answered.value is not None


def test_an_answer_cut_off_at_the_token_bound_is_retried_and_named() -> None:
    cut = ModelResponse(
        text='{"candidates": [',
        usage=ModelUsage(calls=1, input_tokens=10, output_tokens=2048),
        model_id="m",
        latency_ms=5,
        stop_reason=StopReason.MAX_TOKENS,
    )
    answered = ask_structured(ScriptedModel([cut, cut]), REQUEST, _read)
    assert answered.value is None
    assert answered.reason is not None
    assert "max_output_tokens" in answered.reason
    assert answered.usage.output_tokens == 4096


def test_a_timeout_is_not_retried_here_it_propagates_as_retryable() -> None:
    model = ScriptedModel([ModelTimeoutError("slow"), VALID])
    with pytest.raises(ModelTimeoutError) as raised:
        ask_structured(model, REQUEST, _read)
    assert raised.value.retryable
    assert model.remaining == 1


def test_a_provider_that_cannot_read_its_own_answer_counts_as_an_invalid_attempt() -> None:
    model = ScriptedModel([InvalidModelOutputError("prose instead of the tool"), VALID])
    answered = ask_structured(model, REQUEST, _read)
    assert answered.value is not None
    assert answered.attempts == 2


def test_a_scripted_model_with_nothing_queued_fails_loudly() -> None:
    with pytest.raises(ConfigurationError):
        ScriptedModel().complete(REQUEST)


def test_a_scripted_answer_can_be_computed_from_the_request() -> None:
    model = ScriptedModel([lambda request: '{"candidates": []}' if request.system else "x"])
    assert model.complete(REQUEST).text == '{"candidates": []}'


def test_the_schema_sent_to_providers_has_no_references_left() -> None:
    schema = OutputSchema.of(ExtractionAnswer, "cairn_extraction").json_schema
    assert "$ref" not in str(schema)
    assert "$defs" not in schema
    assert schema["properties"]["candidates"]["items"]["required"] == ["content", "evidence"]
