"""The scheduled rollup on every backend skips an actor whose turns and chunks did not change
since a run left it nothing to do (its history generation, noted in the job log), says so in
the run log, and visits it again as soon as anything is appended (``cairn.history.job``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from cairn.clock import FixedClock
from cairn.errors import ModelUnavailableError
from cairn.history.job import UNCHANGED, run_rollup_job
from cairn.jobs import JobName
from cairn.model_request import ModelRequest
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.ports import Stores
from cairn.testing import ScriptedModel

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUIET = Scope(memory_id="m1", actor_id="tg-quiet")
BUSY = Scope(memory_id="m1", actor_id="tg-busy")


def talk(stores: Stores, scope: Scope, turns: int, *, start: int = 0) -> None:
    for i in range(start, start + turns):
        stores.events.append(
            scope,
            EventInput(
                session_id="s1",
                event_timestamp=T0 + timedelta(minutes=i),
                payload=(Conversational(role=Role.USER, text=f"turn {i} about bees"),),
            ),
        )


def summary(request: ModelRequest) -> str:
    return json.dumps({"points": [{"text": "they talked about bees"}]})


def sessions_listed(stores: Stores) -> list[Scope]:
    """Every scope whose sessions the rollup lists from now on (the store's own listing)."""
    listed: list[Scope] = []
    original = stores.events.list_sessions

    def counting(scope: Scope, **kwargs):  # type: ignore[no-untyped-def]
        listed.append(scope)
        return original(scope, **kwargs)

    stores.events.list_sessions = counting  # type: ignore[method-assign]
    return listed


def test_an_unchanged_actor_is_skipped_and_the_run_says_so(
    stores: Stores, clock: FixedClock
) -> None:
    talk(stores, QUIET, 12)
    talk(stores, BUSY, 5)
    first = run_rollup_job(stores, ScriptedModel([summary]), "m1", clock=clock)
    settled = run_rollup_job(stores, ScriptedModel(), "m1", clock=clock)  # notes the quiet one
    listed = sessions_listed(stores)
    clock.advance(seconds=1)  # run ids sort by start time

    idle = run_rollup_job(stores, ScriptedModel(), "m1", clock=clock)

    assert (first.changed, first.reasons) == (1, ())  # the busy one was noted already
    assert (settled.changed, settled.reasons) == (0, (f"1 actor(s) skipped: {UNCHANGED}",))
    assert listed == []  # neither actor's sessions read again
    assert (idle.outcome, idle.actors, idle.changed) == ("done", 2, 0)
    assert idle.reasons == (f"2 actor(s) skipped: {UNCHANGED}",)
    assert stores.jobs is not None
    assert stores.jobs.runs("m1", JobName.ROLLUP, limit=1) == (idle,)


def test_an_append_brings_the_actor_back(stores: Stores, clock: FixedClock) -> None:
    talk(stores, QUIET, 3)
    talk(stores, BUSY, 3)
    run_rollup_job(stores, ScriptedModel(), "m1", clock=clock)
    talk(stores, BUSY, 7, start=3)  # now a complete batch of ten
    listed = sessions_listed(stores)

    run = run_rollup_job(stores, ScriptedModel([summary]), "m1", clock=clock)

    assert listed == [BUSY]
    assert (run.outcome, run.changed) == ("done", 1)
    assert run.reasons == (f"1 actor(s) skipped: {UNCHANGED}",)
    assert stores.chunks is not None
    assert len(stores.chunks.list_chunks(BUSY, "s1", level=1)) == 1


def test_an_actor_whose_pass_stopped_early_is_visited_again(
    stores: Stores, clock: FixedClock
) -> None:
    talk(stores, BUSY, 10)
    failed = run_rollup_job(
        stores, ScriptedModel([ModelUnavailableError("down")] * 2), "m1", clock=clock
    )

    retried = run_rollup_job(stores, ScriptedModel([summary]), "m1", clock=clock)

    assert (failed.outcome, failed.changed) == ("partial", 0)
    assert (retried.outcome, retried.changed) == ("done", 1)
