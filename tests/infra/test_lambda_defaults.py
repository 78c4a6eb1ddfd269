"""Every function built through ``LambdaDefaults`` runs the way the design fixes, proven on a
test-only probe stack (the real stack has no functions yet)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import PROBE_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def probe(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(PROBE_STACK)


def of_type(template: dict[str, Any], kind: str) -> dict[str, Any]:
    (properties,) = (r["Properties"] for r in template["Resources"].values() if r["Type"] == kind)
    return dict(properties)


def test_functions_run_python_3_12_or_later_on_arm64(probe: dict[str, Any]) -> None:
    function = of_type(probe, "AWS::Lambda::Function")

    major, minor = (int(n) for n in function["Runtime"].removeprefix("python").split("."))

    assert (major, minor) >= (3, 12)
    assert function["Architectures"] == ["arm64"]


def test_functions_log_json_to_their_own_log_group_and_trace_actively(
    probe: dict[str, Any],
) -> None:
    function = of_type(probe, "AWS::Lambda::Function")
    (log_group_id,) = (
        lid for lid, r in probe["Resources"].items() if r["Type"] == "AWS::Logs::LogGroup"
    )

    assert function["LoggingConfig"] == {"LogFormat": "JSON", "LogGroup": {"Ref": log_group_id}}
    assert function["TracingConfig"] == {"Mode": "Active"}


def test_log_retention_rounds_up_to_one_cloudwatch_offers(probe: dict[str, Any]) -> None:
    assert of_type(probe, "AWS::Logs::LogGroup")["RetentionInDays"] == 60  # 45 days asked


def test_functions_get_powertools_and_the_shared_environment(probe: dict[str, Any]) -> None:
    variables = of_type(probe, "AWS::Lambda::Function")["Environment"]["Variables"]

    assert variables["POWERTOOLS_SERVICE_NAME"] == "cairn"
    assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "cairn"
    assert variables["POWERTOOLS_LOGGER_LOG_EVENT"] == "false"
    assert variables["POWERTOOLS_LOG_LEVEL"] == "DEBUG"  # the shared environment wins
    assert variables["CAIRN_EMBEDDER"] == "onnx"
    assert variables["PROBE_ONLY"] == "1"  # and the function's own on top


def test_a_new_function_may_only_write_its_logs_and_traces(probe: dict[str, Any]) -> None:
    role = of_type(probe, "AWS::IAM::Role")
    statements = of_type(probe, "AWS::IAM::Policy")["PolicyDocument"]["Statement"]

    granted = {action for s in statements for action in s["Action"]}

    assert "ManagedPolicyArns" not in role
    assert granted == {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }


def test_the_makefile_builds_assets_for_the_runtime_the_functions_use() -> None:
    from infra.components.lambda_defaults import RUNTIME, RUNTIME_PYTHON_VERSION

    makefile = (REPO / "Makefile").read_text()
    built_for = re.search(r"^LAMBDA_PYTHON \?= (\S+)$", makefile, re.MULTILINE)

    assert built_for is not None
    assert built_for.group(1) == RUNTIME_PYTHON_VERSION
    assert RUNTIME.name == f"python{RUNTIME_PYTHON_VERSION}"
