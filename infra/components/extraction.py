"""Extraction where it runs on AWS: the consumer of the extraction queue and the trigger sweep.

- ``Extract``: consumes the extraction FIFO queue in batches of up to 10, reporting partial
  batch failures (``functions/extraction/handler.py``); its 60 s timeout is one sixth of the
  queue's visibility timeout (``infra.components.fanout``), as AWS advises for SQS sources.
- ``Sweep``: runs every minute on an EventBridge rule (``functions/sweep/handler.py``): idle
  sessions, stalled releases, unconsumed rollouts. One minute is the granularity of idle
  timeouts, whose range (10-3,000 s) is AgentCore's.

Data access is granted by the stack (``infra.stack``), never here. The event source mapping is
the exception CDK makes for itself: wiring the queue grants the function what consuming it
needs (receive, delete, change visibility, and decrypt with the queue's key).
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Acknowledgment, Annotations, Aws, Duration, Validations
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.components.lambda_defaults import LambdaDefaults

# Built by `make lambda-assets` (Makefile): one folder per function, dependencies included.
ASSET_ROOT = Path(__file__).resolve().parents[2] / "build" / "lambda"
EXTRACTION_TIMEOUT = Duration.seconds(60)
SWEEP_TIMEOUT = Duration.seconds(60)
SWEEP_EVERY = Duration.minutes(1)
BATCH_SIZE = 10  # the most an SQS FIFO event source takes
_PROFILE_PREFIXES = frozenset({"us", "eu", "apac", "global", "us-gov", "ca", "jp", "au"})

_MISSING_ASSET = (
    "def lambda_handler(event, context):\n"
    "    raise RuntimeError('cairn: this function was deployed without its code; run make "
    "lambda-assets, then deploy again')\n"
)


def function_code(name: str) -> tuple[lambda_.Code, str]:
    """The function's built asset and handler; without a build, a placeholder that fails
    loudly when invoked (synth and template tests need no build)."""
    folder = ASSET_ROOT / name
    if folder.is_dir():
        return lambda_.Code.from_asset(str(folder)), f"functions.{name}.handler.lambda_handler"
    return lambda_.Code.from_inline(_MISSING_ASSET), "index.lambda_handler"


class ExtractionFunctions(Construct):
    """The extraction function on ``queue`` and the sweep function on its schedule."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        lambdas: LambdaDefaults,
        queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        code, handler = function_code("extraction")
        self.extraction = lambdas.function(
            self,
            "Extract",
            code=code,
            handler=handler,
            description="cairn: extract records from staged rollouts (SQS FIFO consumer)",
            timeout=EXTRACTION_TIMEOUT,
        )
        self.extraction.add_event_source(
            sources.SqsEventSource(queue, batch_size=BATCH_SIZE, report_batch_item_failures=True)
        )
        code, handler = function_code("sweep")
        self.sweep = lambdas.function(
            self,
            "Sweep",
            code=code,
            handler=handler,
            description="cairn: claim idle sessions, finish stalled and unconsumed rollouts",
            timeout=SWEEP_TIMEOUT,
            memory_size=512,
        )
        self.schedule = events.Rule(
            self,
            "SweepSchedule",
            description="cairn: run the trigger sweep",
            schedule=events.Schedule.rate(SWEEP_EVERY),
            targets=[targets.LambdaFunction(self.sweep, retry_attempts=0)],
        )
        if handler.startswith("index."):
            Annotations.of(self).add_warning_v2(
                "cairn:asset-missing", "functions built without their code: run make lambda-assets"
            )


def bedrock_model_arns(model_id: str) -> list[str]:
    """What ``bedrock:InvokeModel`` must name to call ``model_id``: the foundation model in this
    region, or, for a cross-region inference profile (``us.``, ``eu.``, ``apac.``, ``global.``
    prefix), the profile and its model in whichever region the profile routes to."""
    prefix, _, base = model_id.partition(".")
    if prefix in _PROFILE_PREFIXES and base:
        return [
            f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}:{Aws.ACCOUNT_ID}:inference-profile/{model_id}",
            f"arn:{Aws.PARTITION}:bedrock:*::foundation-model/{base}",
        ]
    return [f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}::foundation-model/{model_id}"]


def acknowledge_profile_regions(function: lambda_.Function, model_ids: list[str]) -> None:
    """A cross-region inference profile may serve from any of its regions: its model's ARN
    needs a region wildcard, acknowledged here for exactly that model."""
    for model_id in model_ids:
        prefix, _, base = model_id.partition(".")
        if prefix in _PROFILE_PREFIXES and base and function.role is not None:
            Validations.of(function.role).acknowledge(
                Acknowledgment(
                    id="AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*"
                    f"::foundation-model/{base}]",
                    reason="A cross-region inference profile routes to its model in any of "
                    "the profile's regions.",
                )
            )


def bedrock_invoke_statement(model_ids: list[str]) -> iam.PolicyStatement:
    """``bedrock:InvokeModel`` (what Converse needs) on exactly these models."""
    return iam.PolicyStatement(
        actions=["bedrock:InvokeModel"],
        resources=[arn for model_id in model_ids for arn in bedrock_model_arns(model_id)],
    )
