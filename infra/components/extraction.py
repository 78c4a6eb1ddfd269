"""Extraction where it runs on AWS: the consumer of the extraction queue and the trigger sweep.

- ``Extract``: consumes the extraction FIFO queue in batches of up to 10, reporting partial
  batch failures (``functions/extraction/handler.py``). Sized from the worst case of one
  notice, ``RECORD_WORST_CASE``: every strategy of a rollout (``STRATEGIES``) calling the model
  twice (one retry of a refused answer), each call bounded at ``MODEL_TIMEOUT`` (the functions'
  composition root), plus a margin for the stores and the embedder. The timeout holds two such
  notices, and the handler takes the next notice only while the remaining time covers its
  worst case (``CAIRN_RECORD_BUDGET_MS``); the rest of the batch goes back as batch failures,
  so no batch outruns its function. The queue's visibility is six times the timeout
  (``infra.components.fanout``).
- ``Sweep`` (``functions/sweep/handler.py``): idle sessions, stalled releases, unconsumed
  rollouts, run only when something falls due. An append that leaves the sweep something to
  wait for (a session's first pending message, a claimed rollout) arms a one-time EventBridge
  Scheduler schedule in ``SweepWakeUps`` for that minute, which invokes the sweep once and is
  deleted (``cairn.aws.sweep_timer``); each pass arms the next for the earliest thing still
  due, or nothing. So an idle stack invokes nothing. One minute is the granularity of idle
  timeouts, whose range (10-3,000 s) is AgentCore's. The ``SweepSafety`` rule also runs it
  every ``SAFETY_EVERY`` (an hour): a wake-up lost to a crash between an append's commit and
  its arming, or a pass that failed for good, delays a release by at most that. The Scheduler
  invokes it as ``SweepScheduler`` (a role only it assumes, for this account). Untraced and
  small. A failed delivery is retried by EventBridge or the Scheduler, a failed run not at all
  (the next wake-up or safety run is the retry), and its event kept in ``SweepFailures`` (an
  alarm watches it when the stack has an alarm address).

Data access is granted by the stack (``infra.stack``), never here. The event source mapping is
the exception CDK makes for itself: wiring the queue grants the function what consuming it
needs (receive, delete, change visibility, and decrypt with the queue's key).
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Aws, Duration, Validations
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cairn.aws.sweep_timer import NAME_PREFIX as WAKE_UP_PREFIX
from cairn.extract.sweep import SAFETY_EVERY as SAFETY_SWEEP_EVERY
from infra.components.lambda_defaults import LambdaDefaults

# The worst case of one rollout notice (docs/extraction.md): the built-in strategies each
# call the model at most twice, each call bounded by the composition root's model timeout
# (functions/_common/wiring.py, _MODEL_TIMEOUT_SECONDS; a test keeps the two equal).
MODEL_TIMEOUT = Duration.seconds(45)
MODEL_ATTEMPTS = 2
STRATEGIES = 3
STORE_MARGIN = Duration.seconds(30)  # reads, writes, the staged payload, embeddings
RECORD_WORST_CASE = Duration.seconds(
    STRATEGIES * MODEL_ATTEMPTS * int(MODEL_TIMEOUT.to_seconds()) + int(STORE_MARGIN.to_seconds())
)
RECORDS_PER_TIMEOUT = 2  # the worst case fits twice: the first notice is always taken
EXTRACTION_TIMEOUT = Duration.seconds(RECORDS_PER_TIMEOUT * int(RECORD_WORST_CASE.to_seconds()))
SWEEP_TIMEOUT = Duration.seconds(60)
SWEEP_MEMORY_MB = 256
SAFETY_EVERY = Duration.seconds(int(SAFETY_SWEEP_EVERY.total_seconds()))
SWEEP_RETRIES = 2  # EventBridge's retries of a delivery that failed (throttled, unavailable)
SWEEP_EVENT_AGE = Duration.minutes(5)  # an older sweep is superseded by the next one
BATCH_SIZE = 10  # the most an SQS FIFO event source takes
_PROFILE_PREFIXES = frozenset({"us", "eu", "apac", "global", "us-gov", "ca", "jp", "au"})


def queue_source(
    queue: sqs.IQueue, *, batch_size: int, max_concurrency: int | None
) -> sources.SqsEventSource:
    """An SQS event source reporting partial batch failures, capped at ``max_concurrency``
    concurrent invocations when set (``-c maxConcurrency``)."""
    return sources.SqsEventSource(
        queue,
        batch_size=batch_size,
        report_batch_item_failures=True,
        max_concurrency=max_concurrency,
    )


class ExtractionFunctions(Construct):
    """The extraction function on ``queue``; the sweep function, its wake-ups and its
    safety schedule."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        lambdas: LambdaDefaults,
        queue: sqs.IQueue,
        max_concurrency: int | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.extraction = lambdas.function(
            self,
            "Extract",
            asset="extraction",
            description="cairn: extract records from staged rollouts (SQS FIFO consumer)",
            timeout=EXTRACTION_TIMEOUT,
            environment={"CAIRN_RECORD_BUDGET_MS": str(int(RECORD_WORST_CASE.to_seconds()) * 1000)},
        )
        self.extraction.add_event_source(
            queue_source(queue, batch_size=BATCH_SIZE, max_concurrency=max_concurrency)
        )
        self.sweep_failures = sqs.Queue(
            self,
            "SweepFailures",
            # Events only (schedule, time, error): SSE-SQS whatever the stack's key.
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        Validations.of(self.sweep_failures).acknowledge(
            Acknowledgment(
                id="AwsSolutions::AwsSolutions-SQS3",
                reason="It is the sweep's failure destination: a dead-letter queue itself.",
            )
        )
        self.sweep = lambdas.function(
            self,
            "Sweep",
            asset="sweep",
            description="cairn: claim idle sessions, finish stalled and unconsumed rollouts",
            timeout=SWEEP_TIMEOUT,
            memory_size=SWEEP_MEMORY_MB,
            traced=False,
        )
        # The next wake-up or safety run is the retry of a failed one; the failure is kept.
        self.sweep.configure_async_invoke(
            retry_attempts=0,
            max_event_age=SWEEP_EVENT_AGE,
            on_failure=destinations.SqsDestination(self.sweep_failures),
        )
        self.wake_ups = scheduler.CfnScheduleGroup(self, "SweepWakeUps")
        self.scheduler_role = iam.Role(
            self,
            "SweepScheduler",
            description="cairn: EventBridge Scheduler invoking the sweep at its wake-ups",
            assumed_by=iam.ServicePrincipal(
                "scheduler.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
            ),
        )
        self.safety = events.Rule(
            self,
            "SweepSafety",
            description="cairn: run the trigger sweep whatever is armed (a lost wake-up)",
            schedule=events.Schedule.rate(SAFETY_EVERY),
            targets=[
                targets.LambdaFunction(
                    self.sweep,
                    retry_attempts=SWEEP_RETRIES,
                    max_event_age=SWEEP_EVENT_AGE,
                    dead_letter_queue=self.sweep_failures,
                )
            ],
        )

    def wake_up_schedules(self) -> str:
        """The ARN pattern of every wake-up schedule (``cairn.aws.sweep_timer`` names them)."""
        return (
            f"arn:{Aws.PARTITION}:scheduler:{Aws.REGION}:{Aws.ACCOUNT_ID}:schedule/"
            f"{self.wake_ups.ref}/{WAKE_UP_PREFIX}*"
        )

    def timer_environment(self) -> dict[str, str]:
        """What a function that arms wake-ups reads (``functions/_common/wiring.py``)."""
        return {
            "CAIRN_SWEEP_SCHEDULE_GROUP": self.wake_ups.ref,
            "CAIRN_SWEEP_SCHEDULER_ROLE_ARN": self.scheduler_role.role_arn,
            "CAIRN_SWEEP_FAILURES_ARN": self.sweep_failures.queue_arn,
        }


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
