"""The reflection job's contradictions on every backend: a nearby pair the model flags is
marked contested on both sides, content, sources and trust unchanged, never retired; only the
records written since the job's cursor are paired, and a pair asked is not asked again
(``cairn.history.contradiction_flags``)."""

from __future__ import annotations

import json

from cairn.clock import FixedClock
from cairn.errors import ModelUnavailableError
from cairn.history.reflection import UNCHANGED, run_reflection_job
from cairn.models import Status, Trust
from cairn.ports import Stores
from cairn.recall.render import is_contested
from cairn.testing import ScriptedModel
from tests.conformance.samples import MODEL, SCOPE
from tests.conformance.test_reflection_job import (
    EMBED,
    NEAR,
    NOTHING,
    bees,
    flag,
    reflect,
    reflections,
    remember,
    switch_on,
)


def test_a_flagged_pair_is_marked_contested_and_the_user_side_keeps_content_and_trust(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    said = remember(stores, "The user's office is in Lisbon.", NEAR[0])
    inferred = remember(stores, "The user's office is in Porto.", NEAR[1], sources=(MODEL,))
    assert stores.access is not None
    stores.access.add(SCOPE, {said.record_id: 1, inferred.record_id: 1}, after=0, upto=1)
    model = ScriptedModel([flag(1)])

    run = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)
    rerun = run_reflection_job(stores, ScriptedModel(), "m1", embedder=EMBED, clock=clock)

    mine, theirs = (stores.records.get(SCOPE, r.record_id) for r in (said, inferred))
    for before, after in ((said, mine), (inferred, theirs)):
        assert (after.content, after.sources, after.trust) == (
            before.content,
            before.sources,
            before.trust,
        )
        assert after.status is Status.ACTIVE
        assert after.version == 2
        assert is_contested(after)
    assert mine.trust is Trust.TRUSTED
    assert [e.target for e in mine.edges] == [inferred.record_id]
    assert (run.changed, rerun.changed) == (1, 0)  # not asked again: its marks are no news
    assert rerun.reasons == (f"1× {UNCHANGED}",)


def test_flags_are_bounded_per_run_and_the_rest_wait(stores: Stores, clock: FixedClock) -> None:
    switch_on(stores)
    records = [
        remember(stores, f"The user's office is in {city}.", values, sources=(MODEL,))
        for city, values in zip(("Lisbon", "Porto", "Faro"), NEAR, strict=True)
    ]
    assert stores.access is not None
    stores.access.add(SCOPE, {r.record_id: 1 for r in records}, after=0, upto=1)

    run = run_reflection_job(
        stores, ScriptedModel([flag(1, 2, 3)]), "m1", embedder=EMBED, clock=clock, max_flags=1
    )

    heads = [stores.records.get(SCOPE, r.record_id) for r in records]
    assert sum(is_contested(h) for h in heads) == 2  # one pair, both sides
    assert all(h.status is Status.ACTIVE for h in heads)  # untrusted both: still never retired
    assert (run.outcome, run.changed) == ("partial", 1)
    assert run.reasons == ("1× pair(s) left for the next run: the run's bound was reached",)


def _asked(model: ScriptedModel) -> list[int]:
    """How many pairs each request asked about."""
    return [len(json.loads(r.messages[-1].text)["pairs"]) for r in model.requests]


def test_a_declined_pair_is_not_asked_again_and_a_new_record_is_asked_against_the_scope(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    older = [
        remember(stores, f"The hives are {n}.", v) for n, v in zip("ab", NEAR[:2], strict=True)
    ]
    assert stores.access is not None
    stores.access.add(SCOPE, {r.record_id: 1 for r in older}, after=0, upto=1)
    first = ScriptedModel([NOTHING])
    run_reflection_job(stores, first, "m1", embedder=EMBED, clock=clock)
    newer = remember(stores, "The hives are c.", NEAR[2])
    stores.access.add(SCOPE, {newer.record_id: 1}, after=1, upto=2)
    second = ScriptedModel([NOTHING])

    run = run_reflection_job(stores, second, "m1", embedder=EMBED, clock=clock)

    assert (_asked(first), _asked(second)) == ([1], [2])  # the new record with each older one
    assert "The hives are c." in second.requests[0].messages[-1].text
    assert (run.outcome, run.changed, run.reasons) == ("done", 0, ())


def test_a_failed_call_leaves_its_pairs_to_be_asked_by_the_next_run(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    pair = [
        remember(stores, f"The office is in {c}.", v)
        for c, v in zip(("X", "Y"), NEAR[:2], strict=True)
    ]
    assert stores.access is not None
    stores.access.add(SCOPE, {r.record_id: 1 for r in pair}, after=0, upto=1)
    failing = ScriptedModel([ModelUnavailableError("throttled")])
    failed = run_reflection_job(stores, failing, "m1", embedder=EMBED, clock=clock)
    model = ScriptedModel([flag(1)])

    run = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)

    assert failed.reasons == ("1× model call failed (ModelUnavailableError)",)
    assert (_asked(model), run.changed) == ([1], 1)
    assert all(is_contested(stores.records.get(SCOPE, r.record_id)) for r in pair)


def test_a_reflection_is_no_one_s_pair(stores: Stores, clock: FixedClock) -> None:
    switch_on(stores)
    bees(stores)
    filing = ScriptedModel([reflect("Bees, hives and honey.", 1, 2), NOTHING])
    run_reflection_job(stores, filing, "m1", embedder=EMBED, clock=clock)
    # Where EMBED puts every reflection, and far from the bees: its only near record is one.
    sold = remember(stores, "The honey is sold at the market.", (0.0, 1.0, 0.0, 0.0))
    assert stores.access is not None
    stores.access.add(SCOPE, {sold.record_id: 1}, after=0, upto=1)
    model = ScriptedModel()

    run = run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)

    assert len(reflections(stores)) == 1
    assert (model.requests, run.changed, run.reasons) == ([], 0, ())
