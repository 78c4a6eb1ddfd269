"""A built-in strategy's prompt override through the API (router in-process, SQLite, the worker
driven by ``run_once``, the scripted model): accepted as the service accepts it, returned by
GetMemory as given, and its ``appendToPrompt`` reaches the model request of that strategy's
extraction, which files records as the built-in strategy it overrides."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.triggers import BUILT_IN_TRIGGERS
from cairn.local.api import EmbeddedApi, serve_embedded
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import ScriptedModel
from tests.unit.api_harness import Caller, create_memory
from tests.unit.test_api_extraction import ACTOR, post_turns, texts

APPENDED = "Only keep facts about the user's travel."
ANSWER = '{"candidates": [{"content": "The user\'s office is in Porto.", "evidence": [3]}]}'


def _override(name: str, **parts: dict[str, str]) -> dict[str, Any]:
    return {
        "customMemoryStrategy": {
            "name": "travel",
            "namespaceTemplates": ["/travel/{actorId}/"],
            "configuration": {name: parts},
        }
    }


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def served(tmp_path: Path, model: ScriptedModel) -> Iterator[EmbeddedApi]:
    clock = FixedClock()
    path = tmp_path / "cairn.db"
    embedded = serve_embedded(
        SQLiteBackend(path, clock).stores(),
        path,
        embedder=HashingEmbedder(),
        model=model,
        clock=clock,
        start_worker=False,
        built_in_triggers=BUILT_IN_TRIGGERS,
    )
    yield embedded
    embedded.close()


@pytest.fixture
def call(served: EmbeddedApi) -> Caller:
    return Caller(served.api)


def test_an_appended_prompt_reaches_the_extraction_request_and_files_as_the_built_in(
    call: Caller, served: EmbeddedApi, model: ScriptedModel
) -> None:
    strategy = _override(
        "semanticOverride",
        extraction={"appendToPrompt": APPENDED, "modelId": "my-model"},
        consolidation={"appendToPrompt": "Merge travel facts.", "modelId": "my-model"},
    )
    memory = create_memory(call, memoryStrategies=[strategy])
    model.queue(ANSWER)

    post_turns(call, memory["id"])
    done = served.extraction.worker.run_once()

    assert [d.status for d in done] == ["consumed"]
    (request,) = model.requests
    assert request.system.endswith(APPENDED)
    assert "Extract facts" in request.system  # the semantic strategy's own instructions
    assert texts(call, memory["id"]) == ["The user's office is in Porto."]
    listed = call("POST", f"/memories/{memory['id']}/memoryRecords", {"namespace": "/travel/"})
    (record,) = listed.body["memoryRecordSummaries"]
    assert record["namespaces"] == [f"/travel/{ACTOR}/"]


def test_get_memory_returns_the_override_as_given(call: Caller) -> None:
    strategy = _override(
        "userPreferenceOverride",
        extraction={"appendToPrompt": APPENDED, "modelId": "my-model"},
    )
    memory = create_memory(call, memoryStrategies=[strategy])

    got = call("GET", f"/memories/{memory['id']}/details").body["memory"]

    (shown,) = got["strategies"]
    assert shown["type"] == "CUSTOM"
    assert shown["configuration"] == {
        "type": "USER_PREFERENCE_OVERRIDE",
        "extraction": {
            "customExtractionConfiguration": {
                "userPreferenceExtractionOverride": {
                    "appendToPrompt": APPENDED,
                    "modelId": "my-model",
                }
            }
        },
    }


def test_a_summary_override_adds_its_prompt_to_the_summary_cairn_writes_in_extraction(
    call: Caller, served: EmbeddedApi, model: ScriptedModel
) -> None:
    strategy = _override(
        "summaryOverride", consolidation={"appendToPrompt": APPENDED, "modelId": "m"}
    )
    memory = create_memory(call, memoryStrategies=[strategy])
    model.queue('{"candidates": [{"content": "The user talked about Porto.", "evidence": [3]}]}')

    post_turns(call, memory["id"])
    served.extraction.worker.run_once()

    (request,) = model.requests
    assert request.system.endswith(APPENDED)
    assert request.output is not None
    assert request.output.json_schema["properties"]["candidates"]["maxItems"] == 1


@pytest.mark.parametrize(
    "configuration",
    [
        {
            "semanticOverride": {"extraction": {"appendToPrompt": "a", "modelId": "m"}},
            "userPreferenceOverride": {"extraction": {"appendToPrompt": "b", "modelId": "m"}},
        },
        {"episodicOverride": {"extraction": {"appendToPrompt": "a", "modelId": "m"}}},
    ],
    ids=["two-overrides", "episodic-without-reflections"],
)
def test_an_override_the_service_would_refuse_creates_nothing(
    call: Caller, configuration: dict[str, Any]
) -> None:
    body = {
        "name": "refused",
        "eventExpiryDuration": 30,
        "memoryStrategies": [
            {"customMemoryStrategy": {"name": "travel", "configuration": configuration}}
        ],
    }

    reply = call("POST", "/memories/create", body)

    assert reply.status == 400
    assert "configuration" in reply.body["message"]
    listed = call("POST", "/memories/", {})
    assert listed.body["memories"] == []


def test_an_episodic_override_s_prompts_reach_the_episode_and_reflection_requests(
    call: Caller, served: EmbeddedApi, model: ScriptedModel
) -> None:
    reflections = "/journeys/{actorId}/"
    strategy = {
        "customMemoryStrategy": {
            "name": "journeys",
            "namespaceTemplates": ["/journeys/{actorId}/sessions/{sessionId}/"],
            "configuration": {
                "episodicOverride": {
                    "extraction": {"appendToPrompt": "Tell trips only.", "modelId": "m1"},
                    "consolidation": {"appendToPrompt": "Keep trips apart.", "modelId": "m2"},
                    "reflection": {
                        "appendToPrompt": "Reflect on how the user travels.",
                        "modelId": "m3",
                        "namespaceTemplates": [reflections],
                    },
                }
            },
        }
    }
    memory = create_memory(call, memoryStrategies=[strategy])
    (shown,) = call("GET", f"/memories/{memory['id']}/details").body["memory"]["strategies"]
    assert shown["type"] == "CUSTOM"
    assert shown["configuration"]["type"] == "EPISODIC_OVERRIDE"
    assert shown["configuration"]["reflection"] == {
        "customReflectionConfiguration": {
            "episodicReflectionOverride": {
                "appendToPrompt": "Reflect on how the user travels.",
                "modelId": "m3",
                "namespaces": [reflections],
                "namespaceTemplates": [reflections],
            }
        }
    }
    told = {"situation": "The user plans a trip.", "intent": "Book.", "actions": ["Searched."]}
    episode = json.dumps({"candidates": [{**told, "outcome": "Booked.", "evidence": [1]}]})
    insight = {"content": "The user books trips early.", "evidence": [1, 2]}
    model.queue(episode, episode, json.dumps({"candidates": [insight]}))

    post_turns(call, memory["id"], "s1")
    post_turns(call, memory["id"], "s2")
    served.extraction.worker.run_once()

    first, _, reflected = model.requests
    assert first.system.endswith("Tell trips only.")
    assert reflected.system.endswith("Reflect on how the user travels.")
    listed = call(
        "POST", f"/memories/{memory['id']}/memoryRecords", {"namespace": f"/journeys/{ACTOR}/"}
    )
    contents = {
        r["namespaces"][0]: r["content"]["text"] for r in listed.body["memoryRecordSummaries"]
    }
    assert contents[f"/journeys/{ACTOR}/"] == "The user books trips early."
