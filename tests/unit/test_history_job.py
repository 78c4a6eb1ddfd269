"""The rollup job: every actor of a memory, its switch honoured, every run logged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.errors import ModelUnavailableError
from cairn.history.job import run_rollup_job
from cairn.jobs import JobName, JobSwitches
from cairn.model_request import ModelRequest
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.ports import Stores
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import ScriptedModel

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    opened = SQLiteBackend(tmp_path / "cairn.db", FixedClock(T0)).stores()
    yield opened
    opened.close()


def talk(stores: Stores, actor: str, turns: int) -> None:
    for i in range(turns):
        stores.events.append(
            Scope(memory_id="m1", actor_id=actor),
            EventInput(
                session_id="s1",
                event_timestamp=T0 + timedelta(minutes=i),
                payload=(Conversational(role=Role.USER, text=f"turn {i} about bees"),),
            ),
        )


def summary(request: ModelRequest) -> str:
    return json.dumps({"points": [{"text": "they talked about bees"}]})


def test_a_run_rolls_up_every_actor_and_is_logged(stores: Stores) -> None:
    talk(stores, "tg:1", 20)
    talk(stores, "tg:2", 10)

    run = run_rollup_job(stores, ScriptedModel([summary] * 3), "m1", clock=FixedClock(T0))

    assert (run.outcome, run.actors, run.changed, run.reasons) == ("done", 2, 3, ())
    assert stores.jobs is not None
    assert stores.jobs.runs("m1", JobName.ROLLUP) == (run,)


def test_a_memory_that_switched_the_rollup_off_is_skipped_and_says_why(stores: Stores) -> None:
    talk(stores, "tg:1", 10)
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id="m1").switched(JobName.ROLLUP, False))

    run = run_rollup_job(stores, ScriptedModel(), "m1", clock=FixedClock(T0))

    assert run.outcome == "skipped"
    assert run.reasons == ("the rollup is switched off for this memory",)
    assert stores.chunks is not None
    assert stores.chunks.chunk_sessions(Scope(memory_id="m1", actor_id="tg:1")) == ()
    assert stores.jobs.runs("m1", JobName.ROLLUP) == (run,)


def test_a_model_outage_makes_a_partial_run_with_counted_reasons(stores: Stores) -> None:
    talk(stores, "tg:1", 20)
    talk(stores, "tg:2", 10)
    model = ScriptedModel([summary, ModelUnavailableError("throttled"), summary])

    run = run_rollup_job(stores, model, "m1", clock=FixedClock(T0))

    assert (run.outcome, run.changed) == ("partial", 2)
    assert len(run.reasons) == 1
    assert run.reasons[0].startswith("1 session(s): the model failed")
    assert "bees" not in run.reasons[0]
