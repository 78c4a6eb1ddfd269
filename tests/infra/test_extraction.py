"""The extraction and sweep functions: wired to their queue and schedule, and allowed exactly
what they do (a wrong grant shows up here before it shows up as AccessDenied in production)."""

from __future__ import annotations

import json
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


def _via_dynamodb(statement: dict[str, Any]) -> bool:
    """A statement usable only through DynamoDB (the tables' key, kms:ViaService)."""
    via = statement.get("Condition", {}).get("StringEquals", {}).get("kms:ViaService")
    return via is not None and "dynamodb." in json.dumps(via)


def _table_key_actions(statements: list[dict[str, Any]]) -> set[str]:
    return _actions([s for s in statements if _via_dynamodb(s)])


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
    assert function["Properties"]["Handler"].endswith("lambda_handler")
    environment = function["Properties"]["Environment"]["Variables"]
    assert {"CAIRN_ITEMS_TABLE", "CAIRN_ROLLOUT_BUCKET", "CAIRN_EXTRACTION_MODEL_ID"} <= set(
        environment
    )
    assert "ScalingConfig" not in mapping  # -c maxConcurrency unset: see the variant


def test_extraction_is_sized_from_the_worst_case_of_a_notice(default: dict[str, Any]) -> None:
    _, function = _function(default, "ExtractionExtract")
    queue = default["Resources"][_logical_id(default, "AWS::SQS::Queue", "FanoutExtractionQueue")]
    timeout = function["Properties"]["Timeout"]
    budget_ms = int(function["Properties"]["Environment"]["Variables"]["CAIRN_RECORD_BUDGET_MS"])

    # 3 strategies x 2 model calls x 45 s, plus 30 s for the stores: one notice's worst case.
    assert budget_ms == (3 * 2 * 45 + 30) * 1000
    # The first notice of a batch is always taken: the timeout holds the worst case twice.
    assert timeout * 1000 >= 2 * budget_ms
    assert timeout <= 900
    assert queue["Properties"]["VisibilityTimeout"] == 6 * timeout


def test_the_model_timeout_the_budget_assumes_is_the_functions_own() -> None:
    from functions._common import wiring
    from infra.components.extraction import MODEL_TIMEOUT

    assert MODEL_TIMEOUT.to_seconds() == wiring._MODEL_TIMEOUT_SECONDS


def test_max_concurrency_caps_both_event_source_mappings(synthesized: Synthesized) -> None:
    variant = synthesized.template(VARIANT_STACK)
    mappings = [
        r["Properties"]
        for r in variant["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]

    assert len(mappings) == 2
    for mapping in mappings:
        assert mapping["ScalingConfig"] == {"MaximumConcurrency": VARIANT["max_concurrency"]}


def _sweep_rules(template: dict[str, Any]) -> list[dict[str, Any]]:
    """The EventBridge rules in the extraction component (the jobs have their own)."""
    return [
        r["Properties"]
        for lid, r in template["Resources"].items()
        if r["Type"] == "AWS::Events::Rule" and lid.startswith("Extraction")
    ]


def test_the_only_standing_schedule_is_the_hourly_safety_sweep(default: dict[str, Any]) -> None:
    sweep, _ = _function(default, "ExtractionSweep")
    (rule,) = _sweep_rules(default)

    assert rule["ScheduleExpression"] == "rate(1 hour)"
    assert rule["Targets"][0]["Arn"] == {"Fn::GetAtt": [sweep, "Arn"]}
    # Wake-ups are one-time schedules the functions arm at run time, never the template's.
    assert not [r for r in default["Resources"].values() if r["Type"] == "AWS::Scheduler::Schedule"]


def test_a_failing_sweep_is_retried_by_eventbridge_and_kept_in_its_failure_queue(
    default: dict[str, Any],
) -> None:
    sweep, function = _function(default, "ExtractionSweep")
    failures = _logical_id(default, "AWS::SQS::Queue", "ExtractionSweepFailures")
    (rule,) = _sweep_rules(default)
    (invoke_config,) = (
        r["Properties"]
        for r in default["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventInvokeConfig"
        and r["Properties"]["FunctionName"] == {"Ref": sweep}
    )

    (target,) = rule["Targets"]
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 2, "MaximumEventAgeInSeconds": 300}
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": [failures, "Arn"]}}
    assert invoke_config["FunctionName"] == {"Ref": sweep}
    assert invoke_config["MaximumRetryAttempts"] == 0
    assert invoke_config["DestinationConfig"] == {
        "OnFailure": {"Destination": {"Fn::GetAtt": [failures, "Arn"]}}
    }
    # Untraced and small: most runs find little or nothing to do.
    assert "TracingConfig" not in function["Properties"]
    assert function["Properties"]["MemorySize"] == 256


def test_extraction_may_read_and_delete_payloads_and_call_its_model_but_never_publish(
    default: dict[str, Any],
) -> None:
    statements = _statements(default, "ExtractionExtract")
    actions = _actions(statements)
    outside_dynamodb = _actions([s for s in statements if not _via_dynamodb(s)])

    assert {"s3:GetObject", "s3:DeleteObject", "bedrock:InvokeModel", "kms:Decrypt"} <= actions
    assert {"dynamodb:PutItem", "dynamodb:Query", "dynamodb:BatchGetItem"} <= actions
    assert not outside_dynamodb & {
        "s3:PutObject",
        "sns:Publish",
        "dynamodb:Scan",
        "kms:GenerateDataKey",
    }
    assert not any(action.endswith("*") for action in actions)


@pytest.mark.parametrize(
    "function", ["ExtractionExtract", "ExtractionSweep", "ConsolidationConsolidate", "ApiFunction"]
)
def test_every_table_writer_may_use_the_table_key_through_dynamodb(
    default: dict[str, Any], function: str
) -> None:
    # DynamoDB encrypts a written item under the table's key on the caller's behalf.
    assert {"kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"} <= (
        _table_key_actions(_statements(default, function))
    )


def test_the_sweep_may_stage_and_publish_but_never_delete_or_call_a_model(
    default: dict[str, Any],
) -> None:
    statements = _statements(default, "ExtractionSweep")
    actions = _actions(statements)
    topic = _logical_id(default, "AWS::SNS::Topic", "FanoutTopic")

    assert {
        "s3:PutObject",
        "s3:ListBucket",
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
