"""Strategies: where records go, what the model is shown, and how an answer becomes candidates."""

from __future__ import annotations

import json

import pytest

from cairn.api.record_codec import STRATEGY_ID_KEY
from cairn.errors import InvalidInputError
from cairn.extract.extraction_policy import DEFAULT_EXTRACTION_POLICY
from cairn.extract.prompts import (
    ContextMessage,
    ExtractionInput,
    PromptMessage,
    document_bytes,
    fit_extraction_input,
)
from cairn.extract.strategies import (
    STRATEGY_ID_METADATA_KEY,
    extract_candidates,
    resolve_namespace,
)
from cairn.memories import StrategyKind
from cairn.models import Role, SourceKind, Trust, derive_trust
from cairn.testing import ScriptedModel
from tests.unit.extraction_inputs import (
    ACTOR,
    FACTS,
    NOTHING,
    candidates,
    memory,
    message,
    rollout,
    strategy,
)

SEMANTIC = strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{actorId}/")


@pytest.mark.parametrize(
    ("template", "namespace"),
    [
        ("/facts/{actorId}/", "/facts/tg:12345/"),
        ("/summaries/{actorId}/{sessionId}/", "/summaries/tg:12345/chat-1/"),
        (
            "/strategies/{memoryStrategyId}/actors/{actorId}/",
            "/strategies/facts-AbCdEf1234/actors/tg:12345/",
        ),
        ("/shared/", "/shared/"),
    ],
)
def test_a_template_resolves_with_the_actor_session_and_strategy(
    template: str, namespace: str
) -> None:
    chosen = strategy(FACTS, StrategyKind.SEMANTIC, template)
    assert resolve_namespace(chosen, actor_id=ACTOR, session_id="chat-1") == namespace


def test_a_template_with_a_variable_extraction_cannot_fill_is_refused_clearly() -> None:
    chosen = strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{team}/{actorId}/")
    with pytest.raises(InvalidInputError, match=r"\{team\}"):
        resolve_namespace(chosen, actor_id=ACTOR, session_id="chat-1")


def test_a_template_that_resolves_to_an_invalid_namespace_is_refused() -> None:
    chosen = strategy(FACTS, StrategyKind.SEMANTIC, "-{actorId}/")  # a namespace starts with / or
    with pytest.raises(InvalidInputError, match="valid namespace"):  # a letter or digit
        resolve_namespace(chosen, actor_id=ACTOR, session_id="chat-1")


def test_candidates_are_model_sourced_capped_and_cite_their_rollout_and_events() -> None:
    payload = rollout(
        message(1, "I moved to Porto."),
        message(2, "Nice!", Role.ASSISTANT),
        message(3, "My office is by the river."),
    )
    model = ScriptedModel([candidates(("The user lives in Porto.", [1, 3, 1]))])
    found = extract_candidates(
        model,
        payload,
        SEMANTIC,
        namespace="/facts/tg:12345/",
        summary_so_far=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    assert found.candidates is not None
    (record,) = found.candidates
    assert record.namespace == "/facts/tg:12345/"
    assert record.strategy == "semantic"
    assert record.confidence == DEFAULT_EXTRACTION_POLICY.inferred_confidence_cap
    assert derive_trust(record.sources) is Trust.UNTRUSTED
    assert [(s.kind, s.event_id, s.rollout_id, s.session_id) for s in record.sources] == [
        (SourceKind.MODEL, payload.events[0].event_id, "ro-1", "chat-1"),
        (SourceKind.MODEL, payload.events[2].event_id, "ro-1", "chat-1"),
    ]
    assert record.seen_at == payload.events[2].event_timestamp
    assert record.metadata == {STRATEGY_ID_METADATA_KEY: FACTS}


def test_the_strategy_id_key_is_the_one_the_agentcore_api_reads() -> None:
    assert STRATEGY_ID_METADATA_KEY == STRATEGY_ID_KEY


def test_a_preference_strategy_files_preferences_whatever_the_model_calls_them() -> None:
    prefs = strategy("prefs-AbCdEf1234", StrategyKind.USER_PREFERENCE, "/p/{actorId}/")
    model = ScriptedModel([candidates(("The user prefers aisle seats.", [1]), category="habit")])
    found = extract_candidates(
        model,
        rollout(message(1, "Aisle, always.")),
        prefs,
        namespace="/p/tg:12345/",
        summary_so_far=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    assert found.candidates is not None
    assert found.candidates[0].category == "preference"


def test_an_evidence_alias_the_prompt_did_not_assign_is_invalid_and_asked_again() -> None:
    model = ScriptedModel([candidates(("The user lives in Porto.", [7])), NOTHING])
    found = extract_candidates(
        model,
        rollout(message(1, "I moved to Porto.")),
        SEMANTIC,
        namespace="/facts/tg:12345/",
        summary_so_far=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    assert found.candidates == ()
    assert "evidence alias 7" in model.requests[1].messages[-1].text


def test_the_model_sees_aliases_and_text_never_event_or_record_ids() -> None:
    payload = rollout(message(1, "I prefer tea."), history=(message(0, "Hello."),))
    model = ScriptedModel([NOTHING])
    extract_candidates(
        model,
        payload,
        SEMANTIC,
        namespace="/facts/tg:12345/",
        summary_so_far=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    (request,) = model.requests
    shown = json.loads(request.messages[0].text)
    assert shown["messages"] == [{"alias": 1, "role": "USER", "text": "I prefer tea."}]
    assert shown["history"] == [{"role": "USER", "text": "Hello."}]
    everything = request.system + request.messages[0].text
    assert payload.events[0].event_id not in everything
    assert "mem-" not in everything
    assert request.max_output_tokens == DEFAULT_EXTRACTION_POLICY.max_output_tokens
    assert request.timeout_seconds == DEFAULT_EXTRACTION_POLICY.timeout_seconds


def test_a_custom_strategy_s_own_prompt_is_appended_to_the_instructions() -> None:
    custom = strategy(
        "custom-AbCdEf1234",
        StrategyKind.CUSTOM,
        "/custom/{actorId}/",
        extraction_prompt="Only keep facts about the user's travel plans.",
    )
    model = ScriptedModel([NOTHING])
    extract_candidates(
        model,
        rollout(message(1, "I fly to Oslo on Friday.")),
        custom,
        namespace="/custom/tg:12345/",
        summary_so_far=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    system = model.requests[0].system
    assert system.endswith("Only keep facts about the user's travel plans.")
    assert "Extract facts" in system


def test_a_summary_request_carries_the_summary_so_far() -> None:
    summary = strategy("summary-AbCdEf1234", StrategyKind.SUMMARY, "/s/{actorId}/{sessionId}/")
    model = ScriptedModel([NOTHING])
    extract_candidates(
        model,
        rollout(message(1, "Let's plan the trip.")),
        summary,
        namespace="/s/tg:12345/chat-1/",
        summary_so_far="The user is planning a trip.",
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    shown = json.loads(model.requests[0].messages[0].text)
    assert shown["summary_so_far"] == "The user is planning a trip."
    assert model.requests[0].output is not None
    schema = model.requests[0].output.json_schema
    assert schema["properties"]["candidates"]["maxItems"] == 1


def test_an_oversized_document_is_shortened_history_first_and_keeps_every_alias() -> None:
    messages = tuple(
        PromptMessage(alias=i, role=Role.USER, text=f"{i} " + "words " * 2000) for i in range(1, 9)
    )
    history = tuple(ContextMessage(role=Role.USER, text="old " * 3000) for _ in range(5))
    document = ExtractionInput(strategy=StrategyKind.SEMANTIC, messages=messages, history=history)
    fitted = fit_extraction_input(document, 20_000)
    assert document_bytes(fitted) <= 20_000
    assert fitted.history == ()
    assert [m.alias for m in fitted.messages] == list(range(1, 9))
    assert all(m.text.startswith(f"{m.alias} ") and m.text.endswith("…") for m in fitted.messages)


def test_the_default_memory_has_one_strategy_of_each_built_in_kind() -> None:
    kinds = {s.kind for s in memory().strategies}
    assert kinds == {StrategyKind.SEMANTIC, StrategyKind.USER_PREFERENCE, StrategyKind.SUMMARY}
