"""The scheduled jobs function (``functions/jobs``): measured on the bench, scaled to a month.

Its EventBridge rule runs it every ``SCHEDULED_EVERY`` (15 minutes, 2,920 times a month), and
each run visits every memory and every actor: access counting, link generation, evolution and
decay when switched on (off by default, as measured), then the rollup of every session. So a
run costs something for each actor held, whether anything happened or not, plus the work of
what did.

Measured with the real handler on moto (``measure_jobs``), every memory's jobs caught up first
(``catch_up``: the link job paired every record already stored, and the rollup ran), so a run
with nothing new makes no model call: ``jobs-empty``, a run with nothing stored (the fixed
part); per scope size, in a memory of the size's own, ``jobs-before``, a run before the actor
exists; ``jobs-busy``, the first run after its traffic (two rollouts' records, a recall and a
retrieval journalled, a session of twelve turns: one batch of ten rolled up; the seeded records
were paired before the traffic, as a steady month has); ``jobs-idle``, a run with nothing new
after catching up again.

Composed (``jobs_month``): each run pays ``jobs-empty`` plus, per actor of the workload,
``jobs-idle`` minus ``jobs-before`` at its size: the handler's own time and requests for holding
one more actor, never a model call or its wait. Model calls are counted per memory, only for
work the workload has: a run with nothing new makes the calls ``jobs-idle`` made beyond
``jobs-before`` (none once caught up; bounded per memory by ``DEFAULT_MAX_CALLS``, never
multiplied by actors), and each batch of ten turns pays ``jobs-busy`` minus ``jobs-idle``, with
its calls (the rollup's, and the link job's for the records the traffic wrote) and their wait.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchmarks.cost_model import Usage, Volumes, Workload
from benchmarks.cost_prices import HOURS_PER_MONTH
from benchmarks.cost_scenario import ModelUse
from cairn.history.linking import DEFAULT_MAX_CALLS
from cairn.history.scheduled import SCHEDULED_EVERY

if TYPE_CHECKING:
    from benchmarks.cost_bench import Bench, Operation
    from benchmarks.cost_compose import Inputs
    from benchmarks.cost_stack import StackShape

RUNS_PER_MONTH = HOURS_PER_MONTH * 3600 / SCHEDULED_EVERY.total_seconds()
TURNS_PER_CHUNK = 10  # cairn.history.pyramid: a level-1 chunk summarises ten turns
JOBS = "jobs"


def measure_jobs(bench: Bench, key: str, title: str, repeats: int | None = None) -> Operation:
    """One handler run (or the median of ``repeats``) as ``jobs``; see the module."""
    from tests.pipeline.aws import LambdaContext

    handler = importlib.import_module("functions.jobs.handler").lambda_handler
    run = bench.runner.wrap(JOBS, handler)
    saved = bench.repeats
    bench.repeats = repeats or 1
    try:
        return bench.measure(key, title, lambda: run({}, LambdaContext(function_name="cairn-jobs")))
    finally:
        bench.repeats = saved


CATCH_UP_BUDGET = 1_000_000  # model calls and links: enough to pair every record stored


def catch_up(bench: Bench) -> ModelUse:
    """Counted into nothing: every memory's link job pairs all it has not paired yet (a steady
    month's memory has caught up long ago), then two handler runs settle the rest; returns the
    model use it took (for a busy run whose bounds left some of its traffic's work)."""
    from cairn.history.linking import run_link_job
    from cairn.history.scheduled import memory_ids

    before = dataclasses.replace(bench.model.use)
    with bench.scratch():
        for memory_id in memory_ids(bench.stores):
            run_link_job(
                bench.stores,
                bench.model,
                memory_id,
                embedder=bench.embedder.identity,
                clock=bench.clock,
                max_calls=CATCH_UP_BUDGET,
                max_links=CATCH_UP_BUDGET,
            )
        for _ in range(2):
            measure_jobs(bench, "settle", "settling")
    after = bench.model.use
    return ModelUse(
        calls=after.calls - before.calls,
        prompt_bytes=after.prompt_bytes - before.prompt_bytes,
        answer_bytes=after.answer_bytes - before.answer_bytes,
    )


def with_rest(busy: Operation, rest: ModelUse) -> Operation:
    """The busy run with the model use its traffic's work still took after it (``catch_up``)."""
    return dataclasses.replace(
        busy,
        model=ModelUse(
            calls=busy.model.calls + rest.calls,
            prompt_bytes=busy.model.prompt_bytes + rest.prompt_bytes,
            answer_bytes=busy.model.answer_bytes + rest.answer_bytes,
        ),
    )


@dataclass(frozen=True)
class JobsMonth:
    usage: Usage
    runs: float
    chunks: float
    model_calls: float
    prompt_bytes: float
    answer_bytes: float
    run_seconds: float  # one run's billed duration for the workload's actors
    timeout_seconds: float = 0.0
    run_requests: float = 0.0  # one run's AWS requests for the workload's actors
    steady_calls: float = 0.0  # model calls of a run with nothing new, per memory
    walk_seconds: float = 0.0  # of the timeout, the time a run starts actors in


def walk_seconds(timeout_s: float) -> float:
    """The part of the timeout in which a run starts actors: all but the rollup's reserve
    (``functions.jobs.handler.ROLLUP_RESERVE``)."""
    from functions.jobs.handler import ROLLUP_RESERVE

    return max(0.0, timeout_s - ROLLUP_RESERVE.total_seconds())


def _without_model(op: Operation) -> Operation:
    return dataclasses.replace(op, model=ModelUse())


def _requests(op: Operation) -> float:
    return float(sum(op.tally.requests.values()))


def jobs_month(
    workload: Workload,
    v: Volumes,
    ops: dict[str, Operation],
    fixed: Operation,
    stack: StackShape,
    inputs: Inputs,
) -> JobsMonth:
    """The jobs function's month for ``workload`` (see the module); zero without it."""
    from benchmarks.cost_compose import usage_of

    if JOBS not in stack.functions or "jobs-idle" not in ops:
        return JobsMonth(Usage(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    before, idle, busy = ops["jobs-before"], ops["jobs-idle"], ops["jobs-busy"]

    def use(op: Operation) -> Usage:
        return usage_of(_without_model(op), stack, inputs)

    # Holding an actor: the handler's own time and requests, no model call nor its wait.
    per_actor = _at_least_zero(use(idle) + use(before) * -1)
    per_chunk = _at_least_zero(use(busy) + use(idle) * -1)
    chunks = v.sessions * (workload.messages_per_session // TURNS_PER_CHUNK)
    # Per memory (the workload's one), never per actor: a caught-up run makes none.
    steady = _extra(idle.model, before.model)
    steady_calls = min(DEFAULT_MAX_CALLS, steady.calls)
    chunk = _extra(busy.model, idle.model)
    calls = RUNS_PER_MONTH * steady_calls + chunks * chunk.calls
    memory_gb = stack.functions[JOBS].memory_gb
    waiting = Usage(lambda_gb_seconds=memory_gb * calls * inputs.model_seconds_per_call)
    usage = (
        (use(fixed) + per_actor * workload.actors) * RUNS_PER_MONTH + per_chunk * chunks + waiting
    )
    run_seconds = (
        use(fixed).lambda_gb_seconds + per_actor.lambda_gb_seconds * workload.actors
    ) / memory_gb + steady_calls * inputs.model_seconds_per_call
    run_requests = _requests(fixed) + max(0.0, _requests(idle) - _requests(before)) * (
        workload.actors
    )
    steady_in, steady_out = _per_call(steady)
    return JobsMonth(
        usage=usage,
        runs=RUNS_PER_MONTH,
        chunks=chunks,
        model_calls=calls,
        prompt_bytes=RUNS_PER_MONTH * steady_calls * steady_in + chunks * chunk.prompt_bytes,
        answer_bytes=RUNS_PER_MONTH * steady_calls * steady_out + chunks * chunk.answer_bytes,
        run_seconds=run_seconds,
        timeout_seconds=float(stack.functions[JOBS].timeout_s),
        run_requests=run_requests,
        steady_calls=float(steady_calls),
        walk_seconds=walk_seconds(stack.functions[JOBS].timeout_s),
    )


def _extra(more: ModelUse, less: ModelUse) -> ModelUse:
    """What ``more`` used beyond ``less`` (never below nothing)."""
    return ModelUse(
        calls=max(0, more.calls - less.calls),
        prompt_bytes=max(0, more.prompt_bytes - less.prompt_bytes),
        answer_bytes=max(0, more.answer_bytes - less.answer_bytes),
    )


def _per_call(used: ModelUse) -> tuple[float, float]:
    """Bytes in and out per call of ``used`` (none without calls)."""
    if not used.calls:
        return 0.0, 0.0
    return used.prompt_bytes / used.calls, used.answer_bytes / used.calls


def _at_least_zero(usage: Usage) -> Usage:
    return Usage(**{f.name: max(0.0, getattr(usage, f.name)) for f in dataclasses.fields(usage)})


def jobs_lines(months: list[tuple[object, object]]) -> list[str]:
    """docs/cost.md's section on the jobs function: per workload, its runs and their cost."""
    from benchmarks.cost_compose import Month
    from benchmarks.cost_model import dollars
    from benchmarks.cost_report import usd

    lines = [
        "| workload | runs a month | one run: AWS requests | one run: billed s (model waits "
        "included) | fits the time a run starts actors in | batches rolled up | model calls "
        "(rollup and links) | jobs function, a month |",
        "|---|---|---|---|---|---|---|---|",
    ]
    over: list[str] = []
    for library, _ in months:
        assert isinstance(library, Month)
        jobs = library.jobs
        if jobs is None:
            continue
        cost = sum(dollars(jobs.usage).values())
        fits = jobs.run_seconds <= jobs.walk_seconds
        lines.append(
            f'| <a id="cost-jobs-{library.workload.key}"></a>{library.workload.title} '
            f"| {jobs.runs:,.0f} | {jobs.run_requests:,.0f} | {jobs.run_seconds:,.1f} "
            f"| {'yes' if fits else 'no'} | {jobs.chunks:,.0f} | {jobs.model_calls:,.0f} "
            f"| {usd(cost)} |"
        )
        if not fits:
            over.append(
                f"{library.workload.title}: a run needs {jobs.run_requests:,.0f} requests and "
                f"{jobs.run_seconds:,.0f} s, {jobs.run_seconds / max(1.0, jobs.walk_seconds):,.1f} "
                f"times the {jobs.walk_seconds:,.0f} s a run starts actors in (the function's "
                f"{jobs.timeout_seconds:,.0f} s timeout less the rollup's reserve for its model "
                "calls)"
            )
    if over:
        lines += ["", "**Known limit, does not fit:** " + "; ".join(over) + ". " + OVER_TEXT]
    return lines


OVER_TEXT = (
    "As built, a run starts no actor once only the rollup's reserve is left of its time (each "
    "job's run is then `partial`), and each job's next run resumes after the last actor it "
    "visited, so every actor is still reached, but only every few runs rather than every 15 "
    "minutes, and the month bills at most 2,920 runs of the timeout. The figure above is what the "
    "work would cost if it were done. What would fix it: visit only the scopes that changed "
    "since the last run (a changed-scope list written by appends and record writes), so a "
    "run's cost follows the traffic, not the actors held."
)

JOBS_TEXT = (
    "Every 15 minutes (2,920 runs a month) the jobs function (`functions/jobs`) runs access "
    "counting, link generation, and the jobs switched off by default (not in these "
    "figures), then the rollup, over every actor of every memory. Measured with the real "
    "handler on moto, every memory's jobs caught up first (the link job had paired every "
    "record already stored, as a steady month's memory has), so a run with nothing new "
    "makes no model call: a run with nothing stored (`jobs-empty`, the fixed part) and, at "
    "each size in a memory of its own, a run before the actor exists, the first run after "
    "its traffic, and a run with nothing new (`jobs-before`, `jobs-busy`, `jobs-idle` in the "
    "operations table). A month is 2,920 times `jobs-empty` plus, per actor, `jobs-idle` "
    "minus `jobs-before` at the workload's size: the handler's own time and requests for "
    "holding one more actor, with no model call or wait in it. Model calls are counted per "
    "memory and only for work the workload has: per batch of ten turns rolled up, "
    "`jobs-busy` minus `jobs-idle` (the rollup's call, and the link job's calls for the "
    "records the traffic wrote, with the function's wait for them, `model_seconds_per_call` "
    "each); a run with nothing new makes the calls `jobs-idle` made beyond `jobs-before` "
    "(none once caught up), never multiplied by actors. For many actors in one memory the "
    "per-actor part is an upper bound: it was measured as a memory of one actor, so it "
    "carries that memory's own reads. The totals above include all of it; the model's "
    "tokens are in the next section."
)
