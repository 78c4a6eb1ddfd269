"""A strategy's ``memoryRecordSchema`` through the API (router in-process, SQLite, the worker
driven by ``run_once``, the scripted model): returned by GetMemory as given, refused with a
400 where cairn cannot enforce it, its LLM_INFERRED fields asked of the extraction model and
kept only when valid, and records written through the API checked against it."""

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
from tests.unit.test_api_extraction import ACTOR, T0, post_turns

PRIORITY = {
    "key": "priority",
    "type": "STRING",
    "extractionType": "LLM_INFERRED",
    "extractionConfig": {
        "llmExtractionConfig": {
            "definition": "How urgent the user's request is",
            "llmExtractionInstruction": "high only when the user says it is urgent",
            "validation": {"stringValidation": {"allowedValues": ["high", "low"]}},
        }
    },
}
STARS = {
    "key": "stars",
    "type": "NUMBER",
    "extractionConfig": {
        "llmExtractionConfig": {
            "definition": "The rating the user gave",
            "validation": {"numberValidation": {"minValue": 1.0, "maxValue": 5.0}},
        }
    },
}
TOPICS = {
    "key": "topics",
    "type": "STRINGLIST",
    "extractionType": "LLM_INFERRED",
    "extractionConfig": {
        "llmExtractionConfig": {
            "definition": "What the memory is about",
            "validation": {"stringListValidation": {"maxItems": 2}},
        }
    },
}
CHANNEL = {"key": "channel", "type": "STRING"}
SCHEMA = {"metadataSchema": [PRIORITY, STARS, TOPICS, CHANNEL]}


def _facts(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "semanticMemoryStrategy": {
            "name": "facts",
            "namespaceTemplates": ["/facts/{actorId}/"],
            "memoryRecordSchema": schema,
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


def test_get_memory_returns_the_record_schema_as_given_and_update_replaces_it(
    call: Caller,
) -> None:
    memory = create_memory(call, memoryStrategies=[_facts(SCHEMA)])

    (shown,) = call("GET", f"/memories/{memory['id']}/details").body["memory"]["strategies"]
    assert shown["memoryRecordSchema"] == SCHEMA
    change = {
        "memoryStrategyId": shown["strategyId"],
        "memoryRecordSchema": {"metadataSchema": [CHANNEL]},
    }
    reply = call(
        "PUT",
        f"/memories/{memory['id']}/update",
        {"memoryStrategies": {"modifyMemoryStrategies": [change]}},
    )
    assert reply.status == 202, reply.body
    (after,) = reply.body["memory"]["strategies"]
    assert after["memoryRecordSchema"] == {"metadataSchema": [CHANNEL]}


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        (
            [{"key": "tenant", "type": "STRING", "extractionType": "STRICTLY_CONSISTENT"}],
            "STRICTLY",
        ),
        ([{**STARS, "type": "STRING"}], "takes stringValidation, not numberValidation"),
        ([CHANNEL, {**CHANNEL, "type": "NUMBER"}], "share a key"),
        (
            [{"key": "mood", "type": "STRING", "extractionType": "LLM_INFERRED"}],
            "llmExtractionConfig",
        ),
        (
            [
                {
                    **STARS,
                    "extractionConfig": {
                        "llmExtractionConfig": {
                            "definition": "d",
                            "validation": {"numberValidation": {"minValue": 5.0, "maxValue": 1.0}},
                        }
                    },
                }
            ],
            "minValue is above its maxValue",
        ),
    ],
    ids=[
        "strictly-consistent",
        "validation-of-another-type",
        "same-key-twice",
        "inferred-without-config",
        "min-above-max",
    ],
)
def test_a_schema_cairn_cannot_enforce_is_refused_naming_it(
    call: Caller, entries: list[dict[str, Any]], said: str
) -> None:
    body = {
        "name": "schemas",
        "eventExpiryDuration": 30,
        "memoryStrategies": [_facts({"metadataSchema": entries})],
    }

    reply = call("POST", "/memories/create", body)

    assert reply.status == 400, reply.body
    assert reply.error_type == "ValidationException"
    assert "memoryRecordSchema" in reply.body["message"]
    assert said in reply.body["message"]
    assert call("POST", "/memories/", {}).body["memories"] == []


def test_an_episodic_strategy_s_record_schema_is_refused(call: Caller) -> None:
    episodic = {
        "episodicMemoryStrategy": {
            "name": "journeys",
            "memoryRecordSchema": SCHEMA,
            "reflectionConfiguration": {
                "namespaceTemplates": ["/strategies/{memoryStrategyId}/actors/{actorId}/"]
            },
        }
    }
    reply = call(
        "POST",
        "/memories/create",
        {"name": "ep", "eventExpiryDuration": 30, "memoryStrategies": [episodic]},
    )

    assert reply.status == 400
    assert "memoryRecordSchema is not supported" in reply.body["message"]


def test_extraction_asks_for_the_inferred_fields_and_keeps_only_valid_values(
    call: Caller, served: EmbeddedApi, model: ScriptedModel
) -> None:
    memory = create_memory(call, memoryStrategies=[_facts(SCHEMA)])
    proposed = {
        "priority": "high",
        "stars": 9,  # outside 1-5: dropped
        "topics": ["work", "travel", "food"],  # over maxItems 2: dropped
        "channel": "email",  # declared but not inferred: not the model's to set
        "mood": "calm",  # not declared: dropped
    }
    answer = {"content": "The user's office is in Porto.", "evidence": [3], "metadata": proposed}
    model.queue(json.dumps({"candidates": [answer]}))

    post_turns(call, memory["id"])
    served.extraction.worker.run_once()

    (request,) = model.requests
    assert '"metadata_fields"' in request.messages[0].text
    assert "How urgent the user's request is" in request.messages[0].text
    assert '"channel"' not in request.messages[0].text
    assert "never guess" in request.system
    high = {
        "left": {"metadataKey": "priority"},
        "operator": "EQUALS_TO",
        "right": {"metadataValue": {"stringValue": "high"}},
    }
    listed = call(
        "POST",
        f"/memories/{memory['id']}/memoryRecords",
        {"namespace": "/", "metadataFilters": [high]},
    )
    (record,) = listed.body["memoryRecordSummaries"]
    assert record["metadata"] == {"priority": {"stringValue": "high"}}
    assert record["namespaces"] == [f"/facts/{ACTOR}/"]


def test_records_written_through_the_api_are_checked_against_their_strategy_s_schema(
    call: Caller,
) -> None:
    memory = create_memory(call, memoryStrategies=[_facts(SCHEMA)])
    (strategy,) = memory["strategies"]

    def record(request_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
        return {
            "requestIdentifier": request_id,
            "namespaces": [f"/facts/{ACTOR}/"],
            "content": {"text": f"A fact {request_id}."},
            "timestamp": T0,
            "memoryStrategyId": strategy["strategyId"],
            "metadata": metadata,
        }

    records = [
        record(
            "ok",
            {
                "priority": {"stringValue": "low"},
                "stars": {"numberValue": 4},
                "free": {"stringValue": "x"},
            },
        ),
        record("urgent", {"priority": {"stringValue": "urgent"}}),
        record("typed", {"stars": {"stringValue": "four"}}),
    ]
    reply = call(
        "POST", f"/memories/{memory['id']}/memoryRecords/batchCreate", {"records": records}
    )

    assert [r["requestIdentifier"] for r in reply.body["successfulRecords"]] == ["ok"]
    failed = {r["requestIdentifier"]: r["errorMessage"] for r in reply.body["failedRecords"]}
    assert "'priority' may not be 'urgent'" in failed["urgent"]
    assert "'stars' takes numberValue" in failed["typed"]
    listed = call("POST", f"/memories/{memory['id']}/memoryRecords", {"namespace": "/"})
    assert [r["content"]["text"] for r in listed.body["memoryRecordSummaries"]] == ["A fact ok."]
