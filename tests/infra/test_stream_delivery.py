"""Record streaming in the template (``-c recordStreamArn=...``): the items table keeps a
keys-only stream, the delivery function is triggered by its change items only, retries a
failing batch split in halves and then sends it to its dead-letter queue, and may put to the
one Kinesis stream named and to nothing else; a stack without the setting has none of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import DEFAULTS_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]

STREAM = "arn:aws:kinesis:us-east-1:123456789012:stream/memory-records"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("aws_cdk", reason="the CDK tests need aws-cdk-lib (dev extra)")
    from infra.check import synthesize

    outdir: Path = tmp_path_factory.mktemp("streaming")
    path, nag = synthesize(
        "streaming",
        {"recordStreamArn": STREAM, "encryption": "customer-key", "alarmEmail": "ops@example.com"},
        outdir,
    )
    assert nag is None, nag  # cdk-nag clean
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def _of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in template["Resources"].items() if r["Type"] == kind}


def _delivery_function(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (found,) = [
        (lid, r)
        for lid, r in _of_type(template, "AWS::Lambda::Function").items()
        if lid.startswith("StreamingDeliver")
    ]
    return found


def test_the_items_table_streams_keys_only(template: dict[str, Any]) -> None:
    tables = _of_type(template, "AWS::DynamoDB::Table")
    streams = {lid: r["Properties"].get("StreamSpecification") for lid, r in tables.items()}
    (items,) = [lid for lid in tables if lid.startswith("TablesItems")]
    assert streams.pop(items) == {"StreamViewType": "KEYS_ONLY"}
    assert set(streams.values()) == {None}  # the events table keeps no stream


def test_only_change_items_trigger_delivery_and_failures_go_to_a_dead_letter_queue(
    template: dict[str, Any],
) -> None:
    lid, function = _delivery_function(template)
    (mapping,) = [
        m["Properties"]
        for m in _of_type(template, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": lid}
    ]
    (pattern,) = mapping["FilterCriteria"]["Filters"]
    assert json.loads(pattern["Pattern"]) == {
        "dynamodb": {"Keys": {"sk": {"S": [{"prefix": "CH#"}]}}}
    }
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["MaximumRetryAttempts"] == 5
    destination = mapping["DestinationConfig"]["OnFailure"]["Destination"]
    (queue,) = destination["Fn::GetAtt"][:1]
    assert queue.startswith("StreamingDeliveryFailures")
    assert function["Properties"]["Environment"]["Variables"]["CAIRN_RECORD_STREAM_ARN"] == STREAM


def test_the_delivery_function_may_put_to_the_named_stream_only(
    template: dict[str, Any],
) -> None:
    _, function = _delivery_function(template)
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    statements = [
        s
        for p in _of_type(template, "AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    kinesis = [s for s in statements if "kinesis" in json.dumps(s["Action"])]
    assert kinesis == [{"Action": "kinesis:PutRecords", "Effect": "Allow", "Resource": STREAM}]
    actions = {
        a
        for s in statements
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    table_writes = {"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    assert not actions & table_writes  # it writes no record: only its cursors (UpdateItem)
    assert not any(a.startswith(("s3:", "sns:", "bedrock:")) for a in actions)


def _api_stream(template: dict[str, Any]) -> str:
    (api,) = [
        r
        for lid, r in _of_type(template, "AWS::Lambda::Function").items()
        if lid.startswith("ApiFunction")
    ]
    return str(api["Properties"]["Environment"]["Variables"]["CAIRN_RECORD_STREAM_ARN"])


def test_the_api_is_told_which_stream_memories_may_name(
    template: dict[str, Any], synthesized: Synthesized
) -> None:
    assert _api_stream(template) == STREAM
    assert _api_stream(synthesized.template(DEFAULTS_STACK)) == ""  # refuses every stream


def test_undelivered_changes_and_a_failing_delivery_function_raise_alarms(
    template: dict[str, Any],
) -> None:
    alarms = {
        r["Properties"]["AlarmName"]["Fn::Join"][1][-1]
        if isinstance(r["Properties"].get("AlarmName"), dict)
        else lid
        for lid, r in _of_type(template, "AWS::CloudWatch::Alarm").items()
    }
    named = " ".join(str(a) for a in alarms)
    assert "StreamDeliveryFailures" in named
    assert "StreamDeliveryErrors" in named


def test_a_stack_without_record_streaming_has_no_stream_and_no_delivery(
    synthesized: Synthesized,
) -> None:
    defaults = synthesized.template(DEFAULTS_STACK)
    tables = _of_type(defaults, "AWS::DynamoDB::Table").values()
    assert all("StreamSpecification" not in t["Properties"] for t in tables)
    assert not [lid for lid in defaults["Resources"] if lid.startswith("Streaming")]
