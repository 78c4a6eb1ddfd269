"""The link job on every backend: nearby records linked through the model, untrusted, bounded,
switchable, logged (``cairn.history.linking``)."""

from __future__ import annotations

import json

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.history.linking import run_link_job
from cairn.jobs import JobName, JobSwitches
from cairn.local import offline_model
from cairn.model_request import ModelRequest
from cairn.models import EdgeKind, RecordVersion, SourceKind, Trust
from cairn.ports import Stores, VectorWriter
from cairn.testing import ScriptedModel
from tests.conformance.samples import EMBEDDER, FACTS, OTHER_ACTOR, SCOPE, USER, vector


def remember(
    stores: Stores, content: str, values: tuple[float, ...], entities: tuple[str, ...]
) -> RecordVersion:
    record = NewRecord(
        namespace=FACTS,
        content=content,
        sources=(USER,),
        vector=vector(*values),
        entities=entities,
    )
    (written,) = stores.records.apply(SCOPE, [Create(record=record)])
    return written


def three(stores: Stores) -> tuple[RecordVersion, RecordVersion, RecordVersion]:
    bees = remember(stores, "I keep bees", (1.0, 0.0, 0.0, 0.0), ("bees",))
    hive = remember(stores, "The hive is by the fence", (0.9, 0.2, 0.0, 0.0), ("Bees", "hive"))
    car = remember(stores, "My car is red", (0.0, 0.0, 1.0, 0.0), ("car",))
    return bees, hive, car


def answer(*links: dict[str, object]):  # type: ignore[no-untyped-def]
    def reply(request: ModelRequest) -> str:
        return json.dumps({"links": list(links)})

    return reply


def test_the_model_links_nearby_records_untrusted_and_the_records_stay(
    stores: Stores, clock: FixedClock
) -> None:
    bees, hive, car = three(stores)
    model = ScriptedModel([answer({"pair": 1, "kind": "caused_by"}, {"pair": 1, "kind": "x"})])

    run = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert stores.links is not None
    (link,) = stores.links.links_of(SCOPE, bees.record_id)
    first, second = sorted([bees.record_id, hive.record_id])  # a pair's A: the lower id
    assert (link.from_id, link.kind, link.to_id) == (first, EdgeKind.CAUSED_BY, second)
    assert link.trust is Trust.UNTRUSTED
    assert [s.kind for s in link.sources] == [SourceKind.MODEL]
    assert link.sources[0].run_id == run.run_id
    assert stores.links.links_of(SCOPE, car.record_id) == ()  # not nearby: never asked
    document = json.loads(model.requests[0].messages[0].text)
    assert len(document["pairs"]) == 1  # only the near pair
    for record in (bees, hive, car):
        assert stores.records.get(SCOPE, record.record_id) == record
    assert (run.outcome, run.actors, run.changed) == ("partial", 1, 1)
    assert run.reasons == ("1× proposal(s) dropped: a kind outside the vocabulary or no such pair",)
    assert stores.jobs is not None
    assert stores.jobs.runs("m1", JobName.LINK) == (run,)


def test_a_second_run_asks_nothing_about_pairs_already_linked(
    stores: Stores, clock: FixedClock
) -> None:
    three(stores)
    run_link_job(
        stores,
        ScriptedModel([answer({"pair": 1, "kind": "relates_to"})]),
        "m1",
        embedder=EMBEDDER,
        clock=clock,
    )

    model = ScriptedModel()
    again = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert model.requests == []
    assert (again.outcome, again.changed) == ("done", 0)


def test_the_offline_heuristic_links_only_what_a_shared_entity_justifies(
    stores: Stores, clock: FixedClock
) -> None:
    bees, hive, _ = three(stores)
    other = remember(stores, "The hive paint is blue", (0.95, 0.1, 0.0, 0.0), ("paint",))

    run = run_link_job(stores, offline_model(), "m1", embedder=EMBEDDER, clock=clock)

    assert stores.links is not None
    (link,) = stores.links.links_of(SCOPE, bees.record_id)
    assert link.kind is EdgeKind.RELATES_TO
    assert {link.from_id, link.to_id} == {bees.record_id, hive.record_id}
    assert stores.links.links_of(SCOPE, other.record_id) == ()  # near, but nothing shared
    assert run.changed == 1


def test_a_run_is_bounded_in_links(stores: Stores, clock: FixedClock) -> None:
    three(stores)
    remember(stores, "Bees like clover", (0.97, 0.05, 0.0, 0.0), ("bees",))

    run = run_link_job(stores, offline_model(), "m1", embedder=EMBEDDER, clock=clock, max_links=1)

    assert run.changed == 1
    assert run.outcome == "partial"
    assert any("the run's bound was reached" in reason for reason in run.reasons)


def test_a_memory_that_switched_linking_off_is_skipped_and_says_why(
    stores: Stores, clock: FixedClock
) -> None:
    bees, _, _ = three(stores)
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id="m1").switched(JobName.LINK, False))
    model = ScriptedModel()

    run = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert (run.outcome, run.reasons) == ("skipped", ("link is switched off for this memory",))
    assert model.requests == []
    assert stores.links is not None
    assert stores.links.links_of(SCOPE, bees.record_id) == ()
    assert stores.jobs.runs("m1", JobName.LINK) == (run,)


def test_a_kind_outside_the_vocabulary_is_never_stored(stores: Stores, clock: FixedClock) -> None:
    bees, _, _ = three(stores)
    model = ScriptedModel([answer({"pair": 1, "kind": "contradicts"})])

    run = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert stores.links is not None
    assert stores.links.links_of(SCOPE, bees.record_id) == ()
    assert (run.outcome, run.changed) == ("partial", 0)
    assert run.reasons == ("1× proposal(s) dropped: a kind outside the vocabulary or no such pair",)


def asked_pairs(model: ScriptedModel) -> list[frozenset[str]]:
    """Every pair the model was asked about, by the two records' content."""
    return [
        frozenset((pair["a"]["content"], pair["b"]["content"]))
        for request in model.requests
        for pair in json.loads(request.messages[0].text)["pairs"]
    ]


def declines(count: int) -> ScriptedModel:
    return ScriptedModel([json.dumps({"links": []})] * count)


def test_a_scope_with_nothing_written_since_the_last_run_is_skipped_and_says_so(
    stores: Stores, clock: FixedClock
) -> None:
    three(stores)
    first = declines(1)
    run_link_job(stores, first, "m1", embedder=EMBEDDER, clock=clock)
    model = ScriptedModel()

    again = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert asked_pairs(first) == [frozenset({"I keep bees", "The hive is by the fence"})]
    assert model.requests == []  # the declined pair is not asked again either
    assert (again.outcome, again.actors, again.changed) == ("done", 1, 0)
    assert again.reasons == ("1× actor(s) skipped: no record written since the last run",)


def test_only_records_written_since_the_cursor_are_paired_against_the_whole_scope(
    stores: Stores, clock: FixedClock
) -> None:
    three(stores)
    run_link_job(stores, declines(1), "m1", embedder=EMBEDDER, clock=clock)
    remember(stores, "Bees like clover", (0.97, 0.05, 0.0, 0.0), ("bees",))
    remember(stores, "The car needs oil", (0.0, 0.1, 0.95, 0.0), ("car",))
    model = declines(1)

    run = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert set(asked_pairs(model)) == {
        frozenset({"Bees like clover", "I keep bees"}),
        frozenset({"Bees like clover", "The hive is by the fence"}),
        frozenset({"The car needs oil", "My car is red"}),
    }  # never bees with the hive again: neither was written since
    assert (run.outcome, run.changed) == ("done", 0)


def test_a_bounded_run_moves_the_cursor_only_past_what_it_asked(
    stores: Stores, clock: FixedClock
) -> None:
    for i in range(12):
        remember(stores, f"Bee fact {i}", (1.0, 0.02 * i, 0.0, 0.0), ("bees",))
    first, second, third = declines(1), declines(8), ScriptedModel()

    bounded = run_link_job(stores, first, "m1", embedder=EMBEDDER, clock=clock, max_calls=1)
    rest = run_link_job(stores, second, "m1", embedder=EMBEDDER, clock=clock)
    run_link_job(stores, third, "m1", embedder=EMBEDDER, clock=clock)

    assert bounded.outcome == "partial"
    assert "1× pair(s) left for the next run: the run's bound was reached" in bounded.reasons
    assert len(asked_pairs(first)) == 8
    asked, rest_asked = set(asked_pairs(first)), set(asked_pairs(second))
    assert rest_asked - asked  # the rest of the scope's pairs, in the next run
    # Asked again: the pairs of the record at the cut that the first run's call held (and any
    # pair a later record finds with an earlier one: a decline is remembered by the cursor,
    # not per pair); for these twelve, the cut record's two.
    assert len(asked & rest_asked) <= 2
    assert (rest.outcome, third.requests) == ("done", [])


def test_records_written_in_another_actor_s_scope_are_not_this_scope_s_news(
    stores: Stores, clock: FixedClock
) -> None:
    three(stores)
    run_link_job(stores, declines(1), "m1", embedder=EMBEDDER, clock=clock)
    for text, values in (
        ("I keep goats", (1.0, 0.0, 0.0, 0.0)),
        ("Goats eat hay", (0.9, 0.2, 0, 0)),
    ):
        record = NewRecord(
            namespace="/facts/a2/", content=text, sources=(USER,), vector=vector(*values)
        )
        stores.records.apply(OTHER_ACTOR, [Create(record=record)])
    model = declines(1)

    run = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert asked_pairs(model) == [frozenset({"I keep goats", "Goats eat hay"})]
    assert (run.actors, run.outcome) == (2, "done")
    assert run.reasons == ("1× actor(s) skipped: no record written since the last run",)


def test_a_new_record_among_an_older_one_s_nearest_is_paired_back_with_it_once(
    stores: Stores, clock: FixedClock
) -> None:
    # The hive's three nearest include the new record; the new record's three are the bees.
    hive = remember(stores, "The hive", (1.0, 0.0, 0.0, 0.8), ("hive",))
    for n, values in enumerate(
        ((1.0, 0.05, 0.0, -0.1), (1.0, 0.0, 0.05, -0.1), (1.0, -0.05, 0, -0.1))
    ):
        remember(stores, f"Bee {n}", values, ("bees",))
    run_link_job(stores, declines(1), "m1", embedder=EMBEDDER, clock=clock)
    remember(stores, "The queen", (1.0, 0.0, 0.0, 0.0), ("bees",))
    model, again = declines(1), ScriptedModel()

    run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)
    run_link_job(stores, again, "m1", embedder=EMBEDDER, clock=clock)

    pairs = asked_pairs(model)
    assert frozenset({hive.content, "The queen"}) in pairs  # the older one's way round
    assert len(pairs) == len(set(pairs)) == 4  # its three and the one back, each once
    assert again.requests == []


def test_a_record_written_without_a_vector_is_paired_once_reindexing_gives_it_one(
    stores: Stores, clock: FixedClock
) -> None:
    three(stores)
    (swarm,) = stores.records.apply(
        SCOPE, [Create(record=NewRecord(namespace=FACTS, content="Bees swarm", sources=(USER,)))]
    )
    first = declines(1)
    run_link_job(stores, first, "m1", embedder=EMBEDDER, clock=clock)
    assert isinstance(stores.records, VectorWriter)
    assert stores.records.add_vectors(SCOPE, [(swarm.ref, vector(0.98, 0.1, 0.0, 0.0))]) == 1
    model = declines(1)

    run = run_link_job(stores, model, "m1", embedder=EMBEDDER, clock=clock)

    assert asked_pairs(first) == [frozenset({"I keep bees", "The hive is by the fence"})]
    assert set(asked_pairs(model)) == {
        frozenset({"Bees swarm", "I keep bees"}),
        frozenset({"Bees swarm", "The hive is by the fence"}),
    }  # its re-embedded change is news to the cursor; the older pair is not asked again
    assert (run.outcome, run.changed) == ("done", 0)
