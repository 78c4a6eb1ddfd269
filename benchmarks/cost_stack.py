"""What the stack deploys, read from its synthesized template: the functions' memory, timeout,
architecture and tracing, whether they publish custom metrics, how each queue is polled, and
the resources billed by the month (keys, alarms).

The stack is synthesized offline with its default settings (what ``cdk deploy`` with no ``-c``
deploys), or with the ``context`` given (an option's cost), as ``make synth`` does, without the
cdk-nag pass. A function the stack does
not deploy yet is costed with the Lambda defaults of ``infra.components.lambda_defaults`` and
marked as such (the API function, for the API shape).
"""

from __future__ import annotations

import inspect
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any

# Which template function is which: matched on its description, set in infra/components.
_ROLES = {
    "extraction": re.compile(r"extract records", re.IGNORECASE),
    "sweep": re.compile(r"idle sessions", re.IGNORECASE),
    "consolidation": re.compile(r"consolidate", re.IGNORECASE),
    "api": re.compile(r"\bapi\b|agentcore", re.IGNORECASE),
    "jobs": re.compile(r"background jobs", re.IGNORECASE),
}


@dataclass(frozen=True)
class FunctionShape:
    memory_mb: int
    timeout_s: int
    architecture: str
    deployed: bool  # False: not in the stack yet, costed with the Lambda defaults
    traced: bool = True  # active X-Ray tracing

    @property
    def memory_gb(self) -> float:
        return self.memory_mb / 1024


@dataclass(frozen=True)
class StackShape:
    functions: dict[str, FunctionShape]
    kms_keys: int
    alarms: int
    http_apis: int
    topic_subscriptions: int  # queues each rollout notice is delivered to
    queue_consumers: int  # SQS event source mappings: each polls its queue, idle or not
    capped_consumers: int  # of which with a maximum concurrency (no scale-down to 2 pollers)
    embedder: str
    extraction_model_id: str
    custom_metrics: bool = True  # False: POWERTOOLS_METRICS_DISABLED, no EMF metric published
    encryption: str = "customer-key"


def _defaults() -> FunctionShape:
    from infra.components.lambda_defaults import ARCHITECTURE, DEFAULT_TIMEOUT, LambdaDefaults

    memory = inspect.signature(LambdaDefaults.function).parameters["memory_size"].default
    return FunctionShape(
        memory_mb=int(memory),
        timeout_s=int(DEFAULT_TIMEOUT.to_seconds()),
        architecture=str(ARCHITECTURE.name),
        deployed=False,
    )


def _template(context: dict[str, str]) -> dict[str, Any]:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App

    from infra.app import build

    with tempfile.TemporaryDirectory() as outdir:
        # Offline: placeholder code (the template is read, never deployed).
        app = App(outdir=outdir, context={**context, "lambdaCode": "placeholder"})
        stack = build(app)
        template: dict[str, Any] = app.synth().get_stack_by_name(stack.stack_name).template
    return template


def _environment(resources: dict[str, Any]) -> dict[str, Any]:
    for resource in resources.values():
        if resource["Type"] == "AWS::Lambda::Function":
            variables: dict[str, Any] = resource["Properties"]["Environment"]["Variables"]
            return variables
    return {}


def read_stack(context: dict[str, str] | None = None) -> StackShape:
    """Synthesize the stack (defaults, or ``context``) and read what the cost model needs."""
    resources = _template(context or {})["Resources"]
    functions: dict[str, FunctionShape] = {}
    for resource in resources.values():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        found = resource["Properties"]
        for role, pattern in _ROLES.items():
            if pattern.search(found.get("Description", "")):
                functions[role] = FunctionShape(
                    memory_mb=int(found.get("MemorySize", 128)),
                    timeout_s=int(found.get("Timeout", 3)),
                    architecture=",".join(found.get("Architectures", ["x86_64"])),
                    deployed=True,
                    traced=found.get("TracingConfig", {}).get("Mode") == "Active",
                )
    # The API function is costed even where the stack does not deploy it yet (the API shape).
    functions.setdefault("api", _defaults())
    kinds = [r["Type"] for r in resources.values()]
    environment = _environment(resources)
    return StackShape(
        functions=functions,
        kms_keys=kinds.count("AWS::KMS::Key"),
        alarms=kinds.count("AWS::CloudWatch::Alarm"),
        http_apis=kinds.count("AWS::ApiGatewayV2::Api"),
        topic_subscriptions=sum(
            1
            for r in resources.values()
            if r["Type"] == "AWS::SNS::Subscription" and r["Properties"].get("Protocol") == "sqs"
        ),
        queue_consumers=kinds.count("AWS::Lambda::EventSourceMapping"),
        capped_consumers=sum(
            1
            for r in resources.values()
            if r["Type"] == "AWS::Lambda::EventSourceMapping"
            and "MaximumConcurrency" in r["Properties"].get("ScalingConfig", {})
        ),
        embedder=str(environment.get("CAIRN_EMBEDDER", "?")),
        extraction_model_id=str(environment.get("CAIRN_EXTRACTION_MODEL_ID", "?")),
        custom_metrics=environment.get("POWERTOOLS_METRICS_DISABLED") != "true",
        encryption="customer-key" if kinds.count("AWS::KMS::Key") else "aws-managed",
    )
