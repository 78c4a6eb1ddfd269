"""docs/cost.md, written from the measurements and the month of each workload.

Every generated number that the README may quote has an anchor on its row (``cost-personal``,
``cost-bot``, ``cost-idle``, ``cost-op-<operation>-<records>`` ...).
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.cost_bench import Operation
from benchmarks.cost_compose import Inputs, Month, usage_of
from benchmarks.cost_model import GB, agentcore, by_service, dollars, estimated_tokens
from benchmarks.cost_prices import (
    AGENTCORE,
    EXAMPLE_EMBEDDING_MODEL,
    EXAMPLE_EXTRACTION_MODEL,
    PRICES,
    REGION,
    SOURCE,
)
from benchmarks.cost_runs import Measurements
from benchmarks.cost_stack import StackShape


def usd(amount: float) -> str:
    """Dollars at a precision that keeps small amounts readable."""
    if amount == 0:
        return "$0"
    if amount < 0.01:
        return f"${amount:.4f}"
    if amount < 1:
        return f"${amount:.3f}"
    return f"${amount:,.2f}"


def _count(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:,.2f}".rstrip("0").rstrip(".")


def _anchor(name: str) -> str:
    return f'<a id="{name}"></a>'


def tokens_dollars(month: Month) -> tuple[int, int, int, float]:
    """(input tokens, output tokens, embedding tokens, example dollars) for ``month``."""
    tokens_in = estimated_tokens(month.model_prompt_bytes)
    tokens_out = estimated_tokens(month.model_answer_bytes)
    embedded = estimated_tokens(month.embedded_bytes)
    example = (
        tokens_in / 1000 * EXAMPLE_EXTRACTION_MODEL.input_per_1k
        + tokens_out / 1000 * EXAMPLE_EXTRACTION_MODEL.output_per_1k
        + embedded / 1000 * EXAMPLE_EMBEDDING_MODEL.input_per_1k
    )
    return tokens_in, tokens_out, embedded, example


def summary(months: Sequence[tuple[Month, Month]]) -> list[str]:
    """One row per workload: cairn both ways beside AgentCore Memory, tokens apart."""
    lines = [
        "| workload | cairn, library | cairn, API | AgentCore, built-in strategies "
        "| AgentCore, self-managed | + model tokens, cairn (example price) |",
        "|---|---|---|---|---|---|",
    ]
    for library, api in months:
        w = library.workload
        built_in = sum(agentcore(library.volume, built_in=True).values())
        self_managed = sum(agentcore(library.volume, built_in=False).values())
        tokens_in, tokens_out, embedded, example = tokens_dollars(library)
        lines.append(
            f"| {_anchor('cost-' + w.key)}{w.title} | {usd(sum(dollars(library.usage).values()))}"
            f" | {usd(sum(dollars(api.usage).values()))} | {usd(built_in)} | {usd(self_managed)}"
            f" | {_count(tokens_in)} in, {_count(tokens_out)} out, {_count(embedded)} embedded"
            f" ({usd(example)}) |"
        )
    return lines


def breakdown(library: Month, api: Month) -> list[str]:
    """A workload's month: volumes, dollars per service both ways, AgentCore's lines."""
    w, v = library.workload, library.volume
    lines = [f"### {w.title}", "", *[f"- {a}" for a in w.assumptions]]
    lines += [
        f"- a month: {_count(v.messages)} messages in {_count(v.sessions)} sessions, "
        f"{_count(v.rollouts_by_count)} rollouts by message count and "
        f"{_count(v.rollouts_by_idle)} by idle timeout, {_count(v.recalls)} recalls, "
        f"{_count(v.records)} records stored",
        "",
        "| service | cairn, library | cairn, API |",
        "|---|---|---|",
    ]
    left, right = by_service(dollars(library.usage)), by_service(dollars(api.usage))
    for service in left:
        lines.append(f"| {service} | {usd(left[service])} | {usd(right[service])} |")
    lines.append(
        f"| {_anchor('cost-' + w.key + '-total')}**total** "
        f"| **{usd(sum(left.values()))}** | **{usd(sum(right.values()))}** |"
    )
    lines += ["", "| AgentCore Memory | built-in strategies | self-managed strategies |"]
    lines.append("|---|---|---|")
    built_in, self_managed = agentcore(v, built_in=True), agentcore(v, built_in=False)
    for item in built_in:
        lines.append(f"| {item} | {usd(built_in[item])} | {usd(self_managed[item])} |")
    lines.append(
        f"| **total** | **{usd(sum(built_in.values()))}** | **{usd(sum(self_managed.values()))}** |"
    )
    return [*lines, ""]


def _requests(op: Operation) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(op.tally.requests.items()))


def operations(measured: Measurements, stack: StackShape, inputs: Inputs) -> list[str]:
    """Every measured operation: requests, units, messages, Lambda time and memory."""
    lines = [
        "| operation | records held | AWS requests (observed) | RRU | WRU (table + index) "
        "| SNS / SQS requests | function: ms measured x invocations, GB-s with latencies "
        "| model calls, bytes in/out "
        "| texts embedded |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    sized = [(size, op) for size, ops in measured.by_size.items() for op in ops.values()]
    for size, op in [*sized, *((None, op) for op in measured.shared.values())]:
        t, usage = op.tally, usage_of(op, stack, inputs)
        where = "caller's process"
        if op.function is not None:
            shape = stack.functions[op.function]
            where = (
                f"{op.function} ({shape.memory_mb} MB): {op.seconds * 1000:.0f} ms x "
                f"{op.invocations}, {usage.lambda_gb_seconds:.3f} GB-s"
            )
        anchor = _anchor(f"cost-op-{op.key}" + (f"-{size}" if size is not None else ""))
        lines.append(
            f"| {anchor}{op.title} | {'-' if size is None else f'{size:,}'} | {_requests(op)} "
            f"| {t.read_units:g} | {t.write_units} + {t.index_write_units} "
            f"| {t.sns_chunks} / {t.sqs_chunks} | {where} "
            f"| {op.model.calls}, {op.model.prompt_bytes:,} / {op.model.answer_bytes:,} "
            f"| {op.embeds.calls} |"
        )
    return lines


def metrics_line(measured: Measurements) -> str:
    """The custom metrics the functions published in the runs (each billed by the month)."""
    ops = [op for ops in measured.by_size.values() for op in ops.values()]
    by_function: dict[str, set[str]] = {}
    for op in [*ops, *measured.shared.values()]:
        if op.function is not None:
            names = {m.split("/", 1)[-1].split("[", 1)[0] for m in op.metrics}
            by_function.setdefault(op.function, set()).update(names)
    listed = "; ".join(
        f"{function}: {', '.join(sorted(names)) or 'none'}"
        for function, names in sorted(by_function.items())
    )
    return f"Custom metrics the functions published (embedded metric format): {listed}."


def storage(measured: Measurements) -> list[str]:
    s = measured.storage
    rows = (
        (
            "a record (head, versions with a 1,024-float vector, live-index entry, directory)",
            s.per_record,
        ),
        (
            "an event (with its share of session and actor summaries, and its LSI entry)",
            s.per_event,
        ),
        ("a recall's journal entry", s.per_journal_entry),
        ("a consumed rollout's marker (kept 30 days)", s.per_consumed_rollout),
    )
    lines = ["| kept | bytes billed (item + index entries + 100 B each) |", "|---|---|"]
    lines += [f"| {what} | {size:,.0f} |" for what, size in rows]
    lines.append(f"\n1 GB holds about {GB / s.per_record:,.0f} records.")
    return lines


def prices() -> list[str]:
    lines = [f"Source: {SOURCE}.", "", "| price | USD | per | note |", "|---|---|---|---|"]
    for p in (*PRICES.values(), *AGENTCORE.values()):
        lines.append(f"| `{p.key}` | {p.usd:g} | {p.per:,g} {p.unit} | {p.note} |")
    for example in (EXAMPLE_EXTRACTION_MODEL, EXAMPLE_EMBEDDING_MODEL):
        lines.append(
            f"| example model `{example.model_id}` | {example.input_per_1k:g} in, "
            f"{example.output_per_1k:g} out | 1,000 tokens | an example, not a recommendation |"
        )
    return lines


def inputs_table(inputs: Inputs) -> list[str]:
    meaning = {
        "request_seconds": "seconds one AWS request takes from inside a function (billed "
        "Lambda time; moto's own time is not used: it copies tables per transaction item)",
        "model_seconds_per_call": "seconds a hosted model takes to answer an extraction "
        "prompt (billed Lambda time while the function waits)",
        "embed_seconds_per_text": "seconds one Titan v2 embedding takes",
        "platform_log_bytes": "bytes of Lambda platform records (start, report) per invocation",
        "kms_cache_seconds": "how long DynamoDB, S3, SNS and SQS reuse a KMS data key",
        "esm_pollers": "long polls an idle SQS event source mapping keeps open on its queue "
        "(AWS scales one down to 2 at low traffic)",
        "esm_pollers_capped": "the same, for a mapping with a maximum concurrency (AWS: the "
        "scale-down is not available with it)",
        "esm_wait_seconds": "the wait of each long poll (an empty receive is still a request)",
    }
    lines = ["| input | value | meaning |", "|---|---|---|"]
    lines += [f"| `{k}` | {getattr(inputs, k)} | {m} |" for k, m in meaning.items()]
    return lines


def stack_table(stack: StackShape) -> list[str]:
    lines = [
        "| function | memory | timeout | architecture | X-Ray | in the stack |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in sorted(stack.functions.items()):
        deployed = "yes" if f.deployed else "not yet: the Lambda defaults"
        traced = "active" if f.traced else "off"
        lines.append(
            f"| {name} | {f.memory_mb} MB | {f.timeout_s} s | {f.architecture} | {traced} "
            f"| {deployed} |"
        )
    lines.append(
        f"\nEncryption: {stack.encryption}. Also billed by the month: {stack.kms_keys} KMS "
        f"key(s), {stack.alarms} CloudWatch alarm(s); custom metrics "
        f"{'published' if stack.custom_metrics else 'off'}. Each rollout notice goes to "
        f"{stack.topic_subscriptions} queue(s); {stack.queue_consumers} function(s) poll a "
        f"queue, {stack.capped_consumers} of them with a maximum concurrency; "
        f"{stack.http_apis} HTTP API(s). Region: {REGION}. Embedder: `{stack.embedder}`; "
        f"extraction model: `{stack.extraction_model_id}`."
    )
    return lines


def options_table(
    defaults: Sequence[Month], options: dict[str, Sequence[Month]], stacks: dict[str, StackShape]
) -> list[str]:
    """What each stack property adds to each workload's month (library shape)."""
    lines = [
        "| option | what it adds | " + " | ".join(m.workload.title for m in defaults) + " |",
        "|---|---|" + "---|" * len(defaults),
    ]
    for option, months in options.items():
        stack = stacks[option]
        adds = (
            f"{stack.kms_keys} KMS key, its requests"
            if stack.kms_keys
            else f"{stack.alarms} alarms"
            if stack.alarms
            else f"{stack.capped_consumers} capped mappings"
            if stack.capped_consumers
            else "custom metrics"
        )
        deltas = [
            usd(sum(dollars(m.usage).values()) - sum(dollars(d.usage).values()))
            for m, d in zip(months, defaults, strict=True)
        ]
        lines.append(f"| `-c {option}` | {adds} | " + " | ".join(f"+{x}" for x in deltas) + " |")
    return lines
