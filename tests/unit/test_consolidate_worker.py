"""The deferred worker's rules, driven deterministically: an injected clock and executor, no
sleeps. Bounded admission, at most min(4, capacity) passes, never two on one scope, a 200 ms
coalescing window, full batches that yield, follow-ups, one retry after 5 s, and a shutdown
that cancels and joins."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.consolidate.commit import PassOutcome, PassStatus
from cairn.consolidate.failures import ConsolidationFailure
from cairn.consolidate.schedule import PassScheduler
from cairn.consolidate.worker import ConsolidationWorker, consolidation_worker
from cairn.errors import InvalidInputError, StoreUnavailableError
from cairn.models import Scope
from cairn.rollout.payload import RolloutNotice
from tests.unit.consolidation_support import (
    SCOPE,
    Bench,
    ManualExecutor,
    SynchronousExecutor,
    answer,
)

WINDOW = timedelta(milliseconds=200)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def scope(n: int) -> Scope:
    return Scope(memory_id="default", actor_id=f"tg:{n}")


def outcome(on: Scope, status: PassStatus = "committed", *, more: bool = False) -> PassOutcome:
    return PassOutcome(
        memory_id=on.memory_id,
        actor_id=on.actor_id,
        status=status,
        more_pending=more,
        started_at=T0,
    )


class Passes:
    """A ``run_pass`` that records each call and answers from a per-scope script."""

    def __init__(self) -> None:
        self.calls: list[Scope] = []
        self.script: dict[Scope, list[PassOutcome]] = {}

    def __call__(self, on: Scope, cancelled: Callable[[], bool]) -> PassOutcome:
        self.calls.append(on)
        queued = self.script.get(on)
        return queued.pop(0) if queued else outcome(on)


def worker(
    passes: Passes, clock: FixedClock, executor: object, *, capacity: int = 16, **kwargs: object
) -> ConsolidationWorker:
    return ConsolidationWorker(
        passes,
        clock=clock,
        capacity=capacity,
        executor=executor,  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


def test_capacity_bounds_admitted_scopes_counting_running_passes(clock: FixedClock) -> None:
    manual = ManualExecutor()
    found = worker(Passes(), clock, manual, capacity=2)
    assert found.notify(scope(1))
    assert found.notify(scope(2))
    clock.advance(WINDOW)
    found.run_once()  # both running now, still admitted

    assert not found.notify(scope(3))
    with pytest.raises(StoreUnavailableError):
        found.notifier.announce(RolloutNotice.of(scope(3), "ev-1", "rollouts/x/ev-1"))
    assert found.notify(scope(1))  # a running scope takes a follow-up, not a new place
    manual.run()  # scope 1 ends and is queued again for its follow-up: still admitted
    assert found.scheduler.queued == (scope(1),)
    assert not found.notify(scope(3))
    manual.run()  # scope 2 ends: a place frees up
    assert found.notify(scope(3))


def test_a_capacity_below_one_is_refused() -> None:
    with pytest.raises(InvalidInputError):
        PassScheduler(capacity=0)


def test_at_most_four_passes_run_at_once_and_never_two_on_one_scope(clock: FixedClock) -> None:
    manual = ManualExecutor()
    found = worker(Passes(), clock, manual, capacity=16)
    for n in range(6):
        found.notify(scope(n))
    clock.advance(WINDOW)

    found.run_once()
    assert manual.scopes == [scope(n) for n in range(4)]

    found.notify(scope(0))  # arrives during its pass: a follow-up, not a second pass
    found.run_once()
    assert len(manual.held) == 4

    manual.run(0)  # scope 0 finishes; its follow-up queues behind scopes 4 and 5
    found.run_once()
    assert manual.scopes == [scope(1), scope(2), scope(3), scope(4)]
    assert found.scheduler.queued == (scope(5), scope(0))


def test_a_small_capacity_runs_fewer_passes_at_once(clock: FixedClock) -> None:
    manual = ManualExecutor()
    found = worker(Passes(), clock, manual, capacity=2)
    found.notify(scope(1))
    found.notify(scope(2))
    clock.advance(WINDOW)

    found.run_once()

    assert found.scheduler.concurrency == 2
    assert len(manual.held) == 2


def test_nearby_notifications_coalesce_into_one_pass_after_200_ms(clock: FixedClock) -> None:
    passes = Passes()
    found = worker(passes, clock, SynchronousExecutor())
    found.notify(SCOPE)
    clock.advance(milliseconds=120)
    found.notify(SCOPE)
    clock.advance(milliseconds=79)

    assert found.run_once() == []  # 199 ms after the first: not yet

    clock.advance(milliseconds=1)
    assert [(o.memory_id, o.actor_id) for o in found.run_once()] == [
        (SCOPE.memory_id, SCOPE.actor_id)
    ]
    assert passes.calls == [SCOPE]


def test_a_new_notification_never_postpones_work_already_queued(clock: FixedClock) -> None:
    passes = Passes()
    found = worker(passes, clock, SynchronousExecutor())
    found.notify(scope(1))
    clock.advance(milliseconds=150)
    found.notify(scope(2))
    found.notify(scope(1))
    clock.advance(milliseconds=50)

    found.run_once()

    assert passes.calls == [scope(1)]  # on its own time; scope 2's window runs on
    clock.advance(milliseconds=150)
    found.run_once()
    assert passes.calls == [scope(1), scope(2)]


def test_full_batches_yield_to_waiting_scopes_until_the_backlog_drains(clock: FixedClock) -> None:
    passes = Passes()
    busy = scope(1)
    passes.script[busy] = [outcome(busy, more=True), outcome(busy, more=True), outcome(busy)]
    found = worker(passes, clock, SynchronousExecutor(), capacity=1)
    found.notify(busy)
    clock.advance(WINDOW)

    found.run_once()
    assert found.scheduler.queued == (busy,)  # more may wait: back in the queue
    assert not found.notify(scope(2))  # capacity 1: the busy scope is still admitted
    found.run_once()
    found.run_once()

    assert passes.calls == [busy, busy, busy]
    assert found.scheduler.admitted == 0


def test_a_full_batch_goes_behind_the_scopes_already_waiting(clock: FixedClock) -> None:
    manual = ManualExecutor()
    passes = Passes()
    busy = scope(1)
    passes.script[busy] = [outcome(busy, more=True)]
    found = worker(passes, clock, manual, capacity=1 + 4)
    for n in range(1, 6):
        found.notify(scope(n))
    clock.advance(WINDOW)
    found.run_once()  # scopes 1-4 run, scope 5 waits

    manual.run(0)  # scope 1 consumed a full batch

    assert found.scheduler.queued == (scope(5), busy)


def test_a_deadline_failure_is_retried_once_after_5_seconds(clock: FixedClock) -> None:
    passes = Passes()
    errors: list[ConsolidationFailure] = []
    passes.script[SCOPE] = [outcome(SCOPE, "timeout"), outcome(SCOPE, "timeout")]
    found = worker(passes, clock, SynchronousExecutor(), on_error=errors.append)
    found.notify(SCOPE)
    clock.advance(WINDOW)
    found.run_once()

    clock.advance(seconds=4.9)
    found.run_once()
    assert passes.calls == [SCOPE]
    clock.advance(seconds=0.1)
    found.run_once()
    assert passes.calls == [SCOPE, SCOPE]

    clock.advance(seconds=60)
    found.run_once()
    assert passes.calls == [SCOPE, SCOPE]  # the second timeout waits for a later run
    assert [(e.stage, e.error) for e in errors] == [("pass", "timeout")]
    assert found.scheduler.admitted == 0


def test_an_error_raised_by_a_pass_is_reported_and_the_worker_goes_on(clock: FixedClock) -> None:
    errors: list[ConsolidationFailure] = []

    def broken(on: Scope, cancelled: Callable[[], bool]) -> PassOutcome:
        if on == scope(1):
            raise RuntimeError("a bug")
        return outcome(on)

    found = ConsolidationWorker(
        broken, clock=clock, executor=SynchronousExecutor(), on_error=errors.append
    )
    found.notify(scope(1))
    found.notify(scope(2))
    clock.advance(WINDOW)

    done = found.run_once()

    assert [(o.memory_id, o.actor_id) for o in done] == [("default", "tg:2")]
    assert [(e.scope, e.error, e.retryable) for e in errors] == [(scope(1), "RuntimeError", False)]


def test_a_drained_worker_has_nothing_to_wake_for(clock: FixedClock) -> None:
    found = worker(Passes(), clock, SynchronousExecutor())
    found.notify(SCOPE)
    clock.advance(WINDOW)
    found.run_once()

    # The loop waits on its condition without a timeout when this is None: no polling.
    assert found.scheduler.next_ready() is None
    assert found.scheduler.admitted == 0


def test_the_thread_runs_passes_and_drain_waits_for_them(clock: FixedClock) -> None:
    passes = Passes()
    found = ConsolidationWorker(passes, clock=clock, window=timedelta(0))
    found.start()
    try:
        found.notify(scope(1))
        found.notify(scope(2))
        assert found.drain(timeout=30)
    finally:
        found.stop()

    assert sorted(passes.calls, key=str) == [scope(1), scope(2)]


def test_shutdown_cancels_and_joins_the_running_pass_and_keeps_the_evidence(
    tmp_path: Path,
) -> None:
    bench = Bench(tmp_path)
    run = bench.run("I prefer tea.")
    started, release = threading.Event(), threading.Event()

    def held(request: object) -> str:
        started.set()
        release.wait()
        return answer({"kind": "add", "content": "The user prefers tea.", "evidence": [1]})

    bench.model.queue(held)
    found = consolidation_worker(bench.consolidator())
    found.notify(SCOPE)
    bench.clock.advance(WINDOW)
    found.run_once()  # submitted to the worker's thread pool
    assert started.wait(timeout=30)

    stopper = threading.Thread(target=found.stop)
    stopper.start()
    release.set()
    stopper.join()

    (done,) = found.outcomes
    assert done.status == "cancelled"
    assert bench.live() == []
    assert bench.pending() == [run.rollout_id]
    assert not found.notify(SCOPE)  # stopped: the evidence waits in the store


def test_background_usage_is_summed_apart_from_the_agent(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.run("I prefer tea.")
    bench.model.queue(answer())
    found = consolidation_worker(bench.consolidator(), executor=SynchronousExecutor())
    found.notify(SCOPE)
    bench.clock.advance(WINDOW)

    (done,) = found.run_once()

    assert done.status == "committed"
    assert found.usage.calls == 1
    assert found.usage.input_tokens > 0
