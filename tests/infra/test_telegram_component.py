"""The optional Telegram backend (``-c telegram=true``): absent by default; when on, a webhook
behind a function URL, a generated secret and a private persona bucket, with least privilege
and no open cdk-nag finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import DEFAULT_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]

TELEGRAM_STACK = "CairnTelegram"
MODEL = "us.anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture(scope="module")
def telegram(synthesized: Synthesized, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The stack synthesized with the Telegram backend on, as ``cdk -c telegram=true`` would."""
    from aws_cdk import App, DefaultStackSynthesizer

    from infra.app import add_checks
    from infra.settings import StackSettings
    from infra.stack import CairnStack

    outdir = tmp_path_factory.mktemp("cdk.telegram")
    app = App(outdir=str(outdir))
    context = {
        "telegram": "true",
        "telegramModelId": MODEL,
        "telegramTimezone": "Europe/Lisbon",
        "encryption": "customer-key",
        "lambdaCode": "placeholder",
    }
    CairnStack(
        app,
        TELEGRAM_STACK,
        settings=StackSettings.from_context(context.get),
        synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
    )
    add_checks(app)
    app.synth()  # an unacknowledged cdk-nag finding would raise here
    report = json.loads((outdir / "validation-report.json").read_text())
    template: dict[str, Any] = json.loads(
        (Path(outdir) / f"{TELEGRAM_STACK}.template.json").read_text()
    )
    template["__nag__"] = report
    return template


def _of(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in template["Resources"].items() if r["Type"] == kind}


def _webhook(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (found,) = (
        (lid, r)
        for lid, r in _of(template, "AWS::Lambda::Function").items()
        if lid.startswith("TelegramWebhook")
    )
    return found


def _statements(template: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    return [
        statement
        for lid, policy in _of(template, "AWS::IAM::Policy").items()
        if lid.startswith(role_prefix)
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)


def test_the_default_stack_has_no_telegram_backend(synthesized: Synthesized) -> None:
    template = synthesized.template(DEFAULT_STACK)
    assert _of(template, "AWS::Lambda::Url") == {}
    assert _of(template, "AWS::SecretsManager::Secret") == {}
    assert not any(lid.startswith("Telegram") for lid in template["Resources"])


def test_the_webhook_is_a_function_url_told_where_everything_is(telegram: dict[str, Any]) -> None:
    (url,) = _of(telegram, "AWS::Lambda::Url").values()
    assert url["Properties"]["AuthType"] == "NONE"  # Telegram cannot sign: the secret header is
    webhook_id, webhook = _webhook(telegram)
    assert url["Properties"]["TargetFunctionArn"] == {"Fn::GetAtt": [webhook_id, "Arn"]}
    environment = webhook["Properties"]["Environment"]["Variables"]
    assert environment["CAIRN_TELEGRAM_MODEL_ID"] == MODEL
    assert environment["CAIRN_TELEGRAM_TIMEZONE"] == "Europe/Lisbon"
    assert environment["CAIRN_TELEGRAM_PERSONA_FILES"] == "SOUL.md,USER.md"
    for name in ("CAIRN_TELEGRAM_SECRET_ARN", "CAIRN_TELEGRAM_PERSONA_BUCKET", "CAIRN_ITEMS_TABLE"):
        assert environment[name]
    assert webhook["Properties"]["Architectures"] == ["arm64"]
    assert "TelegramWebhookUrl" in telegram["Outputs"]


def test_the_secret_generates_the_webhook_secret_under_the_stack_key(
    telegram: dict[str, Any],
) -> None:
    (secret,) = _of(telegram, "AWS::SecretsManager::Secret").values()
    generated = secret["Properties"]["GenerateSecretString"]
    assert generated["GenerateStringKey"] == "webhook_secret"
    assert generated["ExcludePunctuation"] is True
    assert "bot_token" in json.loads(generated["SecretStringTemplate"])
    assert "KmsKeyId" in secret["Properties"]


def test_the_persona_bucket_is_private_encrypted_versioned_and_kept(
    telegram: dict[str, Any],
) -> None:
    (bucket,) = (
        r
        for lid, r in _of(telegram, "AWS::S3::Bucket").items()
        if lid.startswith("TelegramPersona")
    )
    properties = bucket["Properties"]
    assert properties["VersioningConfiguration"] == {"Status": "Enabled"}
    assert properties["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    (rule,) = properties["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert bucket["DeletionPolicy"] == "RetainExceptOnCreate"
    assert bucket["UpdateReplacePolicy"] == "Retain"


def test_the_webhook_may_do_only_what_it_needs(telegram: dict[str, Any]) -> None:
    statements = _statements(telegram, "TelegramWebhookRole")
    actions = {action for s in statements for action in _actions(s)}
    assert all(s["Effect"] == "Allow" for s in statements)
    assert not any(action.endswith("*") for action in actions)
    for never in ("dynamodb:Scan", "dynamodb:DeleteTable", "s3:DeleteObject", "s3:PutBucketPolicy"):
        assert never not in actions
    secret_reads = [s for s in statements if "secretsmanager:GetSecretValue" in _actions(s)]
    assert len(secret_reads) == 1
    assert secret_reads[0]["Resource"]["Ref"].startswith("TelegramBotSecret")
    invoke = [s for s in statements if "bedrock:InvokeModel" in _actions(s)]
    resources = json.dumps(invoke)
    assert f"inference-profile/{MODEL}" in resources
    assert "amazon.nova-lite" not in resources  # only the models this function calls
    assert {"sns:Publish", "dynamodb:Query", "dynamodb:PutItem", "s3:GetObject"} <= actions


def test_the_webhook_may_embed_with_titan_v2_and_no_other_embedding_model(
    telegram: dict[str, Any],
) -> None:
    statements = _statements(telegram, "TelegramWebhookRole")
    invoke = json.dumps([s["Resource"] for s in statements if "bedrock:InvokeModel" in _actions(s)])
    assert "::foundation-model/amazon.titan-embed-text-v2:0" in invoke
    assert invoke.count("titan-embed") == 1


def test_no_cdk_nag_finding_is_left_open(telegram: dict[str, Any]) -> None:
    (report,) = (
        r for r in telegram["__nag__"]["pluginReports"] if r["pluginName"] == "AwsSolutions"
    )
    assert report["violations"] == []
    suppressed = [v for v in report["suppressedViolations"] if "Telegram" in json.dumps(v)]
    assert {v["ruleName"] for v in suppressed} >= {"AwsSolutions-SMG4", "AwsSolutions-S1"}
    assert all(len(v["reason"].strip()) >= 20 for v in suppressed)


def test_the_webhook_arms_the_sweeps_wake_ups_for_what_its_appends_leave_due(
    telegram: dict[str, Any],
) -> None:
    (group,) = _of(telegram, "AWS::Scheduler::ScheduleGroup")
    (sweep,) = (
        lid for lid in _of(telegram, "AWS::Lambda::Function") if lid.startswith("ExtractionSweep")
    )
    _, webhook = _webhook(telegram)
    statements = _statements(telegram, "TelegramWebhookRole")

    (create,) = [s for s in statements if "scheduler:CreateSchedule" in _actions(s)]
    assert {"Ref": group} in create["Resource"]["Fn::Join"][1]
    assert any("iam:PassRole" in _actions(s) for s in statements)
    env = webhook["Properties"]["Environment"]["Variables"]
    assert env["CAIRN_SWEEP_SCHEDULE_GROUP"] == {"Ref": group}
    assert env["CAIRN_SWEEP_FUNCTION_ARN"] == {"Fn::GetAtt": [sweep, "Arn"]}
