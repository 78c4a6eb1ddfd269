"""Waking the sweep with EventBridge Scheduler: the AWS ``SweepTimer``, client injected.

``arm(at)`` creates a one-time schedule, ``at(<minute>)`` in UTC, in the stack's schedule
group, named after its minute (``sweep-20261201T1306``), that invokes the sweep function once
and is deleted by the Scheduler after it ran (``ActionAfterCompletion: DELETE``). ``at`` is
rounded up to its minute, and a minute already past becomes the next one: every wake-up is in
the future, and every due entry of that minute shares one schedule. Arming a minute already
armed is a ``ConflictException``, taken as success (that schedule will run the sweep), so
concurrent appends and sweeps never arm a minute twice.

A failed invocation is retried by the Scheduler (``RETRIES`` within ``EVENT_AGE``), then the
event goes to the dead-letter queue the sweep's failures go to (an alarm watches it when the
stack has an alarm address); a wake-up lost altogether (never armed, or failed for good) is
covered by the stack's hourly safety sweep (``infra.components.extraction``).

The caller's role needs ``scheduler:CreateSchedule`` on the group's schedules and
``iam:PassRole`` on ``role_arn`` (the role the Scheduler assumes to invoke the sweep and send
to the dead-letter queue). ``botocore`` errors are translated here, by code, always chained.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    NoCredentialsError,
    ReadTimeoutError,
)

from cairn.errors import CairnError, ConfigurationError, StoreTimeoutError, StoreUnavailableError
from cairn.ports import Clock

NAME_PREFIX = "sweep-"
RETRIES = 2
EVENT_AGE = timedelta(minutes=5)
# What the sweep receives; it reads nothing from it (functions/sweep/handler.py).
WAKE_UP_INPUT = json.dumps({"source": "cairn.sweep-timer"})
_MINUTE = timedelta(minutes=1)
_RETRYABLE_CODES = frozenset(
    {"ThrottlingException", "InternalServerException", "ServiceQuotaExceededException"}
)


class SchedulerClient(Protocol):
    def create_schedule(self, **kwargs: Any) -> dict[str, Any]: ...


def wake_minute(at: datetime, now: datetime) -> datetime:
    """The minute a wake-up for ``at`` runs at: ``at`` rounded up to its minute, and never
    earlier than the minute after ``now``'s."""
    floor = at.astimezone(UTC).replace(second=0, microsecond=0)
    rounded = floor if floor == at else floor + _MINUTE
    earliest = now.astimezone(UTC).replace(second=0, microsecond=0) + _MINUTE
    return max(rounded, earliest)


def schedule_name(minute: datetime) -> str:
    """The one schedule of ``minute`` (64 characters at most, ``[0-9a-zA-Z-_.]``)."""
    return f"{NAME_PREFIX}{minute:%Y%m%dT%H%M}"


class SchedulerSweepTimer:
    """Arms one-time schedules in ``group`` that invoke ``target_arn`` as ``role_arn``."""

    def __init__(
        self,
        client: SchedulerClient,
        *,
        group: str,
        target_arn: str,
        role_arn: str,
        dead_letter_arn: str,
        clock: Clock,
    ) -> None:
        self._client = client
        self._clock = clock
        self.group = group
        self._target = {
            "Arn": target_arn,
            "RoleArn": role_arn,
            "Input": WAKE_UP_INPUT,
            "RetryPolicy": {
                "MaximumRetryAttempts": RETRIES,
                "MaximumEventAgeInSeconds": int(EVENT_AGE.total_seconds()),
            },
            "DeadLetterConfig": {"Arn": dead_letter_arn},
        }

    def arm(self, at: datetime) -> None:
        """A sweep at ``at``'s minute (``wake_minute``); a retryable ``CairnError`` if the
        Scheduler did not take it."""
        minute = wake_minute(at, self._clock.now())
        name = schedule_name(minute)
        try:
            self._client.create_schedule(
                Name=name,
                GroupName=self.group,
                ScheduleExpression=f"at({minute:%Y-%m-%dT%H:%M:%S})",
                ScheduleExpressionTimezone="UTC",
                FlexibleTimeWindow={"Mode": "OFF"},
                ActionAfterCompletion="DELETE",
                Target=self._target,
            )
        except ClientError as exc:
            if _code(exc) == "ConflictException":
                return  # that minute is armed already: its schedule runs the sweep
            raise _translate(exc, self.group) from exc
        except (ConnectTimeoutError, ReadTimeoutError) as exc:
            raise StoreTimeoutError("EventBridge Scheduler did not answer in time") from exc
        except NoCredentialsError as exc:
            raise ConfigurationError(
                "no AWS credentials were found for EventBridge Scheduler"
            ) from exc
        except BotoCoreError as exc:
            raise StoreUnavailableError(
                f"EventBridge Scheduler is unreachable ({type(exc).__name__})"
            ) from exc


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _translate(exc: ClientError, group: str) -> CairnError:
    code = _code(exc)
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
    if code in _RETRYABLE_CODES or status >= 500:
        return StoreUnavailableError(f"EventBridge Scheduler is busy or failing (code {code})")
    return ConfigurationError(
        f"EventBridge Scheduler refused the sweep's wake-up in group {group!r} (code {code}); "
        "check that the group exists and the caller may create schedules in it and pass "
        "the sweep's scheduler role"
    )
