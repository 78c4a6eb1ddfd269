"""Consolidation embedded: runs complete, their evidence is staged and consolidated by the
deferred worker beside extraction, and a reversed preference ends superseded and linked."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from cairn.changes import RecordPatch, Revise
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import EmbeddedExtraction, wire_embedded
from cairn.runtime.session import MemorySession
from cairn.store.sqlite import SQLiteBackend
from tests.pipeline.consolidation_scenario import (
    COFFEE,
    MEMORY,
    RUN_1,
    RUN_2,
    TEA,
    ScenarioModel,
    assert_resolved,
    by_content,
    hold_run,
)
from tests.pipeline.scenario import SCOPE
from tests.unit.consolidation_support import SynchronousExecutor

WINDOW = timedelta(milliseconds=200)


@pytest.fixture
def model() -> ScenarioModel:
    return ScenarioModel()


@pytest.fixture
def wired(
    tmp_path: Path, clock: FixedClock, model: ScenarioModel, embedder: HashingEmbedder
) -> Iterator[EmbeddedExtraction]:
    found = wire_embedded(
        SQLiteBackend(tmp_path / "cairn.db", clock).stores(),
        FilesystemStagingStore(tmp_path / "cairn.db-rollouts"),
        model=model,
        embedder=embedder,
        clock=clock,
        consolidation_executor=SynchronousExecutor(),
    )
    assert found.stores.memories is not None
    found.stores.memories.create(MEMORY)
    yield found
    found.close()


def _session(wired: EmbeddedExtraction, embedder: HashingEmbedder, day: int) -> MemorySession:
    return wired.session(
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id=f"day-{day}",
        embedder=embedder,
    )


def _extract_and_consolidate(wired: EmbeddedExtraction, clock: FixedClock) -> None:
    wired.worker.run_once()
    clock.advance(WINDOW)
    assert wired.consolidation is not None
    wired.consolidation.run_once()


def test_a_reversed_preference_ends_superseded_linked_and_out_of_recall(
    wired: EmbeddedExtraction, clock: FixedClock, embedder: HashingEmbedder, model: ScenarioModel
) -> None:
    hold_run(_session(wired, embedder, 1), RUN_1, clock)
    _extract_and_consolidate(wired, clock)
    assert by_content(wired.stores, TEA).status.value == "active"

    clock.advance(timedelta(days=60))
    evidence_id = hold_run(_session(wired, embedder, 2), RUN_2, clock)
    _extract_and_consolidate(wired, clock)

    assert evidence_id is not None
    assert_resolved(wired.stores, evidence_id, embedder, clock)
    assert len(model.consolidation_requests) == 2
    assert wired.stores.rollouts is not None
    assert wired.stores.rollouts.list_pending(SCOPE, kind="evidence") == ()
    assert wired.consolidation is not None
    assert wired.consolidation.usage.calls == 2  # background usage, apart from the agent's


def test_a_write_during_the_pass_applies_nothing_and_the_evidence_stays_pending(
    wired: EmbeddedExtraction, clock: FixedClock, embedder: HashingEmbedder, model: ScenarioModel
) -> None:
    hold_run(_session(wired, embedder, 1), RUN_1, clock)
    _extract_and_consolidate(wired, clock)
    clock.advance(timedelta(days=60))
    evidence_id = hold_run(_session(wired, embedder, 2), RUN_2, clock)
    wired.worker.run_once()
    tea = by_content(wired.stores, TEA)
    answer = model.complete

    def racing(request):  # type: ignore[no-untyped-def]
        if request.output is not None and request.output.name == "cairn_consolidation":
            wired.stores.records.apply(  # the user edits the record meanwhile
                SCOPE, [Revise(record_id=tea.record_id, patch=RecordPatch(importance=0.9))]
            )
            model.complete = answer  # type: ignore[method-assign]
        return answer(request)

    model.complete = racing  # type: ignore[method-assign]
    clock.advance(WINDOW)
    assert wired.consolidation is not None
    (first,) = wired.consolidation.run_once()

    assert first.status == "conflict"
    assert by_content(wired.stores, TEA).status.value == "active"
    assert by_content(wired.stores, COFFEE).status.value == "active"
    assert wired.stores.rollouts is not None
    pending = [r.rollout_id for r in wired.stores.rollouts.list_pending(SCOPE, kind="evidence")]
    assert pending == [evidence_id]

    clock.advance(timedelta(seconds=5))  # the one retry, on a fresh snapshot
    (retried,) = wired.consolidation.run_once()
    assert retried.status == "committed"
    assert evidence_id is not None
    assert_resolved(wired.stores, evidence_id, embedder, clock)
