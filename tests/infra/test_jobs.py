"""The scheduled jobs function: on its schedule, its failures kept, allowed exactly what the
jobs do (items table, the events table's turns and chunks, the extraction model) and nothing
more."""

from __future__ import annotations

from typing import Any

import pytest

from infra.components.jobs import JOBS_EVERY
from tests.infra.conftest import DEFAULT_STACK, Synthesized
from tests.infra.test_extraction import (
    _actions,
    _function,
    _logical_id,
    _statements,
    _via_dynamodb,
)

pytestmark = [pytest.mark.infra, pytest.mark.slow]


@pytest.fixture(scope="module")
def default(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(DEFAULT_STACK)


def test_the_jobs_run_on_their_schedule_and_a_failure_is_kept(default: dict[str, Any]) -> None:
    jobs, function = _function(default, "JobsRun")
    failures = _logical_id(default, "AWS::SQS::Queue", "JobsJobFailures")
    (rule,) = (
        r["Properties"]
        for lid, r in default["Resources"].items()
        if r["Type"] == "AWS::Events::Rule" and lid.startswith("Jobs")
    )
    (invoke_config,) = (
        r["Properties"]
        for r in default["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventInvokeConfig"
        and r["Properties"]["FunctionName"] == {"Ref": jobs}
    )

    assert rule["ScheduleExpression"] == f"rate({int(JOBS_EVERY.to_minutes())} minutes)"
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [jobs, "Arn"]}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 0
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": [failures, "Arn"]}}
    assert invoke_config["MaximumRetryAttempts"] == 0
    assert "jobs" in function["Properties"]["Description"]


def test_the_jobs_touch_only_the_two_tables_and_the_model(default: dict[str, Any]) -> None:
    statements = _statements(default, "JobsRun")
    actions = _actions(statements)

    assert {
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:ConditionCheckItem",
        "bedrock:InvokeModel",
    } <= actions
    for never in (
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
        "s3:GetObject",
        "s3:PutObject",
        "sns:Publish",
    ):
        assert never not in actions, never
    # The key is used only through DynamoDB (the tables'), never for payloads or the topic.
    assert not [s for s in statements if _all(s)[0].startswith("kms:") and not _via_dynamodb(s)]
    dynamodb = [s for s in statements if any(a.startswith("dynamodb:") for a in _all(s))]
    items = _logical_id(default, "AWS::DynamoDB::Table", "TablesItems")
    events = _logical_id(default, "AWS::DynamoDB::Table", "TablesEvents")
    granted: dict[str, set[str]] = {items: set(), events: set()}
    for statement in dynamodb:
        resources = statement["Resource"]
        for resource in resources if isinstance(resources, list) else [resources]:
            # Each table itself, never one of its indexes.
            assert resource in ({"Fn::GetAtt": [items, "Arn"]}, {"Fn::GetAtt": [events, "Arn"]})
            granted[resource["Fn::GetAtt"][0]] |= set(_all(statement))
    # The rollup: the events table's actors, sessions, turns and chunks read, a chunk written
    # in one transaction (Put, level cursor and generation Updates, child ConditionChecks).
    assert granted[events] == {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:ConditionCheckItem",
    }


def _all(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)
