"""The rollup in the embedded worker: passes in the background when triggers fire, coalesced,
switchable, logged; the embedded system rolls a conversation up before it closes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.history.worker import RollupWorker
from cairn.jobs import JobName, JobSwitches
from cairn.local import offline_model
from cairn.local.system import open_embedded
from cairn.model_request import ModelRequest
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.store.memory import InMemoryBackend
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import ScriptedModel

SCOPE = Scope(memory_id="default", actor_id="tg:7")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def turn(i: int) -> EventInput:
    return EventInput(
        session_id="s1",
        event_timestamp=T0 + timedelta(minutes=i),
        payload=(Conversational(role=Role.USER, text=f"We moved hive {i} to the orchard."),),
    )


def summary(request: ModelRequest) -> str:
    return json.dumps({"points": [{"text": "they moved hives"}]})


def test_requests_run_in_the_background_and_a_repeat_is_folded_into_one_more_pass() -> None:
    stores = InMemoryBackend(FixedClock(T0)).stores()
    for i in range(20):
        stores.events.append(SCOPE, turn(i))
    worker = RollupWorker(stores, ScriptedModel([summary] * 2), clock=FixedClock(T0))
    worker.request(SCOPE, "s1")  # not started: dropped, never an error
    worker.start()

    for _ in range(3):
        worker.request(SCOPE, "s1")
    worker.stop()

    assert stores.chunks is not None
    assert len(stores.chunks.list_chunks(SCOPE, "s1")) == 2
    assert stores.jobs is not None
    runs = stores.jobs.runs("default", JobName.ROLLUP)
    assert sum(r.changed for r in runs) == 2
    assert {r.outcome for r in runs} == {"done"}


def test_a_memory_that_switched_the_rollup_off_is_not_rolled_up() -> None:
    stores = InMemoryBackend(FixedClock(T0)).stores()
    for i in range(10):
        stores.events.append(SCOPE, turn(i))
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id="default").switched(JobName.ROLLUP, False))
    worker = RollupWorker(stores, ScriptedModel(), clock=FixedClock(T0))
    worker.start()

    worker.request(SCOPE, "s1")
    worker.stop()

    assert stores.chunks is not None
    assert stores.chunks.list_chunks(SCOPE, "s1") == ()
    assert stores.jobs.runs("default", JobName.ROLLUP) == ()


def test_the_embedded_system_rolls_a_conversation_up_before_it_closes(tmp_path: Path) -> None:
    clock = FixedClock(T0)
    path = tmp_path / "cairn.db"
    embedded = open_embedded(path, model=offline_model(), embedder=HashingEmbedder(), clock=clock)
    for i in range(24):
        embedded.append(SCOPE, turn(i))
        clock.advance(seconds=30)
    embedded.close()

    with SQLiteBackend(path, clock) as reopened:
        chunks = reopened.stores().chunks
        assert chunks is not None
        assert [(c.from_seq, c.to_seq) for c in chunks.list_chunks(SCOPE, "s1")] == [
            (1, 10),
            (11, 20),
        ]


def test_after_a_pass_the_worker_runs_the_scheduled_jobs_once_per_interval() -> None:
    from cairn.changes import Create, NewRecord, Vector
    from cairn.models import EmbedderId, JournalEntry, SelectedEntry, Source, SourceKind

    clock = FixedClock(T0)
    stores = InMemoryBackend(clock).stores()
    space = EmbedderId(model_id="worker-test", dims=2)
    written = [
        stores.records.apply(
            SCOPE,
            [
                Create(
                    record=NewRecord(
                        namespace="/facts/tg:7/",
                        content=text,
                        sources=(Source(kind=SourceKind.USER),),
                        entities=("hive",),
                        vector=Vector(embedder=space, values=(1.0, shift)),
                    )
                )
            ],
        )[0]
        for text, shift in (("The hive is in the orchard", 0.0), ("The hive has bees", 0.1))
    ]
    stores.journal.put(
        JournalEntry(
            journal_id="jr-1",
            memory_id=SCOPE.memory_id,
            actor_id=SCOPE.actor_id,
            created_at=T0,
            query="hive",
            selected=(
                SelectedEntry(
                    record_id=written[0].record_id,
                    version=1,
                    content_digest=written[0].content_digest,
                    score=0.9,
                ),
            ),
            block_digest="0" * 64,
        )
    )
    for i in range(10):
        stores.events.append(SCOPE, turn(i))
    worker = RollupWorker(stores, offline_model(), clock=clock, embedder=space)
    worker.start()

    worker.request(SCOPE, "s1")
    worker.drain()
    worker.request(SCOPE, "s1")  # within the interval: the jobs do not run again
    worker.stop()

    assert stores.access is not None
    assert stores.links is not None
    assert stores.jobs is not None
    assert stores.access.counts(SCOPE) == {written[0].record_id: 1}
    assert len(stores.links.links_of(SCOPE, written[0].record_id)) == 1
    assert len(stores.jobs.runs("default", JobName.ACCESS)) == 1
    assert len(stores.jobs.runs("default", JobName.LINK)) == 1


def test_the_embedded_worker_reflects_with_the_systems_embedder_once_switched_on(
    tmp_path: Path,
) -> None:
    from cairn.changes import Create, NewRecord, Vector
    from cairn.models import Source, SourceKind
    from cairn.reflection_records import REFLECTION_STRATEGY

    clock = FixedClock(T0)
    embedder = HashingEmbedder()
    embedded = open_embedded(
        tmp_path / "cairn.db", model=offline_model(), embedder=embedder, clock=clock
    )
    assert embedded.stores.jobs is not None
    embedded.stores.jobs.set_switches(
        JobSwitches(memory_id="default").switched(JobName.REFLECTION, True)
    )
    texts = ["The hive stands in the orchard", "The hive stands in the orchard now"]
    for text, row in zip(texts, embedder.embed(texts), strict=True):
        record = NewRecord(
            namespace="/facts/tg:7/",
            content=text,
            sources=(Source(kind=SourceKind.USER),),
            entities=("hive",),
            vector=Vector(embedder=embedder.identity, values=tuple(float(v) for v in row)),
        )
        embedded.stores.records.apply(SCOPE, [Create(record=record)])
    for i in range(12):
        embedded.append(SCOPE, turn(i))
        clock.advance(seconds=30)
    embedded.close()

    with SQLiteBackend(tmp_path / "cairn.db", clock) as reopened:
        stores = reopened.stores()
        heads = stores.records.list_records(SCOPE, limit=100).items
        made = [r for r in heads if r.strategy == REFLECTION_STRATEGY]
        assert stores.jobs is not None
        (run,) = stores.jobs.runs("default", JobName.REFLECTION)
    assert run.changed >= 1
    assert made
    assert all(r.embedding == embedder.identity for r in made)
