"""The sweep's wake-ups on moto: an idle deployment invokes nothing; the first message of a
session arms a one-time schedule at its idle deadline, the sweep it wakes releases the session
and re-arms for the rollout's redelivery check, and the check that finds it consumed arms
nothing more. A wake-up lost (the appending process died before arming it) is bounded by the
hourly safety sweep, which releases what it would have woken for and re-arms.

EventBridge Scheduler in moto stores schedules and never runs them: ``_fire`` does what the
Scheduler does at the schedule's minute (invoke the sweep, then delete the schedule, as its
``ActionAfterCompletion: DELETE`` says), with the clock moved to that minute.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.errors import ConfigurationError
from cairn.extract.sweep import SAFETY_EVERY
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.rollout.index import REDELIVER_AFTER
from tests.pipeline.aws import SWEEP_FUNCTION_ARN, Deployment, LambdaContext, LambdaRuntime
from tests.pipeline.scenario import SCOPE, TURNS, live_records, turn

POLICY = policy_for(embedded_memory(SCOPE.memory_id))
SWEEP = LambdaContext(function_name="cairn-sweep", invoked_function_arn=SWEEP_FUNCTION_ARN)


def _armed(session: Any, deployment: Deployment) -> list[dict[str, Any]]:
    scheduler = session.client("scheduler")
    listed = scheduler.list_schedules(GroupName=deployment.schedule_group)["Schedules"]
    return [
        scheduler.get_schedule(GroupName=deployment.schedule_group, Name=s["Name"])
        for s in sorted(listed, key=lambda s: s["Name"])
    ]


def _minute(schedule: dict[str, Any]) -> datetime:
    expression = schedule["ScheduleExpression"]
    assert expression.startswith("at(")
    assert schedule["ScheduleExpressionTimezone"] == "UTC"
    return datetime.fromisoformat(expression[3:-1]).replace(tzinfo=UTC)


def _fire(
    schedule: dict[str, Any], session: Any, clock: FixedClock, sweep_lambda: Any
) -> dict[str, int]:
    clock.set(_minute(schedule))
    report: dict[str, int] = sweep_lambda(json.loads(schedule["Target"]["Input"]), SWEEP)
    session.client("scheduler").delete_schedule(
        GroupName=schedule["GroupName"], Name=schedule["Name"]
    )
    return report


def test_a_session_arms_one_wake_up_and_the_sweeps_it_starts_disarm_once_all_is_consumed(
    deployment: Deployment,
    session: Any,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    assert _armed(session, deployment) == []  # idle: nothing will invoke the sweep
    pipeline = wiring.pipeline()
    first = pipeline.append(SCOPE, turn(*TURNS[0], clock), POLICY)
    for role, text in TURNS[1:3]:
        clock.advance(timedelta(seconds=30))
        assert pipeline.append(SCOPE, turn(role, text, clock), POLICY).claim is None

    (armed,) = _armed(session, deployment)  # only the batch's first message armed
    assert first.idle_due_at is not None
    assert timedelta(0) <= _minute(armed) - first.idle_due_at < timedelta(minutes=1)
    assert armed["ActionAfterCompletion"] == "DELETE"
    assert armed["FlexibleTimeWindow"] == {"Mode": "OFF"}
    target = armed["Target"]
    assert target["Arn"] == SWEEP_FUNCTION_ARN
    assert target["RoleArn"] == deployment.scheduler_role_arn
    assert target["DeadLetterConfig"] == {"Arn": deployment.sweep_failures_arn}

    early = _fire(armed, session, clock, sweep_lambda)  # the deadline moved on: not idle yet
    assert (early["idle_claimed"], early["armed"]) == (0, 1)
    (again,) = _armed(session, deployment)
    released = _fire(again, session, clock, sweep_lambda)
    assert (released["idle_claimed"], released["released"], released["armed"]) == (1, 1, 1)

    (check,) = _armed(session, deployment)  # the released rollout's redelivery check
    assert _minute(check) - _minute(again) == REDELIVER_AFTER
    assert extraction_lambda.poll() == []
    assert "oat milk" in " ".join(r.content for r in live_records(wiring.stores()))

    done = _fire(check, session, clock, sweep_lambda)
    assert done == {
        "idle_claimed": 0,
        "released": 0,
        "reannounced": 0,
        "abandoned": 0,
        "errors": 0,
        "armed": 0,
    }
    assert _armed(session, deployment) == []  # disarmed: nothing is due, nothing will run


def test_a_lost_wake_up_leaves_the_session_to_the_hourly_safety_sweep(
    deployment: Deployment,
    session: Any,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    # The appending process dies between its commit and arming the wake-up: nothing is armed.
    crashed = replace(wiring.pipeline(), timer=None)
    for role, text in TURNS[:3]:
        crashed.append(SCOPE, turn(role, text, clock), POLICY)
    assert _armed(session, deployment) == []

    clock.advance(SAFETY_EVERY)  # the safety rule's next run, at the latest
    report = sweep_lambda({"source": "aws.events", "detail-type": "Scheduled Event"}, SWEEP)

    assert (report["idle_claimed"], report["released"], report["armed"]) == (1, 1, 1)
    assert extraction_lambda.poll() == []
    assert "oat milk" in " ".join(r.content for r in live_records(wiring.stores()))
    (check,) = _armed(session, deployment)  # and the redelivery check is armed again
    assert _minute(check) > clock.now()


def test_a_function_given_part_of_the_wake_ups_environment_names_what_it_lacks(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    from functions._common import wiring

    monkeypatch.delenv("CAIRN_SWEEP_SCHEDULER_ROLE_ARN")
    wiring.reset()
    with pytest.raises(ConfigurationError, match="CAIRN_SWEEP_SCHEDULER_ROLE_ARN"):
        wiring.pipeline()

    for name in ("CAIRN_SWEEP_SCHEDULE_GROUP", "CAIRN_SWEEP_FAILURES_ARN"):
        monkeypatch.delenv(name)
    wiring.reset()  # none of them: a stack from before wake-ups, swept by its own rule
    assert wiring.pipeline().timer is None
