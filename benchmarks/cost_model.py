"""The cost model's arithmetic: billable quantities, workloads scaled to a month, dollars.

Pure: no AWS, no measuring. ``Usage`` holds what AWS bills for (units, requests, GB-seconds,
bytes, tokens) and adds and scales; a ``Workload`` says how much happens in a month; ``dollars``
prices a ``Usage`` line by line with ``benchmarks.cost_prices``; ``agentcore`` prices the same
workload at Amazon Bedrock AgentCore Memory's published prices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from benchmarks.cost_prices import AGENTCORE, DAYS_PER_MONTH, PRICES, SECONDS_PER_MONTH, Price

GB = 1024**3
# The built-in message trigger (cairn.extract.triggers.BUILT_IN_TRIGGERS): a rollout every 6.
MESSAGES_PER_ROLLOUT = 6
# X-Ray's default sampling rule: the first request each second, then 5% of the rest.
XRAY_RESERVOIR_PER_SECOND = 1.0
XRAY_RATE = 0.05


@dataclass(frozen=True)
class Usage:
    """Billable quantities; ``+`` adds them, ``*`` scales them."""

    dynamodb_rru: float = 0.0
    dynamodb_wru: float = 0.0
    dynamodb_gb_months: float = 0.0
    s3_put: float = 0.0
    s3_get: float = 0.0
    s3_gb_months: float = 0.0
    sns_publishes: float = 0.0
    sns_gb: float = 0.0
    sns_deliveries: float = 0.0
    sqs_requests: float = 0.0
    lambda_invocations: float = 0.0
    lambda_gb_seconds: float = 0.0
    apigw_requests: float = 0.0
    kms_keys: float = 0.0
    kms_requests: float = 0.0
    alarms: float = 0.0
    custom_metrics: float = 0.0
    log_gb: float = 0.0
    xray_traces: float = 0.0
    scheduler_invocations: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def __mul__(self, factor: float) -> Usage:
        return Usage(**{f.name: getattr(self, f.name) * factor for f in fields(self)})


# Which price bills which quantity; PITR bills the same GB-months as the table.
_PRICED: tuple[tuple[str, str], ...] = (
    ("dynamodb_rru", "dynamodb.rru"),
    ("dynamodb_wru", "dynamodb.wru"),
    ("dynamodb_gb_months", "dynamodb.storage"),
    ("dynamodb_gb_months", "dynamodb.pitr"),
    ("s3_put", "s3.put"),
    ("s3_get", "s3.get"),
    ("s3_gb_months", "s3.storage"),
    ("sns_publishes", "sns.publish"),
    ("sns_gb", "sns.publish_data"),
    ("sns_deliveries", "sns.delivery"),
    ("sqs_requests", "sqs.request"),
    ("lambda_invocations", "lambda.request"),
    ("lambda_gb_seconds", "lambda.gb_second"),
    ("apigw_requests", "apigw.request"),
    ("kms_keys", "kms.key"),
    ("kms_requests", "kms.request"),
    ("alarms", "cloudwatch.alarm"),
    ("custom_metrics", "cloudwatch.metric"),
    ("log_gb", "cloudwatch.logs"),
    ("xray_traces", "xray.trace"),
    ("scheduler_invocations", "scheduler.invocation"),
)


def dollars(usage: Usage, prices: dict[str, Price] = PRICES) -> dict[str, float]:
    """Dollars per price key for ``usage`` (every key present, zero or not)."""
    return {key: prices[key].cost(getattr(usage, quantity)) for quantity, key in _PRICED}


def by_service(lines: dict[str, float], prices: dict[str, Price] = PRICES) -> dict[str, float]:
    """Price lines summed per AWS service, in the order services first appear."""
    totals: dict[str, float] = {}
    for key, amount in lines.items():
        service = prices[key].service
        totals[service] = totals.get(service, 0.0) + amount
    return totals


@dataclass(frozen=True)
class Workload:
    """How much happens in a month, and the assumptions it rests on (said in the doc)."""

    key: str
    title: str
    actors: int
    active_share: float  # of the actors, the share active on a given day
    sessions_per_active_day: float
    messages_per_session: int  # events appended: user and assistant turns
    recalls_per_active_day: float
    records_per_actor: int
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Volumes:
    """A workload's month in counts."""

    active_days: float
    sessions: float
    messages: float
    rollouts_by_count: float
    rollouts_by_idle: float
    recalls: float
    records: float

    @property
    def rollouts(self) -> float:
        return self.rollouts_by_count + self.rollouts_by_idle


def volumes(workload: Workload, days: float = DAYS_PER_MONTH) -> Volumes:
    """A month of ``workload``: a session's turns fire the message trigger every 6 turns, and
    the rest of the session is released by the idle timeout once it goes quiet."""
    active_days = workload.actors * workload.active_share * days
    sessions = active_days * workload.sessions_per_active_day
    per_session = workload.messages_per_session
    return Volumes(
        active_days=active_days,
        sessions=sessions,
        messages=sessions * per_session,
        rollouts_by_count=sessions * (per_session // MESSAGES_PER_ROLLOUT),
        rollouts_by_idle=sessions * (1 if per_session % MESSAGES_PER_ROLLOUT else 0),
        recalls=active_days * workload.recalls_per_active_day,
        records=float(workload.actors * workload.records_per_actor),
    )


def xray_traces(invocations: float, seconds: float = SECONDS_PER_MONTH) -> float:
    """Traces X-Ray records for ``invocations`` spread evenly over ``seconds`` under the
    default sampling rule (bursts would record fewer)."""
    reservoir = min(invocations, XRAY_RESERVOIR_PER_SECOND * seconds)
    return reservoir + XRAY_RATE * (invocations - reservoir)


def estimated_tokens(byte_count: float) -> int:
    """Tokens estimated as one per four UTF-8 bytes, rounded up (cairn.rollout.index' rule)."""
    return math.ceil(byte_count / 4)


def agentcore(volume: Volumes, *, built_in: bool) -> dict[str, float]:
    """AgentCore Memory's bill for the same month: events, records stored, retrievals."""
    record_price = AGENTCORE["agentcore.record_builtin" if built_in else "agentcore.record_self"]
    return {
        "events": AGENTCORE["agentcore.event"].cost(volume.messages),
        "records stored": record_price.cost(volume.records),
        "retrievals": AGENTCORE["agentcore.retrieval"].cost(volume.recalls),
    }
