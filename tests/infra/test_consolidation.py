"""The consolidation function: on the consolidation queue one notice at a time, allowed exactly
what a pass does, and each queue subscribed to its own kind of rollout only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import DEFAULT_STACK, VARIANT_STACK, Synthesized
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


def test_consolidation_consumes_its_queue_one_notice_at_a_time(default: dict[str, Any]) -> None:
    consolidate, function = _function(default, "ConsolidationConsolidate")
    queue = _logical_id(default, "AWS::SQS::Queue", "FanoutConsolidationQueue")
    (mapping,) = (
        r["Properties"]
        for r in default["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
        and r["Properties"]["FunctionName"] == {"Ref": consolidate}
    )

    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [queue, "Arn"]}
    assert mapping["BatchSize"] == 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # Two 60 s passes and the 5 s between them fit, and the queue hides a notice six times
    # as long as the function may hold it.
    assert function["Properties"]["Timeout"] == 130
    visibility = default["Resources"][queue]["Properties"]["VisibilityTimeout"]
    assert visibility >= 6 * 130


def test_a_pass_may_commit_read_and_delete_payloads_and_call_its_model_and_nothing_else(
    default: dict[str, Any],
) -> None:
    statements = _statements(default, "ConsolidationConsolidate")
    actions = _actions(statements)
    outside_dynamodb = _actions([s for s in statements if not _via_dynamodb(s)])

    assert {
        "dynamodb:Query",
        "dynamodb:BatchGetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
        "s3:GetObject",
        "s3:DeleteObject",
        "kms:Decrypt",
        "bedrock:InvokeModel",
    } <= actions
    assert not outside_dynamodb & {
        "s3:PutObject",
        "sns:Publish",
        "kms:GenerateDataKey",
        "dynamodb:Scan",
        "dynamodb:BatchWriteItem",
    }
    assert not any(action.endswith("*") for action in actions)


def test_a_pass_never_touches_the_events_table(default: dict[str, Any]) -> None:
    events = _logical_id(default, "AWS::DynamoDB::Table", "TablesEvents")
    resources = json.dumps(
        [s["Resource"] for s in _statements(default, "ConsolidationConsolidate")]
    )

    assert events not in resources


def test_each_queue_takes_only_its_kind_of_rollout(default: dict[str, Any]) -> None:
    filters = {}
    for resource in default["Resources"].values():
        if resource["Type"] != "AWS::SNS::Subscription":
            continue
        endpoint = resource["Properties"]["Endpoint"]["Fn::GetAtt"][0]
        filters[endpoint] = resource["Properties"]["FilterPolicy"]
    extraction = _logical_id(default, "AWS::SQS::Queue", "FanoutExtractionQueue")
    consolidation = _logical_id(default, "AWS::SQS::Queue", "FanoutConsolidationQueue")

    assert filters == {
        extraction: {"kind": ["extraction"]},
        consolidation: {"kind": ["evidence"]},
    }


def test_the_consolidation_dead_letter_queue_has_an_alarm(synthesized: Synthesized) -> None:
    alarmed = synthesized.template(VARIANT_STACK)  # alarms exist with an alarm address
    dead_letters = _logical_id(alarmed, "AWS::SQS::Queue", "FanoutConsolidationDeadLetters")
    alarms = [
        r["Properties"]
        for r in alarmed["Resources"].values()
        if r["Type"] == "AWS::CloudWatch::Alarm"
    ]

    assert any(
        {"Name": "QueueName", "Value": {"Fn::GetAtt": [dead_letters, "QueueName"]}}
        in alarm.get("Dimensions", [])
        for alarm in alarms
    )
