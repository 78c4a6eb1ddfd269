"""Consolidation on moto: a completed run's evidence is staged in S3, announced on the topic,
delivered to the consolidation queue only (the subscription filters), and the consolidation
Lambda's pass resolves a reversed preference; the extraction queue never sees the evidence."""

from __future__ import annotations

import importlib
from datetime import timedelta
from typing import Any

import pytest

from cairn.aws.sweep_timer import schedule_name, wake_minute
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.triggers import policy_for
from cairn.models import EventInput, Scope
from cairn.rollout.index import REDELIVER_AFTER, RolloutState
from cairn.rollout.payload import decode_notice
from cairn.runtime.session import MemorySession
from tests.pipeline.aws import Deployment, LambdaRuntime
from tests.pipeline.conftest import SwitchableModel
from tests.pipeline.consolidation_scenario import (
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


@pytest.fixture
def consolidation_lambda(deployment: Deployment, session: Any) -> LambdaRuntime:
    handler = importlib.import_module("functions.consolidation.handler")
    return LambdaRuntime(session.client("sqs"), deployment.consolidation(), handler.lambda_handler)


def _session(embedder: HashingEmbedder, clock: FixedClock, day: int) -> MemorySession:
    from functions._common import wiring

    pipeline, policy = wiring.pipeline(), policy_for(MEMORY)

    def append(scope: Scope, event: EventInput) -> object:
        return pipeline.append(scope, event, policy)

    return MemorySession.local(
        wiring.stores(),
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id=f"day-{day}",
        embedder=embedder,
        clock=clock,
        appender=append,
        evidence=wiring.evidence_stager().stage,
    )


def test_the_consolidation_lambda_resolves_a_reversed_preference(
    deployment: Deployment,
    session: Any,
    extraction_lambda: LambdaRuntime,
    consolidation_lambda: LambdaRuntime,
    model: SwitchableModel,
    clock: FixedClock,
    embedder: HashingEmbedder,
) -> None:
    from functions._common import wiring

    scenario = ScenarioModel()
    model.inner = scenario
    stores = wiring.stores()
    assert stores.memories is not None
    stores.memories.create(MEMORY)

    hold_run(_session(embedder, clock, 1), RUN_1, clock)
    assert extraction_lambda.poll() == []
    assert consolidation_lambda.poll() == []
    assert by_content(stores, TEA).status.value == "active"

    clock.advance(timedelta(days=60))
    evidence_id = hold_run(_session(embedder, clock, 2), RUN_2, clock)
    assert evidence_id is not None
    # Staging the evidence armed the sweep for its redelivery check, as an append would.
    assert stores.rollouts is not None
    staged = stores.rollouts.get(SCOPE, evidence_id)
    wake = schedule_name(wake_minute(staged.updated_at + REDELIVER_AFTER, clock.now()))
    group = deployment.schedule_group
    armed = session.client("scheduler").list_schedules(GroupName=group)["Schedules"]
    assert wake in {schedule["Name"] for schedule in armed}
    extracted = extraction_lambda.receive()
    assert all(not decode_notice(m["Body"]).rollout_id.startswith("ev-") for m in extracted)
    assert extraction_lambda.deliver(extracted) == []
    notices = consolidation_lambda.receive()
    assert [decode_notice(m["Body"]).rollout_id for m in notices] == [evidence_id]
    assert consolidation_lambda.deliver(notices) == []

    assert_resolved(stores, evidence_id, embedder, clock)
    assert stores.rollouts is not None
    assert stores.rollouts.get(SCOPE, evidence_id).state is RolloutState.CONSUMED
    assert len(scenario.consolidation_requests) == 2
    assert consolidation_lambda.dead_letters() == []
