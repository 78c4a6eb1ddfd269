"""The API in the stack: one IAM-authorised greedy route on an HTTP API (payload format 2.0)
into the api function, a throttled ``$default`` stage whose access logs carry no path, the
endpoint as an output, and a role allowed exactly what the API does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import DEFAULT_STACK, VARIANT_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]


@pytest.fixture(scope="module")
def default(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(DEFAULT_STACK)


def _of_type(template: dict[str, Any], kind: str) -> list[tuple[str, dict[str, Any]]]:
    return [(lid, r) for lid, r in template["Resources"].items() if r["Type"] == kind]


def _api_function(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (found,) = (
        (lid, r)
        for lid, r in _of_type(template, "AWS::Lambda::Function")
        if lid.startswith("ApiFunction")
    )
    return found


def _statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    _, function = _api_function(template)
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    return [
        statement
        for _, policy in _of_type(template, "AWS::IAM::Policy")
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def _actions(statements: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for statement in statements:
        actions = statement["Action"]
        found |= {actions} if isinstance(actions, str) else set(actions)
    return found


def test_one_greedy_route_signed_for_execute_api_reaches_the_function(
    default: dict[str, Any],
) -> None:
    function_id, _ = _api_function(default)
    (route,) = [r["Properties"] for _, r in _of_type(default, "AWS::ApiGatewayV2::Route")]
    (integration_id, integration) = _of_type(default, "AWS::ApiGatewayV2::Integration")[0]

    assert route["RouteKey"] == "ANY /{proxy+}"
    assert route["AuthorizationType"] == "AWS_IAM"
    assert integration_id in json.dumps(route["Target"])
    properties = integration["Properties"]
    assert properties["IntegrationType"] == "AWS_PROXY"
    assert properties["PayloadFormatVersion"] == "2.0"
    assert function_id in json.dumps(properties["IntegrationUri"])


def test_the_default_stage_is_throttled_and_logs_no_path_and_no_body(
    default: dict[str, Any],
) -> None:
    (stage,) = [r["Properties"] for _, r in _of_type(default, "AWS::ApiGatewayV2::Stage")]

    assert stage["StageName"] == "$default"
    assert stage["AutoDeploy"] is True
    throttle = stage["DefaultRouteSettings"]
    assert (throttle["ThrottlingRateLimit"], throttle["ThrottlingBurstLimit"]) == (200, 400)
    fields = json.loads(stage["AccessLogSettings"]["Format"])
    assert "$context.routeKey" in fields.values()
    assert "$context.identity.userArn" in fields.values()
    assert not any("path" in value.lower() or "body" in value.lower() for value in fields.values())


def test_the_function_answers_within_api_gateways_limit_and_knows_the_deployment(
    default: dict[str, Any],
) -> None:
    _, function = _api_function(default)
    properties = function["Properties"]

    assert properties["Timeout"] < 30
    assert properties["Handler"].endswith("lambda_handler")
    environment = properties["Environment"]["Variables"]
    assert {
        "CAIRN_ITEMS_TABLE",
        "CAIRN_EVENTS_TABLE",
        "CAIRN_ROLLOUT_BUCKET",
        "CAIRN_ROLLOUT_TOPIC_ARN",
        "CAIRN_EMBEDDER",
    } <= set(environment)


def test_the_endpoint_is_a_stack_output(default: dict[str, Any]) -> None:
    (api_id, _) = _of_type(default, "AWS::ApiGatewayV2::Api")[0]

    endpoint = default["Outputs"]["ApiEndpoint"]["Value"]

    # moto's CloudFormation skips the API and crashes on this GetAtt: the deploy-into-moto
    # helper drops the output (tests/infra/moto_deploy.py), test_deploy_moto still deploys.
    assert endpoint == {"Fn::GetAtt": [api_id, "ApiEndpoint"]}


def test_the_api_may_do_what_it_does_and_nothing_more(default: dict[str, Any]) -> None:
    statements = _statements(default)
    actions = _actions(statements)

    assert {
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
        "s3:PutObject",
        "s3:DeleteObject",
        "s3:ListBucket",
        "sns:Publish",
        "kms:GenerateDataKey",
        "kms:Decrypt",
    } <= actions
    assert not actions & {
        "dynamodb:Scan",
        "dynamodb:DeleteTable",
        "s3:PutBucketPolicy",
        "sns:Subscribe",
        "secretsmanager:GetSecretValue",
    }
    assert not any(action.endswith("*") for action in actions)
    indexes = {
        str(resource)
        for statement in statements
        if str(statement["Action"]).startswith("['dynamodb")
        for resource in statement["Resource"]
    }
    assert any("/index/live" in r for r in indexes)
    assert any("/index/by_event_id" in r for r in indexes)
    assert not any("/index/due" in r for r in indexes)  # the sweep's index, not the API's


def test_only_a_bedrock_embedder_lets_the_api_invoke_a_model(synthesized: Synthesized) -> None:
    bedrock = _actions(_statements(synthesized.template(DEFAULT_STACK)))
    onnx = _actions(_statements(synthesized.template(VARIANT_STACK)))

    assert "bedrock:InvokeModel" in bedrock
    assert "bedrock:InvokeModel" not in onnx


def test_deploying_into_moto_drops_only_the_outputs_of_what_moto_cannot_create(
    default: dict[str, Any],
) -> None:
    pytest.importorskip("moto")
    from tests.infra.moto_deploy import _adapted_to_moto

    adapted = _adapted_to_moto(json.loads(json.dumps(default)), DEFAULT_STACK)

    # moto 5.2 creates neither an HTTP API nor a schedule group (the sweep's wake-ups).
    assert set(default["Outputs"]) - set(adapted["Outputs"]) == {
        "ApiEndpoint",
        "SweepScheduleGroup",
    }
