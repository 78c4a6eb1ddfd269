"""A test-only stack holding one throwaway function built by ``LambdaDefaults``.

The real stack has no functions yet (later issues add them), so the defaults are proven on a
probe: whatever a real function will inherit shows up here first, cdk-nag included.
"""

from __future__ import annotations

from aws_cdk import App, DefaultStackSynthesizer, Stack
from aws_cdk import aws_lambda as lambda_

from infra.components.lambda_defaults import LambdaDefaults

PROBE_ENVIRONMENT = {"CAIRN_EMBEDDER": "onnx", "POWERTOOLS_LOG_LEVEL": "DEBUG"}
PROBE_RETENTION_DAYS = 45  # not a CloudWatch retention: must round up to 60


def add_probe_stack(app: App, name: str) -> Stack:
    stack = Stack(
        app,
        name,
        synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
    )
    defaults = LambdaDefaults(
        stack,
        "Lambdas",
        environment=PROBE_ENVIRONMENT,
        log_retention_days=PROBE_RETENTION_DAYS,
    )
    defaults.function(
        stack,
        "Probe",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
        handler="index.handler",
        description="test-only probe of the Lambda defaults",
        environment={"PROBE_ONLY": "1"},
    )
    return stack
