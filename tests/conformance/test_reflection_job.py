"""Reflection on every backend: one insight per never-recalled cluster, filed as an untrusted
record citing and linked to its members, made again only when they change; contradictions
marked contested, never changing what a user said (``cairn.history.reflection``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from cairn.changes import Create, NewRecord, RecordPatch, Revise
from cairn.clock import FixedClock
from cairn.errors import ModelUnavailableError
from cairn.history.reflection import run_reflection_job
from cairn.history.scheduled import run_scheduled_jobs
from cairn.jobs import JobName, JobSwitches
from cairn.local import offline_model
from cairn.model_request import ModelRequest
from cairn.models import EmbedderId, RecordVersion, Source, SourceKind, Trust
from cairn.ports import FloatMatrix, Stores
from cairn.recall.render import is_contested
from cairn.reflection_records import INSIGHT_CATEGORY, REFLECTION_STRATEGY, made_from
from cairn.testing import ScriptedModel
from tests.conformance.samples import EMBEDDER, FACTS, SCOPE, USER, vector

NEAR = ((1.0, 0.0, 0.0, 0.0), (0.95, 0.3, 0.0, 0.0), (0.9, 0.0, 0.4, 0.0))
FAR = (0.0, 0.0, 0.0, 1.0)


class OneDirection:
    """An embedder of the conformance space that puts every text in one direction (the
    reflection's vector is not what these tests are about)."""

    identity: EmbedderId = EMBEDDER

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return np.tile(np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))


EMBED = OneDirection()


def remember(
    stores: Stores,
    content: str,
    values: tuple[float, ...],
    *,
    sources: tuple[Source, ...] = (USER,),
    entities: tuple[str, ...] = (),
    namespace: str = FACTS,
) -> RecordVersion:
    record = NewRecord(
        namespace=namespace,
        content=content,
        sources=sources,
        vector=vector(*values),
        entities=entities,
    )
    (written,) = stores.records.apply(SCOPE, [Create(record=record)])
    return written


def switch_on(stores: Stores) -> None:
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id="m1").switched(JobName.REFLECTION, True))


def reflect(insight: str, *cites: int):  # type: ignore[no-untyped-def]
    def reply(request: ModelRequest) -> str:
        return json.dumps({"reflections": [{"insight": insight, "cites": list(cites)}]})

    return reply


def flag(*pairs: int) -> str:
    return json.dumps({"contradictions": [{"pair": n} for n in pairs]})


NOTHING = json.dumps({"contradictions": []})


def reflections(stores: Stores) -> list[RecordVersion]:
    page = stores.records.list_records(SCOPE, limit=100)
    return [r for r in page.items if r.strategy == REFLECTION_STRATEGY]


def bees(stores: Stores) -> list[RecordVersion]:
    texts = ("I keep two hives", "The hives stand by the orchard", "I harvest honey in June")
    return [remember(stores, t, v, entities=("bees",)) for t, v in zip(texts, NEAR, strict=True)]


def test_reflection_is_off_by_default(stores: Stores, clock: FixedClock) -> None:
    bees(stores)
    model = ScriptedModel()

    run = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)
    runs = run_scheduled_jobs(stores, model, "m1", embedder=EMBEDDER, clock=clock, embed_with=EMBED)

    assert run.outcome == "skipped"
    assert run.reasons == ("reflection is switched off for this memory",)
    assert [r.outcome for r in runs if r.job is JobName.REFLECTION] == ["skipped"]
    assert reflections(stores) == []
    asked = {r.output.name for r in model.requests if r.output is not None}
    assert asked <= {"record_links"}  # the link job's, on by default


def test_a_cluster_gets_one_untrusted_reflection_citing_and_linked_to_its_members(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    members = bees(stores)
    car = remember(stores, "My car is red", FAR)
    model = ScriptedModel([reflect("The user keeps bees for honey.", 1, 3), NOTHING])
    in_order = sorted(members, key=lambda m: m.record_id)  # a cluster is in record-id order

    run = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)

    (made,) = reflections(stores)
    document = json.loads(model.requests[0].messages[0].text)
    assert [r["record"]["content"] for r in document["records"]] == [m.content for m in in_order]
    assert (made.category, made.namespace, made.content) == (
        INSIGHT_CATEGORY,
        FACTS,
        "The user keeps bees for honey.",
    )
    assert made.trust is Trust.UNTRUSTED
    assert made.sources == (USER, Source(kind=SourceKind.MODEL, run_id=run.run_id))
    assert made_from(made) == {m.record_id: (1, m.content_digest[:16]) for m in members}
    assert made.embedding == EMBEDDER
    if stores.directory is not None:  # the AgentCore API finds it by id
        assert stores.directory.locate("m1", made.record_id).namespace == FACTS
    assert stores.links is not None
    cited = {in_order[0].record_id, in_order[2].record_id}
    for member in members:
        links = stores.links.links_of(SCOPE, member.record_id)
        expected = (
            [(member.record_id, "part_of", made.record_id)] if member.record_id in cited else []
        )
        assert [link.key for link in links] == expected
        assert all(link.trust is Trust.UNTRUSTED for link in links)
        assert stores.records.get(SCOPE, member.record_id) == member  # members untouched
    assert stores.links.links_of(SCOPE, car.record_id) == ()
    assert (run.outcome, run.actors, run.changed) == ("done", 1, 1)
    assert stores.jobs is not None
    assert stores.jobs.runs("m1", JobName.REFLECTION) == (run,)


def test_a_rerun_over_an_unchanged_cluster_asks_and_files_nothing(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    bees(stores)
    run_reflection_job(
        stores,
        ScriptedModel([reflect("Bees, hives and honey.", 1, 2), NOTHING]),
        "m1",
        embedder=EMBED,
        clock=clock,
    )
    (before,) = reflections(stores)
    model = ScriptedModel()  # the pairs declined are not asked again; nothing is

    rerun = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)
    remember(stores, "The car is red", FAR)  # news to the next run, which finds nothing to ask
    after = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)

    assert reflections(stores) == [before]
    assert model.requests == []
    # the first run's own reflection and marks are no news to the rerun
    assert (rerun.outcome, rerun.changed) == ("done", 0)
    assert rerun.reasons == (
        "1× actor(s) skipped: no record written and none recalled since the last whole run",
    )
    assert (after.outcome, after.changed, after.reasons) == ("done", 0, ())


def test_a_changed_member_revises_the_reflection_instead_of_filing_a_second(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    members = bees(stores)
    run_reflection_job(
        stores,
        ScriptedModel([reflect("Bees, hives and honey.", 1, 2), NOTHING]),
        "m1",
        embedder=EMBED,
        clock=clock,
    )
    (first,) = reflections(stores)
    tagged = RecordPatch(tags=("apiary",))  # a version, but the same content
    stores.records.apply(SCOPE, [Revise(record_id=members[1].record_id, patch=tagged)])
    unchanged = run_reflection_job(
        stores, ScriptedModel([NOTHING]), "m1", embedder=EMBED, clock=clock
    )
    assert (unchanged.changed, unchanged.reasons, reflections(stores)) == (0, (), [first])
    patch = RecordPatch(content="I keep three hives")
    change = Revise(record_id=members[0].record_id, patch=patch, vector=vector(*NEAR[0]))
    stores.records.apply(SCOPE, [change])

    run = run_reflection_job(
        stores,
        ScriptedModel([reflect("Three hives, honey in June.", 1, 3), NOTHING]),
        "m1",
        embedder=EMBED,
        clock=clock,
    )

    (again,) = reflections(stores)
    assert again.record_id == first.record_id
    assert (again.version, again.content) == (first.version + 1, "Three hives, honey in June.")
    assert made_from(again)[members[0].record_id][0] == 2
    assert again.trust is Trust.UNTRUSTED
    assert run.changed == 1


def test_a_recalled_record_is_no_candidate(stores: Stores, clock: FixedClock) -> None:
    switch_on(stores)
    members = bees(stores)
    assert stores.access is not None
    stores.access.add(SCOPE, {members[1].record_id: 1}, after=0, upto=1)
    model = ScriptedModel([reflect("Hives and honey.", 1, 2), NOTHING])

    run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)

    (made,) = reflections(stores)
    assert set(made_from(made)) == {members[0].record_id, members[2].record_id}


def test_a_run_is_bounded_and_a_failed_or_bad_answer_is_counted(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    bees(stores)
    other = "/facts/a1/garden/"
    remember(stores, "The roses need water", NEAR[0], namespace=other)
    remember(stores, "The roses bloom in May", NEAR[1], namespace=other)
    model = ScriptedModel([ModelUnavailableError("throttled"), reflect("One only.", 1)])

    run = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock, max_calls=2)

    assert reflections(stores) == []
    assert run.outcome == "partial"
    assert len(model.requests) == 2
    assert set(run.reasons) == {
        "1× model call failed (ModelUnavailableError)",
        "1× model call failed (InvalidModelOutputError)",
        "1× pair(s) left for the next run: the run's bound was reached",
    }


def test_the_offline_model_reflects_extractively_and_flags_one_attribute_set_twice(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    members = bees(stores)
    lisbon = remember(stores, "The user's office is in Lisbon.", FAR)
    porto = remember(stores, "The user's office is in Porto.", (0.0, 0.0, 0.3, 0.95))
    same = remember(stores, "The user lives in Oslo.", (0.0, 0.3, 0.0, 0.95))

    run = run_reflection_job(stores, offline_model(), "m1", embedder=EMBED, clock=clock)

    made = [r for r in reflections(stores) if set(made_from(r)) == {m.record_id for m in members}]
    assert len(made) == 1
    in_order = sorted(members, key=lambda m: m.record_id)
    sentences = "; ".join(m.content for m in in_order)
    assert made[0].content == f"3 memories concern bees: {sentences}."
    assert is_contested(stores.records.get(SCOPE, lisbon.record_id))
    assert is_contested(stores.records.get(SCOPE, porto.record_id))
    assert not is_contested(stores.records.get(SCOPE, same.record_id))
    assert run.changed >= 2


def test_two_runs_at_once_file_one_reflection_and_one_erased_by_hand_is_not_filed_again(
    stores: Stores, clock: FixedClock
) -> None:
    from cairn.erasure_lineage import erase_record

    switch_on(stores)
    bees(stores)

    def meanwhile(request: ModelRequest) -> str:
        inner = ScriptedModel([reflect("Filed first.", 1, 2), NOTHING])
        run_reflection_job(stores, inner, "m1", embedder=EMBED, clock=clock)
        return reflect("Filed second.", 1, 2)(request)

    outer = run_reflection_job(
        stores, ScriptedModel([meanwhile, NOTHING]), "m1", embedder=EMBED, clock=clock
    )

    (made,) = reflections(stores)
    assert made.content == "Filed first."
    assert outer.changed == 0
    erase_record(stores, SCOPE, made.record_id, staging=None, clock=clock)
    model = ScriptedModel()
    later = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)
    assert reflections(stores) == []
    assert model.requests == []  # no reflection asked for; the pairs declined are not asked again
    assert (later.changed, later.reasons) == (0, ())


def test_a_reflection_cites_its_members_turns_but_not_the_rollouts_that_wrote_them(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    heard = Source(kind=SourceKind.MODEL, event_id="ev-9", session_id="s9", rollout_id="ro-9")
    remember(stores, "The hive is blue", NEAR[0], sources=(heard,))
    remember(stores, "The hive is by the fence", NEAR[1])

    run = run_reflection_job(
        stores,
        ScriptedModel([reflect("A blue hive.", 1, 2), NOTHING]),
        "m1",
        embedder=EMBED,
        clock=clock,
    )

    (made,) = reflections(stores)
    assert set(made.sources) == {
        heard.model_copy(update={"rollout_id": None}),
        USER,
        Source(kind=SourceKind.MODEL, run_id=run.run_id),
    }
