"""The reflection job's contradictions on every backend: a nearby pair the model flags is
marked contested on both sides, content, sources and trust unchanged, never retired
(``cairn.history.contradiction_flags``)."""

from __future__ import annotations

from cairn.clock import FixedClock
from cairn.history.reflection import run_reflection_job
from cairn.models import Status, Trust
from cairn.ports import Stores
from cairn.recall.render import is_contested
from cairn.testing import ScriptedModel
from tests.conformance.samples import MODEL, SCOPE
from tests.conformance.test_reflection_job import EMBED, NEAR, flag, remember, switch_on


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
    assert (run.changed, rerun.changed, rerun.reasons) == (1, 0, ())  # not asked again


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
