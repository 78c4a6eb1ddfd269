"""Every job's walk over a memory's actors on every backend: it resumes after the last actor
it visited and wraps around, so a run bound to N actors reaches all 3N in three runs
(``cairn.history.job_runs``)."""

from __future__ import annotations

from datetime import timedelta

from cairn.clock import FixedClock
from cairn.history.access import run_access_job
from cairn.history.job_runs import ACTORS_LEFT, Countdown, start_run
from cairn.jobs import JobName
from cairn.models import Scope
from cairn.ports import Stores
from tests.conformance.samples import create

N = 3
ACTORS = [f"actor-{i:02d}" for i in range(3 * N)]


def held(stores: Stores) -> None:
    for actor_id in ACTORS:
        create(stores, f"fact of {actor_id}", scope=Scope(memory_id="m1", actor_id=actor_id))


def walk(
    stores: Stores, clock: FixedClock, job: JobName, budget: int, held: int = len(ACTORS)
) -> list[str]:
    """One run of ``job``'s walk that visits at most ``budget`` actors; the actors visited."""
    tally = start_run(job, "m1", clock)
    left = Countdown(budget)
    visited = []
    for scope in tally.scopes(stores, "m1", left.spent):
        visited.append(scope.actor_id)
        left.take(1)
    assert tally.actors == len(visited)
    assert tally.reasons[ACTORS_LEFT] == held - len(visited)
    return visited


def test_three_runs_of_n_actors_visit_each_of_3n_actors_once(
    stores: Stores, clock: FixedClock
) -> None:
    held(stores)

    runs = [walk(stores, clock, JobName.LINK, N) for _ in range(3)]
    fourth = walk(stores, clock, JobName.LINK, N)

    assert sorted(actor for run in runs for actor in run) == ACTORS
    assert [len(run) for run in runs] == [N, N, N]
    assert fourth == runs[0]  # wrapped round to the first again


def test_each_job_walks_on_its_own_and_a_new_actor_is_reached(
    stores: Stores, clock: FixedClock
) -> None:
    held(stores)

    linked = walk(stores, clock, JobName.LINK, N)
    counted = walk(stores, clock, JobName.ACCESS, 2 * N)
    create(stores, "a late fact", scope=Scope(memory_id="m1", actor_id="actor-00a"))
    next_linked = walk(stores, clock, JobName.LINK, N, held=len(ACTORS) + 1)
    round_to = walk(stores, clock, JobName.LINK, N + 2, held=len(ACTORS) + 1)

    assert linked == ACTORS[:N]
    assert counted == ACTORS[: 2 * N]  # the link job's walk did not move the access job's
    assert next_linked == ACTORS[N : 2 * N]
    assert round_to == [*ACTORS[2 * N :], "actor-00", "actor-00a"]


def test_a_run_starts_no_actor_once_its_time_is_up(stores: Stores, clock: FixedClock) -> None:
    held(stores)
    clock.advance(seconds=1)

    late = run_access_job(stores, "m1", clock=clock, until=clock.now() - timedelta(seconds=1))
    on_time = run_access_job(stores, "m1", clock=clock, until=clock.now() + timedelta(hours=1))

    assert (late.outcome, late.actors) == ("partial", 0)
    assert any(ACTORS_LEFT in reason for reason in late.reasons)
    assert (on_time.outcome, on_time.actors) == ("done", len(ACTORS))
