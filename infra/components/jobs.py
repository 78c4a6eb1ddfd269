"""The background jobs where they run on AWS: one scheduled function, ``functions/jobs``.

Every ``JOBS_EVERY`` an EventBridge rule invokes it; it runs the rollup (``cairn.history.job``),
then the scheduled jobs (access counting, link generation, then evolution, reflection and
decay where switched on: ``cairn.history.scheduled``)
over every memory the stack configures, each job honouring the memory's switch and logging its
run in the items table. A failed run is not
retried (the next one, ``JOBS_EVERY`` later, starts where the cursors and links left off) and
its event is kept in the ``JobFailures`` queue. The function grants nothing itself: the stack
does (``infra.stack``).
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Duration, Validations
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cairn.history.scheduled import SCHEDULED_EVERY
from infra.components.lambda_defaults import LambdaDefaults

JOBS_EVERY = Duration.minutes(int(SCHEDULED_EVERY.total_seconds() // 60))
# Link generation's bound: 8 model calls of at most 45 s each (wiring's model timeout), plus
# the store's reads and writes; a run that meets it stops and the next run continues.
JOBS_TIMEOUT = Duration.minutes(10)
JOBS_EVENT_AGE = Duration.minutes(10)  # an older run is superseded by the next one


class BackgroundJobs(Construct):
    """The scheduled jobs function, its schedule and its failures queue."""

    def __init__(self, scope: Construct, construct_id: str, *, lambdas: LambdaDefaults) -> None:
        super().__init__(scope, construct_id)
        self.failures = sqs.Queue(
            self,
            "JobFailures",
            # Events only (rule, time, error): SSE-SQS whatever the stack's key.
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        Validations.of(self.failures).acknowledge(
            Acknowledgment(
                id="AwsSolutions::AwsSolutions-SQS3",
                reason="It is the jobs' failure destination: a dead-letter queue itself.",
            )
        )
        self.function = lambdas.function(
            self,
            "Run",
            asset="jobs",
            description="cairn: background jobs (rollup, access counts, links) on a schedule",
            timeout=JOBS_TIMEOUT,
        )
        self.function.configure_async_invoke(
            retry_attempts=0,
            max_event_age=JOBS_EVENT_AGE,
            on_failure=destinations.SqsDestination(self.failures),
        )
        self.schedule = events.Rule(
            self,
            "Schedule",
            description="cairn: run the background jobs of every memory",
            schedule=events.Schedule.rate(JOBS_EVERY),
            targets=[
                targets.LambdaFunction(
                    self.function,
                    retry_attempts=0,
                    max_event_age=JOBS_EVENT_AGE,
                    dead_letter_queue=self.failures,
                )
            ],
        )
