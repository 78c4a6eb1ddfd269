"""AWS requests per rollout, counted by a botocore ``before-call`` hook (docs/extraction.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.extract.triggers import embedded_memory, policy_for
from tests.pipeline.aws import Deployment, LambdaRuntime
from tests.pipeline.scenario import SCOPE, TURNS, turn

POLICY = policy_for(embedded_memory(SCOPE.memory_id))


@pytest.fixture
def requests(session: Any) -> Counter[str]:
    """Registered before any client exists: a client copies the session's hooks when made."""
    counts: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        counts[f"{model.service_model.service_name}.{model.name}"] += 1

    session.events.register("before-call", count)
    return counts


def test_counting_staging_and_announcing_a_rollout_costs_twenty_one_requests(
    requests: Counter[str], deployment: Deployment, clock: FixedClock
) -> None:
    from functions._common import wiring

    pipeline = wiring.pipeline()
    requests.clear()
    for role, text in TURNS:
        pipeline.append(SCOPE, turn(role, text, clock), POLICY)

    assert dict(requests) == {
        # each append: read the counters, then one transaction (event, summaries, counters)
        "dynamodb.GetItem": 6 + 2,  # + the rollout, read before marking it staged / announced
        "dynamodb.TransactWriteItems": 6 + 2,  # + staged, announced
        "dynamodb.BatchGetItem": 1,  # the batch's events (a first rollout has no history)
        "s3.PutObject": 1,
        "sns.Publish": 1,
        # the sweep's wake-ups: the batch's first message (its idle deadline) and the
        # announced rollout's redelivery check; the four messages between arm nothing
        "scheduler.CreateSchedule": 2,
    }


def test_consuming_a_rollout_reads_the_payload_once_and_deletes_it(
    requests: Counter[str],
    deployment: Deployment,
    extraction_lambda: LambdaRuntime,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    pipeline = wiring.pipeline()
    wiring.consumer()
    for role, text in TURNS:
        pipeline.append(SCOPE, turn(role, text, clock), POLICY)
    messages = extraction_lambda.receive()
    requests.clear()

    assert extraction_lambda.deliver(messages) == []

    assert requests["s3.GetObject"] == 1
    assert requests["s3.DeleteObject"] == 1
    assert "sns.Publish" not in requests
    ours = sum(c for op, c in requests.items() if not op.startswith("sqs."))
    # 17 measured: the rollout, the memory's configuration (GetItem each), the payload (GetObject,
    # DeleteObject), the consumed mark (GetItem, TransactWriteItems), per namespace a Query, a
    # BatchGetItem and an apply (3 namespaces), and the record directory's placements
    # (BatchGetItem, TransactWriteItems) that let the AgentCore API find the records.
    assert ours <= 18
