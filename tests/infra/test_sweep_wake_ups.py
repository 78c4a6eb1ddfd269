"""The sweep's wake-ups in the template: a schedule group, a role only the Scheduler (of this
account) assumes and that may only invoke the sweep and send its failures, and the functions
that arm wake-ups (the API, the sweep; the Telegram webhook when deployed) allowed to create
``sweep-*`` schedules in that group only, told where the group, role and failures queue are."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.conftest import DEFAULT_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]


@pytest.fixture(scope="module")
def default(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(DEFAULT_STACK)


def _one(template: dict[str, Any], kind: str, prefix: str = "") -> tuple[str, dict[str, Any]]:
    (found,) = (
        (lid, r)
        for lid, r in template["Resources"].items()
        if r["Type"] == kind and lid.startswith(prefix)
    )
    return found


def _statements(template: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [
        statement
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and {"Ref": role} in r["Properties"]["Roles"]
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
    ]


def _function_role(template: dict[str, Any], prefix: str) -> tuple[dict[str, Any], str]:
    _, function = _one(template, "AWS::Lambda::Function", prefix)
    return function["Properties"], function["Properties"]["Role"]["Fn::GetAtt"][0]


def test_the_scheduler_role_is_the_schedulers_alone_and_may_only_run_the_sweep(
    default: dict[str, Any],
) -> None:
    role_id, role = _one(default, "AWS::IAM::Role", "ExtractionSweepScheduler")
    sweep, _ = _one(default, "AWS::Lambda::Function", "ExtractionSweep")
    failures, _ = _one(default, "AWS::SQS::Queue", "ExtractionSweepFailures")

    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    assert "ManagedPolicyArns" not in role["Properties"]
    granted = {(s["Action"], json_of(s["Resource"])) for s in _statements(default, role_id)}
    assert granted == {
        ("lambda:InvokeFunction", json_of({"Fn::GetAtt": [sweep, "Arn"]})),
        ("sqs:SendMessage", json_of({"Fn::GetAtt": [failures, "Arn"]})),
    }


def json_of(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("prefix", ["ApiFunction", "ExtractionSweep"])
def test_an_arming_function_may_create_sweep_schedules_in_the_group_and_pass_only_that_role(
    default: dict[str, Any], prefix: str
) -> None:
    group, _ = _one(default, "AWS::Scheduler::ScheduleGroup")
    scheduler_role, _ = _one(default, "AWS::IAM::Role", "ExtractionSweepScheduler")
    failures, _ = _one(default, "AWS::SQS::Queue", "ExtractionSweepFailures")
    sweep, _ = _one(default, "AWS::Lambda::Function", "ExtractionSweep")
    function, role = _function_role(default, prefix)
    statements = _statements(default, role)

    (create,) = [s for s in statements if s["Action"] == "scheduler:CreateSchedule"]
    resource = json_of(create["Resource"])
    assert json_of({"Ref": group}) in resource
    assert "/sweep-*" in resource
    (passing,) = [s for s in statements if s["Action"] == "iam:PassRole"]
    assert passing["Resource"] == {"Fn::GetAtt": [scheduler_role, "Arn"]}
    assert passing["Condition"] == {
        "StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}
    }
    env = function["Environment"]["Variables"]
    assert env["CAIRN_SWEEP_SCHEDULE_GROUP"] == {"Ref": group}
    assert env["CAIRN_SWEEP_SCHEDULER_ROLE_ARN"] == {"Fn::GetAtt": [scheduler_role, "Arn"]}
    assert env["CAIRN_SWEEP_FAILURES_ARN"] == {"Fn::GetAtt": [failures, "Arn"]}
    if prefix == "ApiFunction":  # the sweep re-arms itself, its own ARN from its context
        assert env["CAIRN_SWEEP_FUNCTION_ARN"] == {"Fn::GetAtt": [sweep, "Arn"]}
    else:
        assert "CAIRN_SWEEP_FUNCTION_ARN" not in env


@pytest.mark.parametrize("prefix", ["ExtractionExtract", "ConsolidationConsolidate"])
def test_the_consumers_arm_nothing(default: dict[str, Any], prefix: str) -> None:
    function, role = _function_role(default, prefix)
    actions = {
        s["Action"] if isinstance(s["Action"], str) else "" for s in _statements(default, role)
    }

    assert not actions & {"scheduler:CreateSchedule", "iam:PassRole"}
    assert "CAIRN_SWEEP_SCHEDULE_GROUP" not in function["Environment"]["Variables"]
