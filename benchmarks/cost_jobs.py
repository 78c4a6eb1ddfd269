"""The scheduled jobs function (``functions/jobs``): measured on the bench, scaled to a month.

Its EventBridge rule runs it every ``SCHEDULED_EVERY`` (15 minutes, 2,920 times a month), and
each run visits every memory and every actor: access counting, link generation (which reads an
actor's records with their vectors and pairs them, every run, until the memory's budget of
model calls is spent), evolution and decay when switched on (off by default, as measured),
then the rollup of every session. So a run costs something for each actor held, whether
anything happened or not, plus the work of what did.

Measured with the real handler on moto (``measure_jobs``): ``jobs-empty``, a run with nothing
stored (the fixed part); per scope size, in a memory of the size's own, ``jobs-before``, a
steady run before the actor exists; ``jobs-busy``, the first run after its traffic (two
rollouts' records, a recall and a retrieval journalled, a session of twelve turns: one batch of
ten rolled up); ``jobs-idle``, a run with nothing new.

Composed (``jobs_month``): each run pays ``jobs-empty`` plus, per actor of the workload,
``jobs-idle`` minus ``jobs-before`` at its size (its memory's one actor, without the model's
time); each batch of ten turns rolled up pays ``jobs-busy`` minus ``jobs-idle``. Model calls of
a run with nothing new are bounded per
memory (``DEFAULT_MAX_CALLS``): the size's memory's, not multiplied by actors.
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


def settle_jobs(bench: Bench) -> None:
    """Runs counted into nothing, until the next one has nothing new (a steady state)."""
    with bench.scratch():
        for _ in range(2):
            measure_jobs(bench, "settle", "settling")


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


def _without_model(op: Operation) -> Operation:
    return dataclasses.replace(op, model=ModelUse())


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

    per_actor = _at_least_zero(use(idle) + use(before) * -1)
    per_chunk = _at_least_zero(use(busy) + use(idle) * -1)
    chunks = v.sessions * (workload.messages_per_session // TURNS_PER_CHUNK)
    steady_calls = min(DEFAULT_MAX_CALLS, max(0, idle.model.calls - before.model.calls))
    chunk_calls = max(0, busy.model.calls - idle.model.calls)
    calls = RUNS_PER_MONTH * steady_calls + chunks * chunk_calls
    memory_gb = stack.functions[JOBS].memory_gb
    waiting = Usage(lambda_gb_seconds=memory_gb * calls * inputs.model_seconds_per_call)
    usage = (
        (use(fixed) + per_actor * workload.actors) * RUNS_PER_MONTH + per_chunk * chunks + waiting
    )
    run_seconds = (
        use(fixed).lambda_gb_seconds + per_actor.lambda_gb_seconds * workload.actors
    ) / memory_gb + steady_calls * inputs.model_seconds_per_call
    steady = ModelUse(
        calls=idle.model.calls - before.model.calls,
        prompt_bytes=idle.model.prompt_bytes - before.model.prompt_bytes,
        answer_bytes=idle.model.answer_bytes - before.model.answer_bytes,
    )
    steady_in, steady_out = _per_call(steady)
    return JobsMonth(
        usage=usage,
        runs=RUNS_PER_MONTH,
        chunks=chunks,
        model_calls=calls,
        prompt_bytes=RUNS_PER_MONTH * steady_calls * steady_in
        + chunks * max(0, busy.model.prompt_bytes - idle.model.prompt_bytes),
        answer_bytes=RUNS_PER_MONTH * steady_calls * steady_out
        + chunks * max(0, busy.model.answer_bytes - idle.model.answer_bytes),
        run_seconds=run_seconds,
        timeout_seconds=float(stack.functions[JOBS].timeout_s),
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
        "| workload | runs a month | one run (billed s, model waits included) | batches rolled "
        "up | model calls (rollup and links) | jobs function, a month |",
        "|---|---|---|---|---|---|",
    ]
    over: list[str] = []
    for library, _ in months:
        assert isinstance(library, Month)
        jobs = library.jobs
        if jobs is None:
            continue
        cost = sum(dollars(jobs.usage).values())
        lines.append(
            f'| <a id="cost-jobs-{library.workload.key}"></a>{library.workload.title} '
            f"| {jobs.runs:,.0f} | {jobs.run_seconds:,.1f} | {jobs.chunks:,.0f} "
            f"| {jobs.model_calls:,.0f} | {usd(cost)} |"
        )
        if jobs.run_seconds > jobs.timeout_seconds:
            over.append(
                f"{library.workload.title}: a run needs {jobs.run_seconds:,.0f} s, "
                f"{jobs.run_seconds / jobs.timeout_seconds:,.0f} times the function's "
                f"{jobs.timeout_seconds:,.0f} s timeout"
            )
    if over:
        lines += [
            "",
            "**Does not fit:** " + "; ".join(over) + ". As built, such a run stops at its "
            "timeout; the figure is what the work would cost if it were done.",
        ]
    return lines


JOBS_TEXT = (
    "Every 15 minutes (2,920 runs a month) the jobs function (`functions/jobs`) runs access "
    "counting, link generation, and the jobs switched off by default (not in these "
    "figures), then the rollup, over every actor of every memory. Measured with the real "
    "handler on moto: a run with nothing stored (`jobs-empty`, the fixed part) and, at each "
    "size in a memory of its own, a run before the actor exists, the first run after its "
    "traffic, and a run with nothing new (`jobs-before`, `jobs-busy`, `jobs-idle` in the "
    "operations table). A month is 2,920 times `jobs-empty` plus, per actor, `jobs-idle` "
    "minus `jobs-before` at the workload's size (what holding the actor costs each run, as "
    "measured), plus, per batch of ten turns rolled up, `jobs-busy` minus `jobs-idle`. A "
    "run with nothing new still made model calls on the bench (the operations table; which "
    "job made them is not broken down here): those of the size's memory (at most 8 a run "
    "per memory, not multiplied by actors) and the function's wait for them "
    "(`model_seconds_per_call` each) are in the month. For many actors in one memory the "
    "per-actor part is an upper bound: it was measured as a memory of one actor, so it "
    "carries that memory's own reads. The totals above include all of it; the model's "
    "tokens are in the next section."
)
