"""Evolution on every backend: a record's tags refreshed from its linked neighbours as a new
version whose sources include theirs, only where every such source may change it, never its
content (``cairn.history.evolution``)."""

from __future__ import annotations

from datetime import UTC, datetime

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.history.evolution import run_evolution_job
from cairn.history.scheduled import run_scheduled_jobs
from cairn.jobs import JobName, JobSwitches
from cairn.links import Link
from cairn.local import offline_model
from cairn.models import EdgeKind, RecordVersion, Source, SourceKind, Trust
from cairn.ports import Stores
from tests.conformance.samples import FACTS, MODEL, SCOPE, SYSTEM, TOOL, USER

LINKER = Source(kind=SourceKind.MODEL, run_id="run-linker-ev1")


def tagged(stores: Stores, content: str, tags: tuple[str, ...], source: Source) -> RecordVersion:
    record = NewRecord(namespace=FACTS, content=content, sources=(source,), tags=tags)
    (created,) = stores.records.apply(SCOPE, [Create(record=record)])
    return created


def linked(stores: Stores, a: RecordVersion, b: RecordVersion, source: Source) -> None:
    assert stores.links is not None
    stores.links.put(
        SCOPE,
        Link(
            memory_id=SCOPE.memory_id,
            actor_id=SCOPE.actor_id,
            from_id=a.record_id,
            kind=EdgeKind.RELATES_TO,
            to_id=b.record_id,
            sources=(source,),
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        ),
    )


def switch_on(stores: Stores) -> None:
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id="m1").switched(JobName.EVOLUTION, True))


def test_evolution_is_off_by_default(stores: Stores, clock: FixedClock) -> None:
    a = tagged(stores, "the hive", (), MODEL)
    b = tagged(stores, "the bees", ("bees",), MODEL)
    linked(stores, a, b, LINKER)

    run = run_evolution_job(stores, "m1", clock=clock)
    runs = run_scheduled_jobs(stores, offline_model(), "m1", embedder=None, clock=clock)

    assert run.outcome == "skipped"
    assert [r.outcome for r in runs if r.job is JobName.EVOLUTION] == ["skipped"]
    assert stores.records.history(SCOPE, a.record_id) == (a,)


def test_an_untrusted_record_takes_its_neighbours_tags_and_sources_once(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    a = tagged(stores, "the hive is by the fence", ("garden",), MODEL)
    b = tagged(stores, "the bees came in April", ("bees", "garden"), USER)
    linked(stores, a, b, LINKER)

    run = run_evolution_job(stores, "m1", clock=clock)
    clock.advance(seconds=1)
    rerun = run_evolution_job(stores, "m1", clock=clock)

    head = stores.records.get(SCOPE, a.record_id)
    assert (run.outcome, run.changed, rerun.changed) == ("done", 1, 0)
    assert head.version == 2
    assert head.tags == ("garden", "bees")
    assert head.content == a.content
    assert {USER, LINKER, MODEL} <= set(head.sources)
    assert head.trust is Trust.UNTRUSTED
    assert stores.records.get(SCOPE, b.record_id) == b  # the user's record: an untrusted
    # neighbour and a model-proposed link may not change it


def test_a_user_record_evolves_only_from_sources_that_may_change_it(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    mine = tagged(stores, "I keep bees", (), USER)
    told = tagged(stores, "the hive is blue", ("hive",), USER)
    tool = tagged(stores, "honey prices", ("honey",), TOOL)
    linked(stores, mine, told, SYSTEM)  # a trusted link to a user statement
    other = tagged(stores, "I like honey", (), USER)
    linked(stores, other, tool, SYSTEM)  # a trusted link, but an untrusted neighbour

    run = run_evolution_job(stores, "m1", clock=clock)

    evolved = stores.records.get(SCOPE, mine.record_id)
    assert evolved.tags == ("hive",)
    assert evolved.trust is Trust.TRUSTED
    assert stores.records.get(SCOPE, other.record_id) == other
    assert run.outcome == "partial"
    assert run.reasons == ("1× record(s) not evolved: a contributing source may not change them",)


def test_a_run_is_bounded(stores: Stores, clock: FixedClock) -> None:
    switch_on(stores)
    hub = tagged(stores, "bees", ("bees",), MODEL)
    for text in ("one", "two", "three"):
        linked(stores, tagged(stores, text, (), MODEL), hub, LINKER)

    run = run_evolution_job(stores, "m1", clock=clock, max_records=2)
    later = run_evolution_job(stores, "m1", clock=clock, max_records=2)

    assert (run.outcome, run.changed) == ("partial", 2)
    assert later.changed == 1
