"""From measured operations to a month of a workload: ``Usage`` per operation, then composed.

Two ways to run cairn on AWS are costed:

- **library**: the agent's own process (a Lambda of yours, a container, a laptop) appends and
  recalls through the ``cairn`` library against the tables; only extraction and the sweep run
  in cairn's functions;
- **API**: every append and retrieval is an AgentCore-style call through API Gateway to the API
  function (CreateEvent, RetrieveMemoryRecords), the like-for-like shape with AgentCore Memory.

What is not measured is estimated from stated inputs (``Inputs``): the latency of each AWS
request, a hosted model's and embedder's (billed Lambda time while a function waits), Lambda's
platform log lines,
KMS data-key caching, and the event source mapping's polling of an idle queue.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields

from benchmarks.cost_bench import Operation
from benchmarks.cost_jobs import JobsMonth, jobs_month
from benchmarks.cost_model import GB, Usage, Volumes, Workload, volumes, xray_traces
from benchmarks.cost_prices import HOURS_PER_MONTH, SECONDS_PER_MONTH
from benchmarks.cost_runs import Measurements
from benchmarks.cost_stack import StackShape

_S3_PUT_CLASS = frozenset({"PutObject", "CopyObject", "ListObjects", "ListObjectsV2"})
_S3_FREE = frozenset({"DeleteObject", "DeleteObjects"})
SHAPES = ("library", "api")


@dataclass(frozen=True)
class Inputs:
    """Assumptions the measurements cannot supply; each is printed in docs/cost.md."""

    request_seconds: float = 0.010  # one AWS request's round trip from inside a function
    model_seconds_per_call: float = 2.0  # a hosted model answering an extraction prompt
    embed_seconds_per_text: float = 0.05  # one Titan v2 InvokeModel
    platform_log_bytes: int = 500  # Lambda's platform start/report records per invocation
    kms_cache_seconds: int = 300  # data keys are reused this long by each service
    # An idle SQS event source mapping's long pollers: AWS scales one down to 2 when traffic is
    # low, except when it has a maximum concurrency (then it keeps 5). Lambda developer guide,
    # "Configuring scaling behavior for SQS event source mappings".
    esm_pollers: int = 2
    esm_pollers_capped: int = 5
    esm_wait_seconds: int = 20  # each long poll's wait


def usage_of(op: Operation, stack: StackShape, inputs: Inputs) -> Usage:
    """What one run of ``op`` bills, by the stack's configuration."""
    requests, tally = op.tally.requests, op.tally
    s3 = {name.split(".", 1)[1]: n for name, n in requests.items() if name.startswith("s3.")}
    publishes = requests.get("sns.Publish", 0)
    extra_queues = max(0, stack.topic_subscriptions - 1)  # the meter counted one delivery
    usage = Usage(
        dynamodb_rru=tally.read_units,
        dynamodb_wru=tally.write_units + tally.index_write_units,
        s3_put=sum(n for name, n in s3.items() if name in _S3_PUT_CLASS),
        s3_get=sum(n for name, n in s3.items() if name not in _S3_PUT_CLASS | _S3_FREE),
        sns_publishes=tally.sns_chunks,
        sns_gb=tally.sns_bytes / GB,
        sns_deliveries=publishes * max(1, stack.topic_subscriptions),
        sqs_requests=tally.sqs_chunks + tally.sns_chunks * extra_queues,
        apigw_requests=op.api_requests,
    )
    if op.function is None:
        return usage
    memory_gb = stack.functions[op.function].memory_gb
    waiting = (
        op.function_requests * inputs.request_seconds
        + op.model.calls * inputs.model_seconds_per_call
        + op.embeds.calls * inputs.embed_seconds_per_text
    )
    return usage + Usage(
        lambda_invocations=op.invocations,
        lambda_gb_seconds=memory_gb * (op.invocations * op.seconds + waiting),
        log_gb=op.invocations * (op.log_bytes + inputs.platform_log_bytes) / GB,
    )


# The sweep's runs (docs/deploy.md, "The sweep's wake-ups"): the hourly safety rule, and the
# one-time wake-ups appends and sweeps arm. A rollout costs at most three: its batch's first
# idle deadline, one re-arm when the batch outlived it, and its redelivery check; and every
# due entry of a minute shares one wake-up, so there are never more than one a minute.
SAFETY_HOURS = 1
WAKE_UPS_PER_ROLLOUT = 3


def sweep_wake_ups(v: Volumes) -> float:
    """The month's wake-ups of the sweep (Scheduler invocations), at most."""
    return min(WAKE_UPS_PER_ROLLOUT * v.rollouts, SECONDS_PER_MONTH / 60)


def _consolidation(use: dict[str, Usage], stack: StackShape) -> Usage:
    """The consolidation function's pass on each notice, when the stack deploys it; its event
    source mapping receives and deletes the notice (2 SQS requests the run does not make)."""
    if "consolidate" not in use or "consolidation" not in stack.functions:
        return Usage()
    return use["consolidate"] + Usage(sqs_requests=2)


def _at_least_zero(usage: Usage) -> Usage:
    return Usage(**{f.name: max(0.0, getattr(usage, f.name)) for f in fields(usage)})


@dataclass(frozen=True)
class Month:
    """A workload's month on one shape: usage, and the counts behind it."""

    workload: Workload
    shape: str
    volume: Volumes
    usage: Usage
    invocations: Counter[str]
    model_prompt_bytes: float
    model_answer_bytes: float
    embedded_bytes: float
    jobs: JobsMonth | None = None  # the scheduled jobs function's share (cost_jobs)


def month(
    workload: Workload,
    shape: str,
    measured: Measurements,
    stack: StackShape,
    inputs: Inputs = Inputs(),
) -> Month:
    """``workload``'s month on ``shape`` (``library`` or ``api``), from the operations
    measured at its records-per-actor size."""
    ops = measured.by_size[workload.records_per_actor] | measured.shared
    use = {key: usage_of(op, stack, inputs) for key, op in ops.items()}
    v = volumes(workload)
    wake_ups = sweep_wake_ups(v)
    sweeps = HOURS_PER_MONTH / SAFETY_HOURS + wake_ups
    if shape == "library":
        per_message, per_recall = use["append"] * (1 / 6), use["recall"]
    else:
        per_message = _at_least_zero(use["create-event"] + use["release"] * -1) * (1 / 6)
        per_recall = use["retrieve"]
    consumers = use["consume"] + _consolidation(use, stack)
    per_count_rollout = use["release"] + consumers
    per_idle_rollout = _at_least_zero(use["sweep-claim"] + use["sweep-idle"] * -1) + consumers
    usage = (
        per_message * v.messages
        + per_count_rollout * v.rollouts_by_count
        + per_idle_rollout * v.rollouts_by_idle
        + per_recall * v.recalls
        + use["sweep-idle"] * sweeps
        + Usage(scheduler_invocations=wake_ups)
        + _at_rest(v, measured, stack)
    )
    invocations: Counter[str] = Counter(extraction=round(v.rollouts), sweep=round(sweeps))
    fixed = measured.shared.get("jobs-empty")
    jobs = None if fixed is None else jobs_month(workload, v, ops, fixed, stack, inputs)
    if jobs is not None and jobs.runs:
        usage += jobs.usage
        invocations["jobs"] = round(jobs.runs)
    if "consolidate" in use and "consolidation" in stack.functions:
        invocations["consolidation"] = round(v.rollouts)
    if shape == "api":
        invocations["api"] = round(v.messages + v.recalls)
    calls = v.messages + v.recalls
    # An idle sweep publishes no metric (functions/sweep/handler.py): only a sweep that claimed
    # something does, at most once per idle rollout.
    publishing = Counter(invocations)
    publishing["sweep"] = min(invocations["sweep"], round(v.rollouts_by_idle))
    usage += _estimated(usage, invocations, calls, ops, inputs, stack, publishing)
    recall_key = "recall" if shape == "library" else "retrieve"
    return Month(
        workload=workload,
        shape=shape,
        volume=v,
        usage=usage,
        invocations=invocations,
        model_prompt_bytes=ops["consume"].model.prompt_bytes * v.rollouts
        + (jobs.prompt_bytes if jobs else 0.0),
        model_answer_bytes=ops["consume"].model.answer_bytes * v.rollouts
        + (jobs.answer_bytes if jobs else 0.0),
        embedded_bytes=ops["consume"].embeds.prompt_bytes * v.rollouts
        + ops[recall_key].embeds.prompt_bytes * v.recalls,
        jobs=jobs,
    )


def _at_rest(v: Volumes, measured: Measurements, stack: StackShape) -> Usage:
    """A month of storage: the records, one month of events, journal entries and consumed
    rollout markers (30-day TTL), plus the stack's keys and alarms."""
    stored = measured.storage
    table_bytes = (
        v.records * stored.per_record
        + v.messages * stored.per_event
        + v.recalls * stored.per_journal_entry
        + v.rollouts * stored.per_consumed_rollout
    )
    return Usage(dynamodb_gb_months=table_bytes / GB, kms_keys=stack.kms_keys, alarms=stack.alarms)


def _estimated(
    usage: Usage,
    invocations: Counter[str],
    calls: float,
    ops: dict[str, Operation],
    inputs: Inputs,
    stack: StackShape,
    publishing: Counter[str] | None = None,
) -> Usage:
    """Quantities no request of ours shows: KMS data-key requests (one per service per cache
    period while the service is used; with AWS-managed encryption only SNS's, the one service
    on a KMS key: DynamoDB's owned key, SSE-S3 and SSE-SQS make no KMS request), the event
    source mappings' long polls of their queues, X-Ray traces of the traced functions, and the
    custom metrics their logs publish (none when the stack turns them off)."""
    cap = SECONDS_PER_MONTH / inputs.kms_cache_seconds
    callers: dict[str, list[float]] = {
        # each principal reading the tables: the sweep, extraction, the caller (or the API)
        "dynamodb": [invocations["sweep"], invocations["extraction"], invocations["jobs"], calls],
        "s3": [usage.s3_put + usage.s3_get],
        "sns": [usage.sns_publishes],
        "sqs": [invocations["extraction"], invocations["consolidation"]],
    }
    if stack.encryption != "customer-key":
        callers = {"sns": callers["sns"]}
    kms = sum(min(cap, n) for per_service in callers.values() for n in per_service if n > 0)
    capped = stack.capped_consumers
    pollers = capped * inputs.esm_pollers_capped + (stack.queue_consumers - capped) * (
        inputs.esm_pollers
    )
    traced = {
        name: n
        for name, n in invocations.items()
        if name not in stack.functions or stack.functions[name].traced
    }
    return Usage(
        kms_requests=kms,
        sqs_requests=pollers * SECONDS_PER_MONTH / inputs.esm_wait_seconds,
        xray_traces=sum(xray_traces(n) for n in traced.values()),
        custom_metrics=(
            _metric_months(publishing or invocations, ops) if stack.custom_metrics else 0.0
        ),
    )


def _metric_months(invocations: Counter[str], ops: dict[str, Operation]) -> float:
    """Custom metric-months: CloudWatch bills a metric for each hour it gets a data point, and
    a function's metrics get one in at most as many hours as it is invoked."""
    months = 0.0
    for function, count in invocations.items():
        names = frozenset().union(*(op.metrics for op in ops.values() if op.function == function))
        months += len(names) * min(1.0, count / HOURS_PER_MONTH)
    return months
