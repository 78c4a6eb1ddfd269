"""The AWS sweep timer (``cairn.aws.sweep_timer``): one-time schedules named by their minute,
in the future, armed once per minute however many callers arm it, and errors translated; a
timer that cannot be armed fails neither the append nor the sweep that arms it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from cairn.aws.sweep_timer import SchedulerSweepTimer, schedule_name, wake_minute
from cairn.clock import FixedClock
from cairn.errors import ConfigurationError, StoreUnavailableError
from cairn.extract.staging import RolloutPipeline
from cairn.extract.sweep import sweep
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.rollout.index import TriggerPolicy
from cairn.rollout.payload import RolloutNotice
from cairn.store.memory import InMemoryBackend

NOW = datetime(2026, 12, 1, 13, 5, 20, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="a1")
TARGET = "arn:aws:lambda:us-east-1:123456789012:function:cairn-sweep"
ROLE = "arn:aws:iam::123456789012:role/cairn-sweep-scheduler"
FAILURES = "arn:aws:sqs:us-east-1:123456789012:cairn-sweep-failures"


def _timer(client: Any, clock: FixedClock) -> SchedulerSweepTimer:
    return SchedulerSweepTimer(
        client,
        group="cairn-sweep",
        target_arn=TARGET,
        role_arn=ROLE,
        dead_letter_arn=FAILURES,
        clock=clock,
    )


def test_a_wake_up_runs_at_its_minute_rounded_up_and_never_in_the_past() -> None:
    on_the_minute = NOW.replace(second=0) + timedelta(minutes=10)
    assert wake_minute(on_the_minute, NOW) == on_the_minute
    assert wake_minute(on_the_minute + timedelta(seconds=1), NOW) == on_the_minute + timedelta(
        minutes=1
    )
    assert wake_minute(NOW - timedelta(hours=2), NOW) == datetime(2026, 12, 1, 13, 6, tzinfo=UTC)
    assert wake_minute(NOW, NOW) == datetime(2026, 12, 1, 13, 6, tzinfo=UTC)
    assert schedule_name(datetime(2026, 12, 1, 13, 6, tzinfo=UTC)) == "sweep-20261201T1306"


def test_arming_a_minute_twice_leaves_one_schedule_that_deletes_itself() -> None:
    clock = FixedClock(NOW)
    with mock_aws():
        client = boto3.client("scheduler", region_name="us-east-1")
        client.create_schedule_group(Name="cairn-sweep")
        timer = _timer(client, clock)

        timer.arm(NOW + timedelta(minutes=9, seconds=5))
        timer.arm(NOW + timedelta(minutes=9, seconds=30))  # the same minute: already armed
        timer.arm(NOW + timedelta(minutes=30))

        names = sorted(
            s["Name"] for s in client.list_schedules(GroupName="cairn-sweep")["Schedules"]
        )
        assert names == ["sweep-20261201T1315", "sweep-20261201T1336"]
        armed = client.get_schedule(GroupName="cairn-sweep", Name="sweep-20261201T1315")
    assert armed["ScheduleExpression"] == "at(2026-12-01T13:15:00)"
    assert armed["ScheduleExpressionTimezone"] == "UTC"
    assert armed["ActionAfterCompletion"] == "DELETE"
    assert armed["Target"]["Arn"] == TARGET
    assert armed["Target"]["RoleArn"] == ROLE
    assert armed["Target"]["DeadLetterConfig"] == {"Arn": FAILURES}
    assert armed["Target"]["RetryPolicy"] == {
        "MaximumRetryAttempts": 2,
        "MaximumEventAgeInSeconds": 300,
    }


def _stubbed(code: str, status: int) -> tuple[Any, Stubber]:
    client = boto3.client(
        "scheduler",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - a stubbed client's fake credentials
    )
    stubber = Stubber(client)
    stubber.add_client_error("create_schedule", service_error_code=code, http_status_code=status)
    return client, stubber


def test_a_throttled_scheduler_is_retryable_and_a_refusal_names_the_fix() -> None:
    client, stubber = _stubbed("ThrottlingException", 400)
    with stubber, pytest.raises(StoreUnavailableError) as busy:
        _timer(client, FixedClock(NOW)).arm(NOW)
    assert busy.value.retryable

    client, stubber = _stubbed("AccessDeniedException", 403)
    with stubber, pytest.raises(ConfigurationError, match="pass the sweep's scheduler role"):
        _timer(client, FixedClock(NOW)).arm(NOW)


class _Announced:
    def __init__(self) -> None:
        self.notices: list[RolloutNotice] = []

    def announce(self, notice: RolloutNotice) -> None:
        self.notices.append(notice)


def test_an_unarmable_timer_fails_neither_the_append_nor_the_sweep(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FixedClock(NOW)
    client, stubber = _stubbed("ThrottlingException", 400)
    stubber.add_client_error("create_schedule", service_error_code="ThrottlingException")
    rollouts = InMemoryBackend(clock=clock).stores().rollouts
    assert rollouts is not None
    pipeline = RolloutPipeline(
        rollouts=rollouts,
        staging=FilesystemStagingStore(tmp_path),
        notifier=_Announced(),
        clock=clock,
        timer=_timer(client, clock),
    )
    turn = EventInput(
        session_id="s1",
        event_timestamp=NOW,
        payload=(Conversational(role=Role.USER, text="I take my coffee black."),),
    )
    policy = TriggerPolicy(strategy_ids=("facts",), idle_timeout_seconds=60)

    with stubber:
        appended = pipeline.append(SCOPE, turn, policy)
        clock.advance(timedelta(seconds=60))
        report = sweep(pipeline)

    assert appended.idle_due_at == appended.event.created_at + timedelta(seconds=60)
    assert rollouts.counters(SCOPE, "s1") is not None
    assert "sweep not armed" in caplog.text
    assert (report.idle_claimed, report.released, report.armed, report.errors) == (1, 1, 0, 1)
