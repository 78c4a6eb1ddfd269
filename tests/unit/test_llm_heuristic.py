"""The offline heuristic provider answers cairn's own requests with valid structured output, and
files only what the user stated outright."""

from __future__ import annotations

import json

import pytest

from cairn.answers.extraction import (
    CandidateAnswer,
    ExtractionAnswer,
    FormationAnswer,
    SummaryAnswer,
)
from cairn.consolidate.prompts import CONSOLIDATION_SCHEMA
from cairn.errors import ConfigurationError
from cairn.extract.episodes import EPISODE_SCHEMA
from cairn.extract.extraction_policy import DEFAULT_EXTRACTION_POLICY
from cairn.extract.prompts import (
    EXTRACTION_SCHEMA,
    FORMATION_SCHEMA,
    CandidateCase,
    ExistingMemory,
    ExtractionInput,
    FormationInput,
    PromptMessage,
    extraction_request,
    formation_request,
)
from cairn.extract.reflections import REFLECTION_SCHEMA
from cairn.history.contradiction_prompts import CONTRADICTION_SCHEMA_NAME
from cairn.history.evolution_prompts import EVOLUTION_SCHEMA_NAME
from cairn.history.link_prompts import LINK_SCHEMA_NAME
from cairn.history.prompts import ROLLUP_SCHEMA_NAME
from cairn.history.reflection_prompts import REFLECTION_SCHEMA_NAME as RECORD_REFLECTION_SCHEMA
from cairn.llm.heuristic import HeuristicModel, Responder
from cairn.local import offline_model
from cairn.memories import StrategyKind
from cairn.model_request import ModelMessage, ModelRequest, OutputSchema
from cairn.models import Role

CONVERSATION = (
    PromptMessage(alias=1, role=Role.USER, text="Hi! I prefer window seats. My dog is Rex."),
    PromptMessage(alias=2, role=Role.ASSISTANT, text="I prefer to answer briefly."),
    PromptMessage(alias=3, role=Role.USER, text="We decided to fly on Friday. Is it sunny?"),
)


def _extract(kind: StrategyKind, summary_so_far: str | None = None) -> tuple[CandidateAnswer, ...]:
    document = ExtractionInput(strategy=kind, messages=CONVERSATION, summary_so_far=summary_so_far)
    answer_type = SummaryAnswer if kind is StrategyKind.SUMMARY else ExtractionAnswer
    request = extraction_request(
        document,
        output=OutputSchema.of(answer_type, EXTRACTION_SCHEMA),
        appended=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    text = offline_model().complete(request).text
    return answer_type.model_validate_json(text).candidates


def test_facts_are_what_the_user_stated_each_citing_its_message() -> None:
    found = [(c.content, c.category, c.evidence) for c in _extract(StrategyKind.SEMANTIC)]
    assert found == [
        ("The user's dog is Rex.", "fact", (1,)),
        ("The user decided to fly on Friday.", "decision", (3,)),
    ]


def test_preferences_are_only_the_user_s_preferences_never_the_assistant_s() -> None:
    found = _extract(StrategyKind.USER_PREFERENCE)
    assert [c.content for c in found] == ["The user prefers window seats."]


def test_a_summary_lists_the_statements_and_grows_from_the_summary_so_far() -> None:
    (first,) = _extract(StrategyKind.SUMMARY)
    assert first.content.startswith("Stated in this session: ")
    assert "window seats" in first.content
    assert first.evidence == (1, 3)

    (grown,) = _extract(
        StrategyKind.SUMMARY, summary_so_far="Stated in this session: The user is called Ada."
    )
    assert grown.content.startswith("Stated in this session: The user is called Ada; ")
    assert grown.content.endswith("The user decided to fly on Friday.")


def test_the_judge_folds_repeats_supersedes_a_changed_attribute_and_creates_the_rest() -> None:
    document = FormationInput(
        existing=(
            ExistingMemory(
                alias=1,
                content="The user's office is in Lisbon.",
                category="fact",
                stated_by="user",
            ),
            ExistingMemory(
                alias=2,
                content="The user prefers tea.",
                category="preference",
                stated_by="inferred",
            ),
        ),
        candidates=(
            CandidateCase(
                candidate=1,
                content="The user's office is in Porto.",
                category="fact",
                related=(1,),
            ),
            CandidateCase(
                candidate=2,
                content="the user prefers  TEA.",
                category="preference",
                related=(2,),
            ),
            CandidateCase(
                candidate=3, content="The user's cat is Tom.", category="fact", related=(1, 2)
            ),
        ),
    )
    request = formation_request(document, policy=DEFAULT_EXTRACTION_POLICY)
    answer = FormationAnswer.model_validate_json(offline_model().complete(request).text)
    assert [(d.candidate, d.action, d.target) for d in answer.decisions] == [
        (1, "supersede", 1),
        (2, "same", 2),
        (3, "create", None),
    ]


def test_the_output_bound_is_honoured_by_stopping_early() -> None:
    many = tuple(
        PromptMessage(alias=i, role=Role.USER, text=f"My item number {i} is blue.")
        for i in range(1, 17)
    )
    request = extraction_request(
        ExtractionInput(strategy=StrategyKind.SEMANTIC, messages=many),
        output=OutputSchema.of(ExtractionAnswer, EXTRACTION_SCHEMA),
        appended=None,
        policy=DEFAULT_EXTRACTION_POLICY.model_copy(update={"max_output_tokens": 256}),
    )
    text = offline_model().complete(request).text
    assert len(text) // 4 <= 256
    assert 0 < len(json.loads(text)["candidates"]) < 16


@pytest.mark.parametrize(
    "request_",
    [
        ModelRequest(messages=(ModelMessage(role="user", text="Write me a poem."),)),
        ModelRequest(
            messages=(ModelMessage(role="user", text="not a document"),),
            output=OutputSchema.of(ExtractionAnswer, EXTRACTION_SCHEMA),
        ),
    ],
)
def test_anything_but_cairn_s_own_requests_is_refused_as_a_configuration_problem(
    request_: ModelRequest,
) -> None:
    with pytest.raises(ConfigurationError):
        offline_model().complete(request_)


def test_the_provider_answers_only_the_schemas_its_caller_gave_it_responders_for() -> None:
    echo = Responder(key="items", answer=lambda text: [{"said": text}, {"said": text}])
    model = HeuristicModel({"echo": echo})
    request = ModelRequest(
        messages=(ModelMessage(role="user", text="hello"),),
        output=OutputSchema(name="echo", json_schema={"type": "object"}),
    )

    assert json.loads(model.complete(request).text) == {
        "items": [{"said": "hello"}, {"said": "hello"}]
    }
    assert model.schemas == {"echo"}
    with pytest.raises(ConfigurationError, match="echo"):
        model.complete(
            request.model_copy(update={"output": OutputSchema.of(ExtractionAnswer, "other")})
        )
    bounded = request.model_copy(update={"max_output_tokens": 8})
    assert json.loads(model.complete(bounded).text) == {"items": [{"said": "hello"}]}


def test_the_offline_model_answers_every_feature_s_schema() -> None:
    assert offline_model().schemas == {
        EXTRACTION_SCHEMA,
        FORMATION_SCHEMA,
        EPISODE_SCHEMA,
        REFLECTION_SCHEMA,
        CONSOLIDATION_SCHEMA,
        ROLLUP_SCHEMA_NAME,
        LINK_SCHEMA_NAME,
        RECORD_REFLECTION_SCHEMA,
        CONTRADICTION_SCHEMA_NAME,
        EVOLUTION_SCHEMA_NAME,
    }
