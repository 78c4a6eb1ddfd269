"""A reflection stands while its members do: one made from a record that was retracted (as
DeleteMemoryRecord does) is revised when its cluster re-forms without it, and retracted when
none does, so recall never shows what it said of that record (``cairn.history.reflection``)."""

from __future__ import annotations

from cairn.changes import Retract
from cairn.clock import FixedClock
from cairn.history.reflection import UNCHANGED, run_reflection_job
from cairn.models import Status
from cairn.ports import Stores
from cairn.reflection_records import made_from
from cairn.testing import ScriptedModel
from tests.conformance.samples import SCOPE
from tests.conformance.test_reflection_job import (
    EMBED,
    NEAR,
    NOTHING,
    bees,
    reflect,
    reflections,
    switch_on,
)


def reflected_on_bees(stores: Stores, clock: FixedClock) -> list[str]:
    switch_on(stores)
    members = sorted(bees(stores), key=lambda m: m.record_id)
    model = ScriptedModel([reflect("Bees, hives and honey.", 1, 2, 3), NOTHING])
    run_reflection_job(stores, model, "m1", embedder=EMBED, clock=clock)
    return [m.record_id for m in members]


def test_a_cluster_that_re_forms_without_a_retracted_member_revises_its_reflection(
    stores: Stores, clock: FixedClock
) -> None:
    ids = reflected_on_bees(stores, clock)
    (first,) = reflections(stores)
    stores.records.apply(SCOPE, [Retract(record_id=ids[0])])

    run = run_reflection_job(
        stores,
        ScriptedModel([reflect("Hives and honey.", 1, 2), NOTHING]),
        "m1",
        embedder=EMBED,
        clock=clock,
    )

    (again,) = reflections(stores)
    assert again.record_id == first.record_id
    assert set(made_from(again)) == set(ids[1:])
    assert (run.changed, run.reasons) == (1, ())


def test_a_reflection_no_cluster_takes_up_after_a_retraction_is_retracted_too(
    stores: Stores, clock: FixedClock
) -> None:
    from tests.conformance.test_reflection_job import remember

    switch_on(stores)
    a = remember(stores, "I keep two hives", NEAR[0], entities=("bees",))
    b = remember(stores, "The hives stand by the orchard", NEAR[1], entities=("bees",))
    run_reflection_job(
        stores,
        ScriptedModel([reflect("Two hives.", 1, 2), NOTHING]),
        "m1",
        embedder=EMBED,
        clock=clock,
    )
    (made,) = reflections(stores)
    stores.records.apply(SCOPE, [Retract(record_id=a.record_id)])

    run = run_reflection_job(stores, ScriptedModel(), "m1", embedder=EMBED, clock=clock)
    rerun = run_reflection_job(stores, ScriptedModel(), "m1", embedder=EMBED, clock=clock)

    assert reflections(stores) == []
    assert stores.records.get(SCOPE, made.record_id).status is Status.RETRACTED
    assert stores.records.get(SCOPE, b.record_id).status is Status.ACTIVE
    assert (run.changed, run.reasons, rerun.changed) == (1, (), 0)
    assert rerun.reasons == (f"1× {UNCHANGED}",)  # its own retraction is no news to the rerun
