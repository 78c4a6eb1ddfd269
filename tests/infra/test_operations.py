"""The stack as an operator runs it: it never deploys without code, every failure reaches the
alarm address, and the templates pass cfn-lint (issue 19)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import (
    DEFAULT_STACK,
    DEFAULTS_STACK,
    VARIANT_STACK,
    Synthesized,
)

pytestmark = [pytest.mark.infra, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
FUNCTIONS = ("api", "consolidation", "extraction", "jobs", "sweep")


def resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in template["Resources"].items() if r["Type"] == kind}


def fake_assets(root: Path, *, extras: list[str]) -> Path:
    """What ``make lambda-assets`` leaves behind, minus the dependencies."""
    for name in (*FUNCTIONS, "telegram"):
        handler = root / name / "functions" / name / "handler.py"
        handler.parent.mkdir(parents=True)
        handler.write_text("def lambda_handler(event, context):\n    return None\n")
    (root / "manifest.json").write_text(json.dumps({"extras": extras, "python": "3.12"}))
    return root


def synth(context: dict[str, str], outdir: Path) -> dict[str, Any]:
    from aws_cdk import App, DefaultStackSynthesizer

    from infra.app import build

    app = App(outdir=str(outdir), context={"stackName": "CairnBuilt", **context})
    build(app, synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False))
    template: dict[str, Any] = app.synth().get_stack_by_name("CairnBuilt").template
    return template


@pytest.fixture(scope="module")
def built(synthesized: Synthesized, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The default stack synthesized for deployment, from built assets."""
    root = fake_assets(tmp_path_factory.mktemp("lambda"), extras=["aws"])
    return synth({"lambdaAssets": str(root)}, tmp_path_factory.mktemp("cdk.built"))


def test_a_synth_for_deployment_ships_built_code_in_every_function(
    built: dict[str, Any],
) -> None:
    functions = resources(built, "AWS::Lambda::Function")

    assert len(functions) == len(FUNCTIONS)
    for function in functions.values():
        code = function["Properties"]["Code"]
        assert "ZipFile" not in code  # no inline placeholder
        assert {"S3Bucket", "S3Key"} <= set(code)
        handler = function["Properties"]["Handler"]
        module, _, name = handler.rpartition(".")
        assert name == "lambda_handler"
        source = REPO / (module.replace(".", "/") + ".py")
        assert source.is_file(), handler
        assert "def lambda_handler(" in source.read_text()
    assert "Rules" not in built


def test_a_synth_for_deployment_without_built_code_refuses_naming_the_fix(
    tmp_path: Path,
) -> None:
    from infra.components.lambda_code import LambdaAssetsError

    with pytest.raises(LambdaAssetsError, match="make deploy"):
        synth({"lambdaAssets": str(tmp_path / "nothing-built")}, tmp_path / "cdk.out")


def test_an_onnx_stack_refuses_assets_built_without_the_onnx_extra(tmp_path: Path) -> None:
    from infra.components.lambda_code import LambdaAssetsError

    root = fake_assets(tmp_path / "lambda", extras=["aws"])

    with pytest.raises(LambdaAssetsError, match="onnx"):
        synth({"lambdaAssets": str(root), "embedder": "onnx"}, tmp_path / "cdk.out")


def test_an_onnx_stack_takes_assets_built_with_the_onnx_extra(tmp_path: Path) -> None:
    root = fake_assets(tmp_path / "lambda", extras=["aws", "onnx"])

    template = synth({"lambdaAssets": str(root), "embedder": "onnx"}, tmp_path / "cdk.out")

    assert len(resources(template, "AWS::Lambda::Function")) == len(FUNCTIONS)


@pytest.mark.parametrize("stack", [DEFAULT_STACK, DEFAULTS_STACK, VARIANT_STACK])
def test_a_placeholder_template_is_refused_by_cloudformation_itself(
    synthesized: Synthesized, stack: str
) -> None:
    template = synthesized.template(stack)

    (assertion,) = template["Rules"]["RefusePlaceholderCode"]["Assertions"]
    # An account id is 12 digits: the assertion is false in every account.
    assert assertion["Assert"] == {
        "Fn::Equals": [{"Ref": "AWS::AccountId"}, "lambdaCode=placeholder"]
    }
    for function in resources(template, "AWS::Lambda::Function").values():
        assert "raise RuntimeError" in function["Properties"]["Code"]["ZipFile"]


def test_the_makefile_builds_the_embedders_extra_and_deploys_with_it() -> None:
    makefile = (REPO / "Makefile").read_text()

    assert "LAMBDA_EXTRAS ?= $(if $(filter onnx,$(EMBEDDER)),$(ONNX_EXTRAS),aws)" in makefile
    assert "ONNX_EXTRAS := aws,onnx" in makefile
    assert "deploy: deploy-prerequisites lambda-assets" in makefile
    assert "-c embedder=$(EMBEDDER)" in makefile
    # laid out (and compiled by the Lambda's Python) by infra/lambda_assets.py, whose
    # tests/infra/test_lambda_assets.py checks the folders, manifest and bytecode
    assert "$(PY) -m infra.lambda_assets" in makefile
    assert "--python-version $(LAMBDA_PYTHON)" in makefile


# --- alarms -------------------------------------------------------------------------------


def _alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        lid: r["Properties"] for lid, r in resources(template, "AWS::CloudWatch::Alarm").items()
    }


def test_the_alarm_topic_lets_cloudwatch_of_this_account_publish_over_tls_only(
    synthesized: Synthesized,
) -> None:
    variant = synthesized.template(VARIANT_STACK)
    (topic,) = (
        lid
        for lid, r in resources(variant, "AWS::SNS::Topic").items()
        if not r["Properties"].get("FifoTopic")
    )
    (policy,) = (
        r["Properties"]
        for r in resources(variant, "AWS::SNS::TopicPolicy").values()
        if r["Properties"]["Topics"] == [{"Ref": topic}]
    )
    statements = policy["PolicyDocument"]["Statement"]

    (publish,) = (s for s in statements if s["Effect"] == "Allow")
    assert publish["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert publish["Action"] == "sns:Publish"
    assert publish["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    assert ":alarm:*" in json.dumps(publish["Condition"]["ArnLike"]["aws:SourceArn"])
    (deny,) = (s for s in statements if s["Effect"] == "Deny")
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_every_failure_an_operator_must_see_has_an_alarm_with_its_meaning(
    synthesized: Synthesized,
) -> None:
    variant = synthesized.template(VARIANT_STACK)
    alarms = _alarms(variant)
    (alarm_topic,) = (
        lid
        for lid, r in resources(variant, "AWS::SNS::Topic").items()
        if not r["Properties"].get("FifoTopic")
    )
    by_metric: dict[str, int] = {}
    for alarm in alarms.values():
        by_metric[alarm["MetricName"]] = by_metric.get(alarm["MetricName"], 0) + 1
        assert alarm["AlarmActions"] == [{"Ref": alarm_topic}]
        assert len(alarm["AlarmDescription"]) > 40  # says what it means and what to do

    assert by_metric == {
        "Errors": 5,  # api, extraction, sweep, consolidation, jobs
        "Throttles": 5,
        "5xx": 1,
        "ApproximateAgeOfOldestMessage": 2,
        # two dead-letter queues, the sweep's failures, the jobs' failures
        "ApproximateNumberOfMessagesVisible": 4,
    }
    ages = [a for a in alarms.values() if a["MetricName"] == "ApproximateAgeOfOldestMessage"]
    queues = resources(variant, "AWS::SQS::Queue")
    for age in ages:
        (dimension,) = age["Dimensions"]
        queue = queues[dimension["Value"]["Fn::GetAtt"][0]]
        assert age["Threshold"] == queue["Properties"]["VisibilityTimeout"]


def test_the_sweep_failure_alarm_watches_its_failure_queue(synthesized: Synthesized) -> None:
    variant = synthesized.template(VARIANT_STACK)
    failures = next(lid for lid in resources(variant, "AWS::SQS::Queue") if "SweepFailures" in lid)

    watched = [
        a
        for a in _alarms(variant).values()
        if a.get("Dimensions", [{}])[0].get("Value") == {"Fn::GetAtt": [failures, "QueueName"]}
    ]

    assert len(watched) == 1


# --- cfn-lint -----------------------------------------------------------------------------


@pytest.mark.parametrize("stack", [DEFAULT_STACK, DEFAULTS_STACK, VARIANT_STACK])
def test_cfn_lint_finds_no_error_or_warning(synthesized: Synthesized, stack: str) -> None:
    pytest.importorskip("cfnlint", reason="cfn-lint is a dev dependency")
    from infra.check import lint

    findings = lint(synthesized.outdir / f"{stack}.template.json")

    assert [str(f) for f in findings] == []


def test_cfn_lint_would_catch_a_broken_template(synthesized: Synthesized, tmp_path: Path) -> None:
    pytest.importorskip("cfnlint", reason="cfn-lint is a dev dependency")
    from infra.check import lint

    template = synthesized.template(DEFAULT_STACK)
    broken = json.loads(json.dumps(template))
    function = next(iter(resources(broken, "AWS::Lambda::Function")))
    broken["Resources"][function]["Properties"]["Runtime"] = "python2.0"
    path = tmp_path / "broken.template.json"
    path.write_text(json.dumps(broken))

    assert any(f.rule.id.startswith("E") for f in lint(path))


def test_every_variant_make_check_runs_is_a_valid_stack_setting() -> None:
    from infra.check import VARIANTS
    from infra.settings import StackSettings

    parsed = [StackSettings.from_context(context.get) for context in VARIANTS.values()]

    assert {settings.encryption for settings in parsed} == {"aws-managed", "customer-key"}
    assert {settings.embedder for settings in parsed} == {"bedrock", "onnx"}
    assert any(settings.telegram and settings.alarm_email for settings in parsed)
    assert any(settings.max_concurrency and settings.metrics for settings in parsed)
    assert {settings.model_provider for settings in parsed} == {"bedrock", "openai", "heuristic"}


# --- cost at rest -------------------------------------------------------------------------


def test_custom_metrics_are_off_unless_asked_for(synthesized: Synthesized, tmp_path: Path) -> None:
    def metrics_disabled(template: dict[str, Any]) -> set[str]:
        return {
            f["Properties"]["Environment"]["Variables"]["POWERTOOLS_METRICS_DISABLED"]
            for f in resources(template, "AWS::Lambda::Function").values()
        }

    asked = synth({"lambdaCode": "placeholder", "metrics": "true"}, tmp_path / "cdk.out")

    assert metrics_disabled(synthesized.template(DEFAULTS_STACK)) == {"true"}
    assert metrics_disabled(asked) == {"false"}


def test_only_the_sweep_goes_untraced(synthesized: Synthesized) -> None:
    functions = resources(synthesized.template(DEFAULTS_STACK), "AWS::Lambda::Function")

    untraced = [lid for lid, f in functions.items() if "TracingConfig" not in f["Properties"]]

    assert len(untraced) == 1
    assert untraced[0].startswith("ExtractionSweep")
    assert all(
        f["Properties"]["TracingConfig"] == {"Mode": "Active"}
        for lid, f in functions.items()
        if lid not in untraced
    )
