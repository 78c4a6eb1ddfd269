"""The contradiction scenario both consolidation pipeline tests play: a preference stated in one
run, reversed in a later one, and the scripted consolidation answer that resolves it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from cairn.clock import FixedClock
from cairn.consolidate.prompts import CONSOLIDATION_SCHEMA
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.triggers import EMBEDDED_STRATEGIES, embedded_memory
from cairn.local import offline_model
from cairn.memories import MemoryConfig, StrategyKind
from cairn.model_request import ModelRequest, ModelResponse, ModelUsage
from cairn.models import RecordVersion, Role, Status
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.runtime.session import MemorySession
from tests.pipeline.scenario import SCOPE

# Facts and preferences, no session summaries: a summary would repeat the old preference.
MEMORY = MemoryConfig.model_validate(
    {
        **embedded_memory(SCOPE.memory_id).model_dump(),
        "name": "support",
        "strategies": [s for s in EMBEDDED_STRATEGIES if s.kind is not StrategyKind.SUMMARY],
    }
)
TEA = "The user prefers tea."
COFFEE = "The user prefers coffee now."
# Six messages each: the built-in message trigger releases them for extraction.
RUN_1 = (
    (Role.USER, "Good morning! Can you plan my breakfasts?"),
    (Role.ASSISTANT, "Of course. Anything I should know?"),
    (Role.USER, "I prefer tea."),
    (Role.ASSISTANT, "Tea it is."),
    (Role.USER, "Thanks, that is all."),
    (Role.ASSISTANT, "Enjoy your breakfast."),
)
RUN_2 = (
    (Role.USER, "Quick update about my mornings."),
    (Role.ASSISTANT, "Go ahead."),
    (Role.USER, "I prefer coffee now."),
    (Role.ASSISTANT, "Coffee it is."),
    (Role.USER, "I switched in March."),
    (Role.ASSISTANT, "Noted: coffee since March."),
)


class ScenarioModel:
    """The offline heuristic extractor, and a scripted consolidation answer: when the old and
    the new preference are both shown, the new one holds, decided by the evidence."""

    def __init__(self) -> None:
        self.extractor = offline_model()
        self.consolidation_requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelResponse:
        if request.output is None or request.output.name != CONSOLIDATION_SCHEMA:
            return self.extractor.complete(request)
        self.consolidation_requests.append(request)
        document = json.loads(request.messages[0].text)
        aliases = {r["content"]: r["alias"] for r in document["records"]}
        changes: list[dict[str, Any]] = []
        if TEA in aliases and COFFEE in aliases:
            changes.append(
                {
                    "kind": "contradiction",
                    "records": [aliases[TEA], aliases[COFFEE]],
                    "holds": aliases[COFFEE],
                    "reason": "the user switched to coffee in March",
                    "evidence": [document["evidence"][-1]["alias"]],
                }
            )
        return ModelResponse(
            text=json.dumps({"changes": changes}),
            usage=ModelUsage(calls=1, input_tokens=100, output_tokens=20),
            model_id="scenario",
            latency_ms=0,
        )


def hold_run(
    session: MemorySession, turns: tuple[tuple[Role, str], ...], clock: FixedClock
) -> str | None:
    """One agent run of ``turns``, its turns written; returns the evidence rollout id after
    completing it."""
    run = session.start_run(turns[0][1])
    for role, text in turns:
        run.add_turn(role, text)
        clock.advance(timedelta(seconds=1))
    session.flush()
    return run.complete(turns[-1][1])


def by_content(stores: Stores, content: str) -> RecordVersion:
    page = stores.records.list_records(SCOPE, include_inactive=True, limit=1000)
    (found,) = (v for v in page.items if v.content == content)
    return found


def assert_resolved(
    stores: Stores, evidence_id: str, embedder: HashingEmbedder, clock: FixedClock
) -> None:
    """The old preference superseded and linked to the new one, citing the evidence that
    decided it; recall shows only the new one."""
    old, new = by_content(stores, TEA), by_content(stores, COFFEE)
    assert old.status is Status.SUPERSEDED
    assert old.superseded_by == new.record_id
    assert old.metadata["supersede_evidence"] == evidence_id
    assert new.status is Status.ACTIVE
    block = recall(
        SCOPE,
        RecallQuery(text="Does the user prefer tea or coffee in the morning?"),
        stores=stores,
        embedder=embedder,
        clock=clock,
    ).block
    assert COFFEE in block
    assert TEA not in block
