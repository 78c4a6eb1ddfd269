"""What the synthesized stack's settings do to the estimated month (benchmarks.cost_compose):
idle polling by mapping, tracing by function, metrics and KMS requests by setting."""

from __future__ import annotations

from collections import Counter

from benchmarks.cost_compose import Inputs, _estimated
from benchmarks.cost_model import Usage
from benchmarks.cost_prices import SECONDS_PER_MONTH
from benchmarks.cost_stack import FunctionShape, StackShape


def shape(**overrides: object) -> StackShape:
    fields: dict[str, object] = {
        "functions": {
            "sweep": FunctionShape(256, 60, "arm64", deployed=True, traced=False),
            "extraction": FunctionShape(1024, 600, "arm64", deployed=True, traced=True),
        },
        "kms_keys": 0,
        "alarms": 0,
        "http_apis": 1,
        "topic_subscriptions": 2,
        "queue_consumers": 2,
        "capped_consumers": 0,
        "embedder": "bedrock",
        "extraction_model_id": "amazon.nova-lite-v1:0",
        "custom_metrics": False,
        "encryption": "aws-managed",
    }
    return StackShape(**{**fields, **overrides})  # type: ignore[arg-type]


def estimate(stack: StackShape, **invocations: int) -> Usage:
    used = Usage(s3_put=10, s3_get=10, sns_publishes=10)
    return _estimated(used, Counter(invocations), 100, {}, Inputs(), stack)


def test_an_idle_mapping_polls_with_two_connections_and_a_capped_one_with_five() -> None:
    polls_per_connection = SECONDS_PER_MONTH / Inputs().esm_wait_seconds

    uncapped = estimate(shape())
    capped = estimate(shape(capped_consumers=1))

    assert uncapped.sqs_requests == 2 * 2 * polls_per_connection
    assert capped.sqs_requests == (5 + 2) * polls_per_connection


def test_an_untraced_sweep_records_no_trace() -> None:
    usage = estimate(shape(), sweep=43_800, extraction=300)

    assert 0 < usage.xray_traces <= 300  # extraction's only


def test_aws_managed_encryption_makes_kms_requests_for_sns_only() -> None:
    managed = estimate(shape(), sweep=43_800, extraction=300, consolidation=0)
    customer = estimate(shape(encryption="customer-key", kms_keys=1), sweep=43_800, extraction=300)

    assert managed.kms_requests == 10  # SNS's publishes, under the data-key cache cap
    assert customer.kms_requests > managed.kms_requests
