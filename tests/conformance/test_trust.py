"""Trust is the join of the sources and never rises, through revisions and fold-ins."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cairn.changes import FoldIn, RecordPatch, Revise
from cairn.clock import FixedClock
from cairn.models import RecordVersion, Source, Trust, content_digest
from cairn.ports import Stores
from tests.conformance.samples import IMPORTED, MODEL, SCOPE, SYSTEM, TOOL, USER, create


@pytest.mark.parametrize(
    ("sources", "trust"),
    [
        ((USER,), Trust.TRUSTED),
        ((USER, SYSTEM), Trust.TRUSTED),
        ((MODEL,), Trust.UNTRUSTED),
        ((TOOL,), Trust.UNTRUSTED),
        ((IMPORTED,), Trust.UNTRUSTED),
        ((USER, MODEL), Trust.UNTRUSTED),
        ((USER, TOOL), Trust.UNTRUSTED),
    ],
    ids=["user", "user+system", "model", "tool", "import", "user+model", "user+tool"],
)
def test_trust_is_derived_from_every_source(
    stores: Stores, sources: tuple[Source, ...], trust: Trust
) -> None:
    created = create(stores, "Prefers window seats", sources=sources)

    assert created.trust is trust
    assert stores.records.get(SCOPE, created.record_id).trust is trust


def test_revising_an_untrusted_record_with_user_sources_keeps_it_untrusted(
    stores: Stores,
) -> None:
    created = create(stores, "Probably likes jazz", sources=(MODEL,))

    (revised,) = stores.records.apply(
        SCOPE,
        [
            Revise(
                record_id=created.record_id,
                patch=RecordPatch(content="Likes jazz"),
                add_sources=(USER,),
            )
        ],
    )

    assert revised.trust is Trust.UNTRUSTED
    assert MODEL in revised.sources
    assert USER in revised.sources
    assert stores.records.get(SCOPE, created.record_id).trust is Trust.UNTRUSTED


def test_revising_a_trusted_record_with_a_tool_source_makes_it_untrusted(stores: Stores) -> None:
    created = create(stores, "Lives near the station")

    (revised,) = stores.records.apply(
        SCOPE,
        [
            Revise(
                record_id=created.record_id, patch=RecordPatch(importance=0.9), add_sources=(TOOL,)
            )
        ],
    )

    assert revised.trust is Trust.UNTRUSTED


def test_a_model_fold_in_makes_a_record_untrusted_for_good(
    stores: Stores, clock: FixedClock
) -> None:
    created = create(stores, "Speaks Japanese")
    assert created.trust is Trust.TRUSTED
    rid = created.record_id

    clock.advance(minutes=1)
    (folded,) = stores.records.apply(SCOPE, [FoldIn(record_id=rid, add_sources=(MODEL,))])
    assert folded.trust is Trust.UNTRUSTED
    for _ in range(3):
        clock.advance(minutes=1)
        stores.records.apply(SCOPE, [FoldIn(record_id=rid, add_sources=(USER, SYSTEM))])

    history = stores.records.history(SCOPE, rid)
    assert [v.trust for v in history] == [Trust.TRUSTED] + [Trust.UNTRUSTED] * 4
    assert stores.records.get(SCOPE, rid).seen_count == 5


def test_a_version_refuses_a_trust_that_disagrees_with_its_sources() -> None:
    fields = {
        "memory_id": SCOPE.memory_id,
        "actor_id": SCOPE.actor_id,
        "record_id": "mem-" + "0" * 36,
        "version": 1,
        "namespace": "/facts/a1/",
        "content": "Is left-handed",
        "content_digest": content_digest("Is left-handed"),
        "first_seen_at": "2026-01-01T00:00:00Z",
        "last_seen_at": "2026-01-01T00:00:00Z",
        "created_at": "2026-01-01T00:00:00Z",
    }
    RecordVersion.model_validate({**fields, "sources": [USER], "trust": Trust.TRUSTED})

    with pytest.raises(ValidationError):
        RecordVersion.model_validate({**fields, "sources": [USER, MODEL], "trust": Trust.TRUSTED})
    with pytest.raises(ValidationError):
        RecordVersion.model_validate({**fields, "sources": [USER], "trust": Trust.UNTRUSTED})
