"""Evolution on every backend: a record's context line and tags refreshed from its linked
neighbours through the model port, as a new version whose sources add theirs, the links' and
the model's, only where every such source may change it, never its content, never twice for
an unchanged neighbourhood (``cairn.history.evolution``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from cairn.changes import Create, NewRecord, RecordPatch, Revise
from cairn.clock import FixedClock
from cairn.history.evolution import run_evolution_job
from cairn.history.scheduled import run_scheduled_jobs
from cairn.jobs import JobName, JobSwitches
from cairn.links import Link
from cairn.local import offline_model
from cairn.models import EdgeKind, RecordVersion, Source, SourceKind, Trust
from cairn.ports import Stores
from cairn.testing import ScriptedModel
from tests.conformance.samples import FACTS, MODEL, SCOPE, SYSTEM, TOOL, USER

LINKER = Source(kind=SourceKind.MODEL, run_id="run-linker-ev1")
CONTEXT = "Part of the user's beekeeping, beside the garden records"


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


def evolution(context: str | None, *tags: str) -> str:
    proposed: dict[str, object] = {"tags": list(tags)}
    if context is not None:
        proposed["context"] = context
    return json.dumps({"evolutions": [proposed]})


DECLINE = json.dumps({"evolutions": []})


def test_evolution_is_off_by_default(stores: Stores, clock: FixedClock) -> None:
    a = tagged(stores, "the hive", (), MODEL)
    b = tagged(stores, "the bees", ("bees",), MODEL)
    linked(stores, a, b, LINKER)
    model = ScriptedModel()

    run = run_evolution_job(stores, model, "m1", clock=clock)
    runs = run_scheduled_jobs(stores, offline_model(), "m1", embedder=None, clock=clock)

    assert run.outcome == "skipped"
    assert [r.outcome for r in runs if r.job is JobName.EVOLUTION] == ["skipped"]
    assert model.requests == []
    assert stores.records.history(SCOPE, a.record_id) == (a,)


def test_the_model_refreshes_an_untrusted_record_s_context_and_tags_once(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    a = tagged(stores, "the hive is by the fence", ("garden",), MODEL)
    b = tagged(stores, "the bees came in April", ("bees", "garden"), USER)
    linked(stores, a, b, LINKER)
    model = ScriptedModel([evolution(CONTEXT, "bees", "garden", "apiary")])

    run = run_evolution_job(stores, model, "m1", clock=clock)
    clock.advance(seconds=1)
    rerun = run_evolution_job(stores, model, "m1", clock=clock)

    head = stores.records.get(SCOPE, a.record_id)
    assert (run.outcome, run.changed, rerun.changed) == ("partial", 1, 0)
    assert run.reasons == ("1× record(s) not evolved: a contributing source may not change them",)
    assert len(model.requests) == 1  # the unchanged neighbourhood is not asked about again
    document = json.loads(model.requests[0].messages[0].text)
    assert document["record"]["content"] == a.content
    assert [n["content"] for n in document["neighbours"]] == [b.content]
    assert head.version == 2
    assert (head.context, head.tags) == (CONTEXT, ("garden", "bees", "apiary"))
    assert (head.content, head.content_digest) == (a.content, a.content_digest)
    answered = Source(kind=SourceKind.MODEL, run_id=run.run_id)
    assert {USER, LINKER, MODEL, answered} <= set(head.sources)
    assert head.trust is Trust.UNTRUSTED
    assert stores.records.get(SCOPE, b.record_id) == b  # the user's record: an untrusted
    # neighbour, a model-proposed link and a model answer may not change it, nor is it asked


def test_a_user_record_is_never_evolved_through_the_model(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    mine = tagged(stores, "I keep bees", (), USER)
    told = tagged(stores, "the hive is blue", ("hive",), USER)
    linked(stores, mine, told, SYSTEM)  # a trusted link to a user statement: by rule only
    proposed = tagged(stores, "I like honey", (), USER)
    other = tagged(stores, "honey is sweet", ("honey",), USER)
    linked(stores, proposed, other, LINKER)  # a model-proposed link between user records
    tool = tagged(stores, "honey prices", ("prices",), TOOL)
    said = tagged(stores, "I sell honey", (), USER)
    linked(stores, said, tool, SYSTEM)  # a trusted link, but an untrusted neighbour
    model = ScriptedModel([DECLINE])

    run = run_evolution_job(stores, model, "m1", clock=clock)

    (asked,) = model.requests  # the tool's record alone: the model may change it
    assert json.loads(asked.messages[0].text)["record"]["content"] == tool.content
    evolved = stores.records.get(SCOPE, mine.record_id)
    assert (evolved.tags, evolved.context, evolved.trust) == (("hive",), None, Trust.TRUSTED)
    assert set(evolved.sources) == {USER, SYSTEM}
    for untouched in (told, proposed, other, said, tool):
        assert stores.records.get(SCOPE, untouched.record_id) == untouched
    assert run.outcome == "partial"
    assert run.reasons == ("3× record(s) not evolved: a contributing source may not change them",)


def test_a_decline_changes_nothing_and_is_not_asked_again_until_the_neighbourhood_moves(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    a = tagged(stores, "the hive", (), MODEL)
    b = tagged(stores, "the bees", ("bees",), MODEL)
    linked(stores, a, b, LINKER)
    model = ScriptedModel([DECLINE, DECLINE, evolution(CONTEXT), evolution(CONTEXT)])

    declined = run_evolution_job(stores, model, "m1", clock=clock)
    again = run_evolution_job(stores, model, "m1", clock=clock)
    asked = len(model.requests)
    stores.records.apply(
        SCOPE, [Revise(record_id=b.record_id, patch=RecordPatch(tags=("bees", "wax")))]
    )
    moved = run_evolution_job(stores, model, "m1", clock=clock)

    assert (declined.changed, again.changed, declined.outcome) == (0, 0, "done")
    assert asked == 2  # each record asked once (b is a's neighbour too), neither again
    assert moved.changed == 2  # b's new tags: both neighbourhoods moved, both asked
    assert stores.records.get(SCOPE, a.record_id).context == CONTEXT


def test_a_model_answer_that_rewrites_the_statement_is_refused(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    a = tagged(stores, "the hive", (), MODEL)
    b = tagged(stores, "the bees", ("bees",), MODEL)
    linked(stores, a, b, LINKER)
    rewrite = json.dumps({"evolutions": [{"content": "the hive is gone", "context": CONTEXT}]})
    model = ScriptedModel([rewrite, rewrite])

    run = run_evolution_job(stores, model, "m1", clock=clock)

    assert stores.records.get(SCOPE, a.record_id) == a
    assert stores.records.get(SCOPE, b.record_id) == b
    assert run.reasons == ("2× model call failed (InvalidModelOutputError)",)


def test_the_offline_model_answers_with_its_neighbours_tags_or_declines(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    a = tagged(stores, "the hive is by the fence", (), MODEL)
    b = tagged(stores, "the bees came in April", ("bees",), MODEL)
    linked(stores, a, b, LINKER)
    c = tagged(stores, "the fence is green", (), MODEL)
    d = tagged(stores, "the gate is green", (), MODEL)
    linked(stores, c, d, LINKER)

    # Records are visited in id order: b may be asked before a carries its tag (it declines,
    # then is asked again once a's tags moved), so it settles within two runs.
    runs = [run_evolution_job(stores, offline_model(), "m1", clock=clock) for _ in range(3)]

    head = stores.records.get(SCOPE, a.record_id)
    assert (head.tags, head.context) == (("bees",), "Linked (relates_to) to 1 record on bees")
    assert head.content == a.content
    assert stores.records.get(SCOPE, b.record_id).context == head.context  # its own topic
    assert stores.records.get(SCOPE, c.record_id) == c  # no tag to justify anything: declined
    assert stores.records.get(SCOPE, d.record_id) == d
    assert [run.changed for run in runs][2] == 0
    assert sum(run.changed for run in runs) == 2  # a and b, once each


def test_a_run_is_bounded_in_versions_and_model_calls(stores: Stores, clock: FixedClock) -> None:
    switch_on(stores)
    hub = tagged(stores, "bees", ("bees",), USER)
    for text in ("one", "two", "three"):
        linked(stores, tagged(stores, text, (), MODEL), hub, LINKER)

    run = run_evolution_job(stores, offline_model(), "m1", clock=clock, max_records=2)
    later = run_evolution_job(stores, offline_model(), "m1", clock=clock, max_calls=0)
    last = run_evolution_job(stores, offline_model(), "m1", clock=clock)

    assert (run.outcome, run.changed) == ("partial", 2)
    assert later.changed == 0
    assert "1× record(s) left for the next run: the run's model calls were spent" in later.reasons
    assert last.changed == 1
