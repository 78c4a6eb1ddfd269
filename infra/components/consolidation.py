"""Consolidation where it runs on AWS: the consumer of the consolidation FIFO queue.

``Consolidate`` takes one notice at a time (batch size 1: a pass may take up to 60 s, and its
one retry after a deadline failure another 60 s after a 5 s wait), reporting a failed record
so SQS delivers it again (``functions/consolidation/handler.py``). The queue's message group is
the scope, so one scope never has two passes at once; different scopes run in parallel. The
queue, its dead-letter queue and the dead-letter alarm are ``infra.components.fanout``'s.

Data access is granted by the stack (``infra.stack``), never here; wiring the queue grants
what consuming it needs (receive, delete, change visibility, decrypt with the queue's key).
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.components.extraction import queue_source
from infra.components.lambda_defaults import LambdaDefaults

# Two 60 s passes (design §6: one retry after 5 s) and a margin for reads and the commit.
CONSOLIDATION_TIMEOUT = Duration.seconds(130)
BATCH_SIZE = 1


class ConsolidationFunction(Construct):
    """The consolidation function on ``queue``."""

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
        self.function = lambdas.function(
            self,
            "Consolidate",
            asset="consolidation",
            description="cairn: consolidate run evidence into a scope's memory (SQS FIFO)",
            timeout=CONSOLIDATION_TIMEOUT,
        )
        self.function.add_event_source(
            queue_source(queue, batch_size=BATCH_SIZE, max_concurrency=max_concurrency)
        )
