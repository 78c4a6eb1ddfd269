"""The extraction and sweep functions: wired to their queue and schedule, and allowed exactly
what they do (a wrong grant shows up here before it shows up as AccessDenied in production)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.conftest import DEFAULT_STACK, VARIANT, VARIANT_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]


@pytest.fixture(scope="module")
def default(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(DEFAULT_STACK)


def _function(template: dict[str, Any], prefix: str) -> tuple[str, dict[str, Any]]:
    (found,) = (
        (lid, r)
        for lid, r in template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and lid.startswith(prefix)
    )
    return found


def _statements(template: dict[str, Any], function_prefix: str) -> list[dict[str, Any]]:
    """Every policy statement attached to the function's role."""
    _, function = _function(template, function_prefix)
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    return [
        statement
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and {"Ref": role} in r["Properties"]["Roles"]
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
    ]


def _actions(statements: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for statement in statements:
        actions = statement["Action"]
        found |= {actions} if isinstance(actions, str) else set(actions)
    return found


def _logical_id(template: dict[str, Any], kind: str, prefix: str) -> str:
    (found,) = (
        lid
        for lid, r in template["Resources"].items()
        if r["Type"] == kind and lid.startswith(prefix)
    )
    return found


def test_extraction_consumes_the_extraction_queue_reporting_partial_failures(
    default: dict[str, Any],
) -> None:
    extraction, function = _function(default, "ExtractionExtract")
    queue = _logical_id(default, "AWS::SQS::Queue", "FanoutExtractionQueue")
    (mapping,) = (
        r["Properties"]
        for r in default["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
        and r["Properties"]["FunctionName"] == {"Ref": extraction}
    )

    assert mapping["FunctionName"] == {"Ref": extraction}
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [queue, "Arn"]}
    assert mapping["BatchSize"] == 10
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert function["Properties"]["Timeout"] == 60
    assert function["Properties"]["Handler"].endswith("lambda_handler")
    environment = function["Properties"]["Environment"]["Variables"]
    assert {"CAIRN_ITEMS_TABLE", "CAIRN_ROLLOUT_BUCKET", "CAIRN_EXTRACTION_MODEL_ID"} <= set(
        environment
    )


def test_the_sweep_runs_every_minute(default: dict[str, Any]) -> None:
    sweep, _ = _function(default, "ExtractionSweep")
    (rule,) = (
        r["Properties"] for r in default["Resources"].values() if r["Type"] == "AWS::Events::Rule"
    )

    assert rule["ScheduleExpression"] == "rate(1 minute)"
    assert rule["Targets"][0]["Arn"] == {"Fn::GetAtt": [sweep, "Arn"]}


def test_extraction_may_read_and_delete_payloads_and_call_its_model_but_never_publish(
    default: dict[str, Any],
) -> None:
    actions = _actions(_statements(default, "ExtractionExtract"))

    assert {"s3:GetObject", "s3:DeleteObject", "bedrock:InvokeModel", "kms:Decrypt"} <= actions
    assert {"dynamodb:PutItem", "dynamodb:Query", "dynamodb:BatchGetItem"} <= actions
    assert not actions & {"s3:PutObject", "sns:Publish", "dynamodb:Scan", "kms:GenerateDataKey"}
    assert not any(action.endswith("*") for action in actions)


def test_the_sweep_may_stage_and_publish_but_never_delete_or_call_a_model(
    default: dict[str, Any],
) -> None:
    statements = _statements(default, "ExtractionSweep")
    actions = _actions(statements)
    topic = _logical_id(default, "AWS::SNS::Topic", "FanoutTopic")

    assert {
        "s3:PutObject",
        "sns:Publish",
        "kms:GenerateDataKey",
        "dynamodb:BatchGetItem",
    } <= actions
    assert not actions & {"s3:DeleteObject", "bedrock:InvokeModel", "dynamodb:DeleteItem"}
    assert not any(action.endswith("*") for action in actions)
    (publish,) = (s for s in statements if s["Action"] == "sns:Publish")
    assert publish["Resource"] == {"Ref": topic}


def test_a_cross_region_profile_is_invocable_and_only_that_model(
    synthesized: Synthesized,
) -> None:
    statements = _statements(synthesized.template(VARIANT_STACK), "ExtractionExtract")
    (invoke,) = (s for s in statements if s["Action"] == "bedrock:InvokeModel")
    resources = [str(r) for r in invoke["Resource"]]
    base = VARIANT["extraction_model_id"].split(".", 1)[1]

    assert any("inference-profile/" + VARIANT["extraction_model_id"] in r for r in resources)
    assert any("bedrock:*::foundation-model/" + base in r for r in resources)
    assert len(resources) == 2  # onnx embeddings: no embedding model to call
