"""The rollup's walk over a memory's actors on every backend: a run cut short by its time
leaves the later actors to the next run, which starts after the last actor the cut run started
(``cairn.history.job``), so no actor is behind the time limit on every run."""

from __future__ import annotations

from datetime import timedelta

from cairn.clock import FixedClock
from cairn.history.job import run_rollup_job
from cairn.model_request import ModelRequest
from cairn.models import Scope
from cairn.ports import Stores
from cairn.testing import ScriptedModel
from tests.conformance.test_rollup_job_skips import sessions_listed, summary, talk

ACTORS = [Scope(memory_id="m1", actor_id=f"tg-{i}") for i in range(6)]


def slow_model(clock: FixedClock, calls: int) -> ScriptedModel:
    """Answers ``calls`` summaries, each taking a minute of ``clock``."""

    def answer(request: ModelRequest) -> str:
        clock.advance(seconds=60)
        return summary(request)

    return ScriptedModel([answer] * calls)


def test_a_run_cut_by_its_time_leaves_the_later_actors_to_the_next_run(
    stores: Stores, clock: FixedClock
) -> None:
    for scope in ACTORS:
        talk(stores, scope, 10)  # one batch of ten turns each: one call
    listed = sessions_listed(stores)

    first = run_rollup_job(
        stores, slow_model(clock, 3), "m1", clock=clock, until=clock.now() + timedelta(seconds=150)
    )
    started_first = list(dict.fromkeys(listed))
    listed.clear()
    second = run_rollup_job(  # time for three calls, and the looks at the first three after
        stores, slow_model(clock, 3), "m1", clock=clock, until=clock.now() + timedelta(seconds=200)
    )

    assert (first.outcome, first.changed) == ("partial", 3)
    assert started_first[:3] == ACTORS[:3]
    assert listed[0] == ACTORS[3]  # resumed after the last actor the cut run started
    assert (second.outcome, second.changed) == ("done", 3)
    for scope in ACTORS:
        assert stores.chunks is not None
        assert stores.chunks.list_chunks(scope, "s1", level=1), scope
