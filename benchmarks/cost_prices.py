"""Every price the cost model uses, in one table: inputs a reader should check, not facts.

All are AWS list prices for us-east-1, on demand, without any free tier. They were written down
from AWS's published price pages as known in 2025 and recorded here on ``RECORDED_ON``; this
machine has no network, so none was re-read when docs/cost.md was generated. Change a number
here and run ``python -m benchmarks.cost`` again: nothing else holds a price.
"""

from __future__ import annotations

from dataclasses import dataclass

REGION = "us-east-1"
RECORDED_ON = "2026-11-30"
SOURCE = (
    f"AWS published price list ({REGION}, on demand, no free tier), as known in 2025; "
    f"recorded {RECORDED_ON} without an online check: verify before relying on a total"
)
HOURS_PER_MONTH = 730  # AWS's own convention for a month
DAYS_PER_MONTH = HOURS_PER_MONTH / 24
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600


@dataclass(frozen=True)
class Price:
    """``usd`` for every ``per`` of ``unit``."""

    key: str
    service: str
    usd: float
    per: float
    unit: str
    note: str = ""

    def cost(self, quantity: float) -> float:
        """Dollars for ``quantity`` units."""
        return quantity / self.per * self.usd


_PRICES = (
    Price(
        "dynamodb.wru",
        "DynamoDB",
        0.625,
        1e6,
        "write request units",
        "on-demand, since the Nov 2024 price cut (was $1.25)",
    ),
    Price(
        "dynamodb.rru",
        "DynamoDB",
        0.125,
        1e6,
        "read request units",
        "on-demand, since the Nov 2024 price cut (was $0.25)",
    ),
    Price("dynamodb.storage", "DynamoDB", 0.25, 1, "GB-month stored", "Standard table class"),
    Price("dynamodb.pitr", "DynamoDB", 0.20, 1, "GB-month of point-in-time recovery"),
    Price("s3.put", "S3", 0.005, 1000, "PUT, COPY, POST, LIST requests"),
    Price("s3.get", "S3", 0.0004, 1000, "GET, HEAD and other requests", "DELETE is free"),
    Price("s3.storage", "S3", 0.023, 1, "GB-month (Standard)"),
    Price("sns.publish", "SNS", 0.30, 1e6, "FIFO publishes (per 64 KB chunk)"),
    Price("sns.publish_data", "SNS", 0.017, 1, "GB published to a FIFO topic"),
    Price("sns.delivery", "SNS", 0.01, 1e6, "FIFO deliveries to SQS"),
    Price("sqs.request", "SQS", 0.50, 1e6, "FIFO requests (per 64 KB chunk)"),
    Price("lambda.request", "Lambda", 0.20, 1e6, "invocations"),
    Price("lambda.gb_second", "Lambda", 0.0000133334, 1, "GB-seconds, arm64"),
    Price("apigw.request", "API Gateway", 1.00, 1e6, "HTTP API requests (per 512 KB)"),
    Price(
        "kms.key",
        "KMS",
        1.00,
        1,
        "customer-managed key-months",
        "+$1 a month for each of the first two yearly rotations",
    ),
    Price("kms.request", "KMS", 0.03, 10_000, "requests"),
    Price("cloudwatch.alarm", "CloudWatch", 0.10, 1, "standard alarm-months"),
    Price("cloudwatch.metric", "CloudWatch", 0.30, 1, "custom metric-months (Powertools EMF)"),
    Price("cloudwatch.logs", "CloudWatch", 0.50, 1, "GB of logs ingested"),
    Price("xray.trace", "X-Ray", 5.00, 1e6, "traces recorded"),
    Price(
        "scheduler.invocation",
        "EventBridge Scheduler",
        1.00,
        1e6,
        "schedule invocations (the sweep's wake-ups)",
        "creating and deleting schedules is free; a scheduled EventBridge rule is free",
    ),
)
PRICES: dict[str, Price] = {price.key: price for price in _PRICES}

# Amazon Bedrock AgentCore Memory, the prices the issue quotes (its published list).
AGENTCORE: dict[str, Price] = {
    price.key: price
    for price in (
        Price("agentcore.event", "AgentCore Memory", 0.25, 1000, "short-term memory events"),
        Price(
            "agentcore.record_builtin",
            "AgentCore Memory",
            0.75,
            1000,
            "records stored a month, built-in strategies",
        ),
        Price(
            "agentcore.record_self",
            "AgentCore Memory",
            0.25,
            1000,
            "records stored a month, self-managed strategies",
        ),
        Price("agentcore.retrieval", "AgentCore Memory", 0.50, 1000, "retrievals"),
    )
}


@dataclass(frozen=True)
class TokenPrice:
    """A model's on-demand price per 1,000 tokens, in and out. An example, not a choice."""

    model_id: str
    input_per_1k: float
    output_per_1k: float


# Examples only: the model is the user's choice, and its price is theirs to look up.
EXAMPLE_EXTRACTION_MODEL = TokenPrice("amazon.nova-lite-v1:0", 0.00006, 0.00024)
EXAMPLE_EMBEDDING_MODEL = TokenPrice("amazon.titan-embed-text-v2:0", 0.00002, 0.0)


def price(key: str) -> Price:
    """The price named ``key`` (``KeyError`` names a price this table does not hold)."""
    return PRICES[key]
