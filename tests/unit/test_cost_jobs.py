"""The scheduled jobs function's month (benchmarks/cost_jobs.py): 2,920 runs, each paying the
fixed part and a share per actor held (the handler's own time and requests, never a model call
or its wait); rolled-up batches paying the busy run's extra with its calls; model calls of a run
with nothing new counted per memory, never multiplied by actors. No AWS, no moto."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from benchmarks.cost_bench import Operation
from benchmarks.cost_compose import Inputs
from benchmarks.cost_jobs import RUNS_PER_MONTH, jobs_month
from benchmarks.cost_meter import Tally
from benchmarks.cost_model import Workload, volumes
from benchmarks.cost_scenario import ModelUse
from benchmarks.cost_stack import FunctionShape
from tests.unit.test_cost_stack_shape import shape

STACK = shape(
    functions={"jobs": FunctionShape(1024, 600, "arm64", deployed=True, traced=True)},
)
INPUTS = Inputs(request_seconds=0.0, model_seconds_per_call=2.0)


def run(key: str, reads: float, calls: int = 0, seconds: float = 0.1) -> Operation:
    return Operation(
        key=key,
        title=key,
        tally=Tally(requests=Counter({"dynamodb.Query": int(reads // 10)}), read_units=reads),
        function="jobs",
        invocations=1,
        seconds=seconds,
        model=ModelUse(calls=calls, prompt_bytes=1000 * calls, answer_bytes=10 * calls),
    )


OPS = {
    "jobs-before": run("jobs-before", 30, calls=1),
    "jobs-idle": run("jobs-idle", 130, calls=9, seconds=0.2),
    "jobs-busy": run("jobs-busy", 180, calls=10, seconds=0.3),
}
FIXED = run("jobs-empty", 10)
ONE = Workload("one", "one user", 1, 1.0, 5, 10, 5, 1000)


def test_a_month_is_2920_runs_of_the_fixed_part_and_each_actors_share() -> None:
    found = jobs_month(ONE, volumes(ONE), OPS, FIXED, STACK, INPUTS)
    many = dataclasses.replace(ONE, actors=100)
    scaled = jobs_month(many, volumes(many), OPS, FIXED, STACK, INPUTS)

    assert RUNS_PER_MONTH == 2920
    chunks = volumes(ONE).sessions  # ten messages a session: one batch each
    assert found.chunks == pytest.approx(chunks)
    assert found.usage.dynamodb_rru == pytest.approx(2920 * (10 + 100) + chunks * 50)
    assert found.usage.lambda_invocations == pytest.approx(2920)
    assert scaled.usage.dynamodb_rru == pytest.approx(2920 * (10 + 100 * 100) + 100 * chunks * 50)
    assert scaled.usage.lambda_invocations == pytest.approx(2920)  # one run serves every actor


def test_an_actors_share_holds_no_model_wait_and_steady_calls_are_per_memory() -> None:
    # jobs-idle made 2 calls more than jobs-before (a memory's, e.g. a backlog): counted once a
    # run for the memory, with their wait, never once per actor.
    ops = {
        "jobs-before": run("jobs-before", 30, calls=1, seconds=0.1),
        "jobs-idle": run("jobs-idle", 130, calls=3, seconds=0.2),
        "jobs-busy": run("jobs-busy", 180, calls=5, seconds=0.3),
    }
    many = dataclasses.replace(ONE, actors=10_000)
    found = jobs_month(many, volumes(many), ops, FIXED, STACK, INPUTS)

    chunks = volumes(many).sessions
    assert found.model_calls == pytest.approx(2920 * 2 + chunks * 2)
    own = 2920 * (0.1 + 10_000 * 0.1) + chunks * 0.1  # handler time: fixed, per actor, per batch
    waited = (2920 * 2 + chunks * 2) * 2.0  # model waits: per memory and per batch only
    assert found.usage.lambda_gb_seconds == pytest.approx(own + waited, rel=1e-6)
    assert found.run_seconds == pytest.approx(0.1 + 10_000 * 0.1 + 2 * 2.0, rel=1e-6)
    assert found.run_requests == pytest.approx(1 + 10_000 * (13 - 3))  # fixed, then per actor
    assert found.steady_calls == 2
    assert found.walk_seconds == pytest.approx(600 - (8 * 45 + 30))  # less the rollup's reserve


def test_steady_model_calls_are_bounded_per_memory_not_multiplied_by_actors() -> None:
    many = dataclasses.replace(ONE, actors=10_000)
    one = jobs_month(ONE, volumes(ONE), OPS, FIXED, STACK, INPUTS)
    found = jobs_month(many, volumes(many), OPS, FIXED, STACK, INPUTS)

    assert one.model_calls == pytest.approx(2920 * 8 + volumes(ONE).sessions * 1)
    assert found.model_calls == pytest.approx(2920 * 8 + volumes(many).sessions * 1)
    assert found.prompt_bytes == pytest.approx(2920 * 8 * 1000 + volumes(many).sessions * 1000)
    waited = 2920 * 8 * 2.0 + volumes(ONE).sessions * 2.0
    assert one.usage.lambda_gb_seconds == pytest.approx(
        2920 * (0.1 + 0.1) + 152.08 * 0.1 + waited, rel=1e-3
    )


def test_a_stack_without_the_jobs_function_costs_nothing_for_it() -> None:
    found = jobs_month(ONE, volumes(ONE), OPS, FIXED, shape(), INPUTS)

    assert (found.runs, found.model_calls, found.usage.lambda_invocations) == (0.0, 0.0, 0.0)
