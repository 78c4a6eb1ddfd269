"""The AgentCore-compatible API on AWS: an HTTP API (API Gateway v2) in front of the api Lambda.

- ``Function``: ``functions/api/handler.py``, the ``cairn.api`` router behind a proxy event.
- ``HttpApi``: one greedy route, ``ANY /{proxy+}``, integrated with payload format 2.0, whose
  ``rawPath`` keeps the percent-encoded ``/`` of actor ids (``user%2Fa1``) for the router to
  split on before decoding (docs/agentcore-compatibility.md, "Behind API Gateway"). IAM
  authorisation on the route: callers sign for ``execute-api`` and need ``execute-api:Invoke``
  on it (``cairn.api.client.use_cairn(session, sign_for_execute_api=True)``).
- The ``$default`` stage: deployed automatically, throttled (a bound on what a leaked
  credential can cost), with JSON access logs that carry no path and no body: paths hold
  actor ids and namespaces, bodies hold memory content.

Data access is granted by the stack (``infra.stack``), never here. The integration is the
exception CDK makes for itself: it lets API Gateway invoke the function, from this API only.
"""

from __future__ import annotations

import json

import jsii
from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.components.lambda_defaults import LambdaDefaults

# API Gateway gives an integration at most 30 s; the function answers within that.
API_TIMEOUT = Duration.seconds(29)
# Steady requests a second and the burst above it, for the whole stage.
THROTTLE_RATE = 200
THROTTLE_BURST = 400
# What an access log line holds: who called, what route, how it went. Never $context.path
# (actor ids, namespaces) nor anything of the body (memory content).
ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTimeEpoch",
    "method": "$context.httpMethod",
    "routeKey": "$context.routeKey",
    "status": "$context.status",
    "responseLength": "$context.responseLength",
    "integrationLatency": "$context.integrationLatency",
    "integrationStatus": "$context.integrationStatus",
    "caller": "$context.identity.userArn",
    "sourceIp": "$context.identity.sourceIp",
    "error": "$context.error.message",
}


@jsii.implements(apigwv2.IAccessLogSettings)
class _AccessLogs:
    """Where the stage's access logs go and what each line holds (a jsii interface, so a class)."""

    def __init__(
        self, *, destination: apigwv2.IAccessLogDestination, format: apigw.AccessLogFormat
    ) -> None:
        self._destination = destination
        self._format = format

    # jsii reads an interface's members through property getters, not instance attributes.
    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigw.AccessLogFormat:
        return self._format


class AgentCoreApi(Construct):
    """The api function behind an IAM-authorised HTTP API; ``url`` is the endpoint."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        lambdas: LambdaDefaults,
        environment: dict[str, str] | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = lambdas.function(
            self,
            "Function",
            asset="api",
            description="cairn: the AgentCore Memory-compatible API (API Gateway HTTP API)",
            timeout=API_TIMEOUT,
            environment=environment,
        )
        self.http_api = apigwv2.HttpApi(
            self,
            "HttpApi",
            description="cairn: AgentCore Memory-compatible API (sign for execute-api)",
            create_default_stage=False,
        )
        self.http_api.add_routes(
            path="/{proxy+}",
            methods=[apigwv2.HttpMethod.ANY],
            integration=integrations.HttpLambdaIntegration(
                "Integration",
                self.function,
                payload_format_version=apigwv2.PayloadFormatVersion.VERSION_2_0,
            ),
            authorizer=authorizers.HttpIamAuthorizer(),
        )
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=lambdas.log_retention,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.stage = apigwv2.HttpStage(
            self,
            "DefaultStage",
            http_api=self.http_api,
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(rate_limit=THROTTLE_RATE, burst_limit=THROTTLE_BURST),
            access_log_settings=_AccessLogs(
                destination=apigwv2.LogGroupLogDestination(self.access_logs),
                format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FIELDS)),
            ),
        )

    @property
    def url(self) -> str:
        """The endpoint ``AWS_ENDPOINT_URL_BEDROCK_AGENTCORE`` (and ``_CONTROL``) point at."""
        return self.http_api.api_endpoint
