"""Property: any sequence of changes keeps heads, the live set, versions and trust consistent.

A plain-dict model replays the same operations; after every step the backend must agree with
it, and at the end every past moment must read back (``as_of``) exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.changes import Change, Create, FoldIn, RecordPatch, Retract, Revise, Supersede
from cairn.clock import FixedClock
from cairn.errors import InvalidChangeError, SnapshotConflictError
from cairn.models import TRUSTED_KINDS, Source, Status, Trust
from cairn.ports import Stores
from tests.conformance.backends import open_backend
from tests.conformance.samples import MODEL, SCOPE, SYSTEM, TOOL, USER, listed_ids, new_fact

Kind = Literal["create", "revise", "fold_in", "retract", "supersede", "stale_revise"]
Op = tuple[Kind, int, Source]

OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "revise", "fold_in", "retract", "supersede", "stale_revise"]),
        st.integers(min_value=0, max_value=15),
        st.sampled_from([USER, SYSTEM, MODEL, TOOL]),
    ),
    min_size=1,
    max_size=14,
)


@dataclass(frozen=True)
class Expected:
    version: int
    status: Status
    content: str
    seen_count: int
    trusted: bool


Model = dict[str, Expected]


def run(stores: Stores, model: Model, op: Op, step: int) -> Model:
    """Apply ``op`` to the backend and return what the model says the heads are now."""
    kind, pick, source = op
    trusted = source.kind in TRUSTED_KINDS
    if kind == "create" or not model:
        record = new_fact(f"fact {step}", sources=(source,))
        stores.records.apply(SCOPE, [Create(record=record)])
        return {**model, record.record_id: Expected(1, Status.ACTIVE, record.content, 1, trusted)}
    rid = sorted(model)[pick % len(model)]
    old = model[rid]
    if kind == "stale_revise":
        with pytest.raises(SnapshotConflictError):
            stores.records.apply(SCOPE, [FoldIn(record_id=rid)], snapshot={rid: old.version + 1})
        return model
    change, new = planned(kind, rid, old, source, step)
    if old.status is not Status.ACTIVE:
        with pytest.raises(InvalidChangeError):
            stores.records.apply(SCOPE, [change])
        return model
    stores.records.apply(SCOPE, [change])
    return {**model, **new}


def planned(kind: Kind, rid: str, old: Expected, source: Source, step: int) -> tuple[Change, Model]:
    bumped = replace(old, version=old.version + 1)
    trusted = old.trusted and source.kind in TRUSTED_KINDS
    if kind == "revise":
        content = f"fact {step} (revised)"
        change: Change = Revise(
            record_id=rid, patch=RecordPatch(content=content), add_sources=(source,)
        )
        return change, {rid: replace(bumped, content=content, trusted=trusted)}
    if kind == "fold_in":
        change = FoldIn(record_id=rid, add_sources=(source,))
        return change, {rid: replace(bumped, seen_count=old.seen_count + 1, trusted=trusted)}
    if kind == "retract":
        return Retract(record_id=rid), {rid: replace(bumped, status=Status.RETRACTED)}
    replacement = new_fact(f"fact {step} (replacement)", sources=(source,))
    successor = Expected(1, Status.ACTIVE, replacement.content, 1, source.kind in TRUSTED_KINDS)
    return Supersede(record_id=rid, replacement=replacement), {
        rid: replace(bumped, status=Status.SUPERSEDED),
        replacement.record_id: successor,
    }


def check_agrees(stores: Stores, model: Model) -> None:
    for rid, want in model.items():
        head = stores.records.get(SCOPE, rid)
        seen = (head.version, head.status, head.content, head.seen_count, head.trust)
        trust = Trust.TRUSTED if want.trusted else Trust.UNTRUSTED
        assert seen == (want.version, want.status, want.content, want.seen_count, trust)
        history = stores.records.history(SCOPE, rid)
        assert [v.version for v in history] == list(range(1, want.version + 1))
        trusts = [v.trust for v in history]
        assert trusts == sorted(trusts, key=lambda t: t is Trust.UNTRUSTED), "trust rose"
    live = sorted(rid for rid, want in model.items() if want.status is Status.ACTIVE)
    assert listed_ids(stores) == live
    assert listed_ids(stores, include_inactive=True) == sorted(model)


# The only function-scoped fixture used is the backend's name, an immutable string; every
# example opens its own fresh backend, so nothing leaks between examples.
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_random_change_sequences_keep_heads_live_set_and_trust_consistent(
    backend_name: str, tmp_path_factory: pytest.TempPathFactory, ops: list[Op]
) -> None:
    clock = FixedClock()
    stores = open_backend(backend_name, clock, tmp_path_factory.mktemp(backend_name))
    moments: list[tuple[datetime, dict[str, tuple[int, str]]]] = []
    model: Model = {}
    try:
        for step, op in enumerate(ops):
            clock.advance(seconds=1)
            model = run(stores, model, op, step)
            check_agrees(stores, model)
            live = {
                r: (e.version, e.content) for r, e in model.items() if e.status is Status.ACTIVE
            }
            moments.append((clock.now(), live))
        for moment, live in moments:
            page = stores.records.list_records(SCOPE, as_of=moment + timedelta(milliseconds=500))
            assert {v.record_id: (v.version, v.content) for v in page.items} == live
    finally:
        stores.close()
