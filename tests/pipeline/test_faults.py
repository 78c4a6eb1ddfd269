"""Crashes and failures anywhere on the path: each ends with every acknowledged event in
exactly one rollout that was consumed (or failed with its reason) and no fact filed twice."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.extract.delivery import consume
from cairn.extract.staging import RolloutPipeline
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.local.system import EmbeddedExtraction
from cairn.rollout.index import REDELIVER_AFTER, STALL_AFTER, Rollout, RolloutState
from cairn.rollout.payload import decode_notice
from tests.pipeline.aws import CountdownContext, Deployment, LambdaContext, LambdaRuntime
from tests.pipeline.conftest import SwitchableModel
from tests.pipeline.faults import (
    AnswersGarbage,
    Crash,
    CrashAfterPublish,
    CrashAfterPut,
    CrashBeforeMarkingConsumed,
    CrashBeforePublish,
    TimesOut,
    assert_accounted_for,
)
from tests.pipeline.scenario import SCOPE, TURNS, assert_remembered, live_records, turn

POLICY = policy_for(embedded_memory(SCOPE.memory_id))

Breaker = Callable[[RolloutPipeline], RolloutPipeline]
CRASHES: dict[str, Breaker] = {
    "after-the-payload-is-written": lambda p: dataclasses.replace(
        p, staging=CrashAfterPut(p.staging)
    ),
    "after-staging-before-publishing": lambda p: dataclasses.replace(
        p, notifier=CrashBeforePublish()
    ),
    "after-publishing-before-marking": lambda p: dataclasses.replace(
        p, notifier=CrashAfterPublish(p.notifier)
    ),
}


def _converse(pipeline: RolloutPipeline, clock: FixedClock) -> tuple[list[str], Rollout]:
    """Append the scenario's turns; the last one claims. Returns event ids and the claim."""
    acknowledged = []
    for role, text in TURNS[:-1]:
        appended = pipeline.append(SCOPE, turn(role, text, clock), POLICY)
        acknowledged.append(appended.event.event_id)
    last = pipeline.append(SCOPE, turn(*TURNS[-1], clock), POLICY)
    assert last.claim is not None
    return [*acknowledged, last.event.event_id], last.claim


@pytest.mark.fault("staging", "killed-after", "dynamodb")
@pytest.mark.fault("publish", "killed-before", "dynamodb")
@pytest.mark.fault("publish", "killed-after", "dynamodb")
@pytest.mark.parametrize("crash", sorted(CRASHES))
def test_a_crash_while_releasing_is_finished_by_the_sweep_once(
    crash: str,
    deployment: Deployment,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    crashing = CRASHES[crash](wiring.pipeline())
    events = [crashing.append(SCOPE, turn(r, t, clock), POLICY).event for r, t in TURNS[:-1]]
    with pytest.raises(Crash):  # the last turn's append dies while releasing its rollout
        crashing.append(SCOPE, turn(*TURNS[-1], clock), POLICY)
    (claim,) = wiring.stores().rollouts.list_pending(SCOPE)  # type: ignore[union-attr]
    assert claim.state in (RolloutState.CLAIMED, RolloutState.STAGED)

    clock.advance(STALL_AFTER)
    report = sweep_lambda({}, LambdaContext())
    messages = extraction_lambda.receive()

    assert report["released"] == 1
    assert [decode_notice(m["Body"]).rollout_id for m in messages] == [claim.rollout_id]
    assert extraction_lambda.deliver(messages) == []
    clock.advance(REDELIVER_AFTER)
    assert sweep_lambda({}, LambdaContext())["reannounced"] == 0
    assert extraction_lambda.receive() == []
    last_event = wiring.stores().rollouts.get(SCOPE, claim.rollout_id).events[-1]  # type: ignore[union-attr]
    acknowledged = [e.event_id for e in events] + [last_event.event_id]
    assert_accounted_for(wiring.stores(), SCOPE, acknowledged, [claim.rollout_id])
    assert_remembered(live_records(wiring.stores()), claim.rollout_id)


@pytest.mark.fault("extraction", "duplicate", "dynamodb")
def test_a_duplicate_delivery_of_a_consumed_rollout_changes_nothing(
    deployment: Deployment, session: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    acknowledged, claim = _converse(wiring.pipeline(), clock)
    (message,) = extraction_lambda.receive()
    assert extraction_lambda.deliver([message]) == []
    before = live_records(wiring.stores())

    # SQS delivers at least once: the same notice arrives again, as a new message.
    session.client("sqs").send_message(
        QueueUrl=deployment.queue_url,
        MessageBody=message["Body"],
        MessageGroupId=message["Attributes"]["MessageGroupId"],
        MessageDeduplicationId="redelivery-1",
    )
    assert extraction_lambda.poll() == []

    assert live_records(wiring.stores()) == before
    assert_accounted_for(wiring.stores(), SCOPE, acknowledged, [claim.rollout_id])


@pytest.mark.fault("formation", "killed-after", "dynamodb")
def test_a_redelivery_after_records_were_written_but_before_consuming_writes_nothing_twice(
    deployment: Deployment, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    acknowledged, claim = _converse(wiring.pipeline(), clock)
    (message,) = extraction_lambda.receive()
    crashing = dataclasses.replace(
        wiring.consumer(), rollouts=CrashBeforeMarkingConsumed(wiring.consumer().rollouts)
    )
    with pytest.raises(Crash):
        consume(decode_notice(message["Body"]), crashing)
    written = live_records(wiring.stores())
    assert written  # the records were written before the crash

    assert extraction_lambda.deliver([message]) == []  # the message comes back

    assert live_records(wiring.stores()) == written
    assert_accounted_for(wiring.stores(), SCOPE, acknowledged, [claim.rollout_id])


@pytest.mark.fault("extraction", "timeout", "dynamodb")
def test_a_model_timeout_is_retried_by_the_queue_and_then_consumed(
    deployment: Deployment,
    extraction_lambda: LambdaRuntime,
    model: SwitchableModel,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    acknowledged, claim = _converse(wiring.pipeline(), clock)
    model.inner = TimesOut(model.inner, failures=1)

    first = extraction_lambda.receive()
    assert extraction_lambda.deliver(first) == [first[0]["MessageId"]]
    rollouts = wiring.stores().rollouts
    assert rollouts is not None
    assert rollouts.get(SCOPE, claim.rollout_id).state is RolloutState.ANNOUNCED
    assert live_records(wiring.stores()) == []  # nothing is written before the model answers

    assert extraction_lambda.poll() == []

    assert_accounted_for(wiring.stores(), SCOPE, acknowledged, [claim.rollout_id])
    assert_remembered(live_records(wiring.stores()), claim.rollout_id)


def test_a_notice_the_remaining_time_cannot_cover_goes_back_untouched_and_is_consumed_later(
    deployment: Deployment,
    extraction_lambda: LambdaRuntime,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from functions._common import wiring

    budget = 300_000  # what the stack sets (infra.components.extraction.RECORD_WORST_CASE)
    monkeypatch.setenv("CAIRN_RECORD_BUDGET_MS", str(budget))
    pipeline = wiring.pipeline()
    claims = []
    for actor in ("user-a", "user-b"):
        scope = SCOPE.model_copy(update={"actor_id": actor})
        for role, text in TURNS:
            appended = pipeline.append(scope, turn(role, text, clock), POLICY)
        assert appended.claim is not None
        claims.append((scope, appended.claim.rollout_id))
    messages = extraction_lambda.receive()
    assert len(messages) == 2

    # Enough time for the first notice; then less than one notice's worst case.
    failed = extraction_lambda.deliver(
        messages, CountdownContext(remaining=[budget + 1, budget - 1])
    )

    assert failed == [messages[1]["MessageId"]]
    rollouts = wiring.stores().rollouts
    assert rollouts is not None
    states = [rollouts.get(scope, rollout_id).state for scope, rollout_id in claims]
    assert states == [RolloutState.CONSUMED, RolloutState.ANNOUNCED]
    assert extraction_lambda.dead_letters() == []

    assert extraction_lambda.poll() == []  # the next invocation takes it
    assert rollouts.get(*claims[1]).state is RolloutState.CONSUMED


@pytest.mark.fault("extraction", "timeout", "dynamodb")
def test_a_model_that_keeps_timing_out_goes_to_the_dead_letter_queue_and_is_announced_again(
    deployment: Deployment,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    model: SwitchableModel,
    clock: FixedClock,
) -> None:
    from functions._common import wiring
    from tests.pipeline.aws import MAX_RECEIVES

    acknowledged, claim = _converse(wiring.pipeline(), clock)
    healthy, model.inner = model.inner, TimesOut(model.inner, failures=1_000)

    for _ in range(MAX_RECEIVES):
        assert len(extraction_lambda.poll()) == 1
    assert extraction_lambda.receive() == []
    assert len(extraction_lambda.dead_letters()) == 1

    model.inner = healthy
    clock.advance(REDELIVER_AFTER)
    assert sweep_lambda({}, LambdaContext())["reannounced"] == 1
    assert extraction_lambda.poll() == []

    rollouts = wiring.stores().rollouts
    assert rollouts is not None
    assert rollouts.get(SCOPE, claim.rollout_id).announcements == 2
    assert_accounted_for(wiring.stores(), SCOPE, acknowledged, [claim.rollout_id])
    assert_remembered(live_records(wiring.stores()), claim.rollout_id)


@pytest.mark.fault("extraction", "raised", "dynamodb")
def test_invalid_model_output_fails_the_rollout_with_its_reason_and_acknowledges_it(
    deployment: Deployment,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    model: SwitchableModel,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    acknowledged, claim = _converse(wiring.pipeline(), clock)
    model.inner = AnswersGarbage()

    assert extraction_lambda.poll() == []  # acknowledged: retrying cannot fix the answer

    rollouts = wiring.stores().rollouts
    assert rollouts is not None
    failed = rollouts.get(SCOPE, claim.rollout_id)
    assert failed.state is RolloutState.FAILED
    assert failed.failure is not None
    assert "invalid" in failed.failure
    assert rollouts.list_pending(SCOPE) == (failed,)
    assert live_records(wiring.stores()) == []
    clock.advance(REDELIVER_AFTER)
    assert sweep_lambda({}, LambdaContext())["reannounced"] == 0
    assert extraction_lambda.receive() == []
    assert_accounted_for(wiring.stores(), SCOPE, acknowledged, [claim.rollout_id])


# --- embedded --------------------------------------------------------------------------------


@pytest.mark.fault("staging", "killed-after", "sqlite")
def test_embedded_a_crash_after_staging_is_finished_by_the_timer(
    embedded: EmbeddedExtraction, clock: FixedClock
) -> None:
    assert embedded.worker.run_once() == []  # started: its start-up catch-up found nothing
    crashing = dataclasses.replace(embedded.pipeline, notifier=CrashBeforePublish())
    events = [crashing.append(SCOPE, turn(r, t, clock), POLICY).event for r, t in TURNS[:-1]]
    with pytest.raises(Crash):
        crashing.append(SCOPE, turn(*TURNS[-1], clock), POLICY)
    assert embedded.worker.run_once() == []

    clock.advance(STALL_AFTER)
    (handled,) = embedded.worker.run_once()

    rollouts = embedded.stores.rollouts
    assert rollouts is not None
    last = rollouts.get(SCOPE, handled.rollout_id).events[-1].event_id
    assert_accounted_for(
        embedded.stores, SCOPE, [e.event_id for e in events] + [last], [handled.rollout_id]
    )
    assert_remembered(live_records(embedded.stores), handled.rollout_id)


@pytest.mark.fault("extraction", "timeout", "sqlite")
def test_embedded_a_model_timeout_is_retried_once_after_five_seconds(
    embedded: EmbeddedExtraction, model: SwitchableModel, clock: FixedClock
) -> None:
    model.inner = TimesOut(model.inner, failures=1)
    acknowledged, claim = _converse(embedded.pipeline, clock)

    assert embedded.worker.run_once() == []
    clock.advance(timedelta(seconds=5))
    handled = embedded.worker.run_once()

    assert [h.status for h in handled] == ["consumed"]
    assert_accounted_for(embedded.stores, SCOPE, acknowledged, [claim.rollout_id])


@pytest.mark.fault("extraction", "raised", "sqlite")
def test_embedded_invalid_model_output_fails_the_rollout(
    embedded: EmbeddedExtraction, model: SwitchableModel, clock: FixedClock
) -> None:
    model.inner = AnswersGarbage()
    acknowledged, claim = _converse(embedded.pipeline, clock)

    (handled,) = embedded.worker.run_once()

    assert handled.status == "failed"
    assert_accounted_for(embedded.stores, SCOPE, acknowledged, [claim.rollout_id])
    assert live_records(embedded.stores) == []
