"""Restoring a record's history as it was (``RecordStore.restore``), on every backend: every
version comes back with its ids, numbers, sources, trust, status, links, times and tombstones;
the restored record reads, lists, recalls and moves on like one the store wrote itself; and a
history that would collide with what the store holds, or that is not a chain of this scope
whose trust only falls, is refused with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.changes import Create, FoldIn, RecordPatch, Retract, Revise, Supersede, Vector
from cairn.clock import FixedClock
from cairn.errors import InvalidInputError, RecordNotFoundError, RecordTakenError
from cairn.models import Edge, EdgeKind, RecordVersion, Status
from cairn.ports import Stores, change_kind
from cairn.recall import RecallQuery, recall
from cairn.testing import HashingEmbedder
from tests.conformance.backends import open_backend
from tests.conformance.samples import MODEL, OTHER_ACTOR, SCOPE, USER, new_fact, vector
from tests.conformance.test_record_changes import require_feed

EMBEDDER = HashingEmbedder(dims=16)


def _embedded(content: str) -> tuple[float, ...]:
    return tuple(float(x) for x in EMBEDDER.embed([content])[0])


def _build_histories(stores: Stores, clock: FixedClock) -> list[tuple[RecordVersion, ...]]:
    """Every kind of version a store writes: create, fold-in, revise, retract, supersede (with
    an edge), erase; each step a second apart."""
    tea = new_fact("Prefers green tea", sources=(USER,))
    tea = tea.model_copy(
        update={"vector": vector(*_embedded(tea.content), embedder=EMBEDDER.identity)}
    )
    (first,) = stores.records.apply(SCOPE, [Create(record=tea)])
    clock.advance(seconds=1)
    stores.records.apply(SCOPE, [FoldIn(record_id=first.record_id, add_sources=(USER,))])
    clock.advance(seconds=1)
    stores.records.apply(
        SCOPE,
        [
            Revise(
                record_id=first.record_id,
                patch=RecordPatch(confidence=0.8),
                add_sources=(MODEL,),
            )
        ],
    )
    (city,) = stores.records.apply(SCOPE, [Create(record=new_fact("Lives in Lyon"))])
    clock.advance(seconds=1)
    moved = new_fact("Lives in Oslo").model_copy(
        update={"edges": (Edge(kind=EdgeKind.RELATES_TO, target=first.record_id),)}
    )
    stores.records.apply(SCOPE, [Supersede(record_id=city.record_id, replacement=moved)])
    (dog,) = stores.records.apply(SCOPE, [Create(record=new_fact("Has a dog named Milo"))])
    clock.advance(seconds=1)
    stores.records.apply(SCOPE, [Retract(record_id=dog.record_id, reason="no longer")])
    (secret,) = stores.records.apply(SCOPE, [Create(record=new_fact("A secret to erase"))])
    stores.records.erase(SCOPE, secret.record_id)
    ids = [first.record_id, city.record_id, dog.record_id, secret.record_id]
    ids += [v.record_id for v in stores.records.list_records(SCOPE).items if v.supersedes]
    return [stores.records.history(SCOPE, rid) for rid in ids]


def _vectors(histories: list[tuple[RecordVersion, ...]]) -> dict[str, Vector]:
    """What an importer embeds: a vector for the words of every version not erased."""
    return {
        v.content_digest: vector(*_embedded(v.content), embedder=EMBEDDER.identity)
        for history in histories
        for v in history
        if v.status is not Status.ERASED
    }


def _fresh(backend_name: str, clock: FixedClock, tmp_path: Path) -> Stores:
    target = tmp_path / "target"
    target.mkdir()
    return open_backend(backend_name, clock, target)


def test_every_version_comes_back_as_it_was(
    stores: Stores, backend_name: str, clock: FixedClock, tmp_path: Path
) -> None:
    histories = _build_histories(stores, clock)
    vectors = _vectors(histories)
    target = _fresh(backend_name, clock, tmp_path)
    try:
        for history in histories:
            assert target.records.restore(SCOPE, history, vectors=vectors) == history
        for history in histories:
            assert target.records.history(SCOPE, history[0].record_id) == history
        assert target.records.actors(SCOPE.memory_id) == (SCOPE.actor_id,)  # erase finds it
        for inactive in (False, True):
            listed = target.records.list_records(SCOPE, include_inactive=inactive).items
            source = stores.records.list_records(SCOPE, include_inactive=inactive).items
            assert listed == source
        at = histories[0][1].created_at  # between the fold-in and the revision
        assert target.records.list_records(SCOPE, as_of=at).items == (
            stores.records.list_records(SCOPE, as_of=at).items
        )
        refs = [v.ref for history in histories for v in history]
        restored = target.records.vectors(SCOPE, refs, EMBEDDER.identity)
        assert set(restored) == set(stores.records.vectors(SCOPE, refs, EMBEDDER.identity))
    finally:
        target.close()


def test_a_restored_record_is_recalled_and_moves_on_like_any_other(
    stores: Stores, backend_name: str, clock: FixedClock, tmp_path: Path
) -> None:
    histories = _build_histories(stores, clock)
    target = _fresh(backend_name, clock, tmp_path)
    query = RecallQuery(text="green tea")
    try:
        assert recall(SCOPE, query, stores=target, embedder=EMBEDDER, clock=clock).entries == ()
        for history in histories:
            target.records.restore(SCOPE, history, vectors=_vectors(histories))
        found = recall(SCOPE, query, stores=target, embedder=EMBEDDER, clock=clock)
        source = recall(SCOPE, query, stores=stores, embedder=EMBEDDER, clock=clock)
        tea = histories[0]
        assert tea[-1].ref in [e.version.ref for e in found.entries]
        assert found.block == source.block
        clock.advance(seconds=1)
        (next_version,) = target.records.apply(
            SCOPE, [Retract(record_id=tea[0].record_id, reason="changed")]
        )
        assert next_version.version == len(tea) + 1
        assert next_version.trust == tea[-1].trust
    finally:
        target.close()


def test_a_record_id_the_store_holds_is_refused_and_nothing_is_written(
    stores: Stores, clock: FixedClock
) -> None:
    histories = _build_histories(stores, clock)
    before = [stores.records.history(SCOPE, h[0].record_id) for h in histories]

    for history in histories:
        with pytest.raises(RecordTakenError, match=history[0].record_id) as refused:
            stores.records.restore(SCOPE, history)
        assert not refused.value.retryable

    assert [stores.records.history(SCOPE, h[0].record_id) for h in histories] == before


def _refused(stores: Stores, history: tuple[RecordVersion, ...], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        stores.records.restore(SCOPE, history)
    for version in history:
        with pytest.raises(RecordNotFoundError, match=version.record_id):
            stores.records.history(SCOPE, version.record_id)


def test_a_history_that_is_not_a_chain_of_this_scope_is_refused(
    stores: Stores, backend_name: str, clock: FixedClock, tmp_path: Path
) -> None:
    tea, city = _build_histories(stores, clock)[:2]
    target = _fresh(backend_name, clock, tmp_path)
    try:
        _refused(target, (), "no versions")
        _refused(target, tea[1:], "version 1")
        _refused(target, (tea[0], tea[2]), "version 2")
        _refused(target, (tea[0], city[1]), "one record")
        elsewhere = tuple(v.model_copy(update={"actor_id": OTHER_ACTOR.actor_id}) for v in tea)
        _refused(target, elsewhere, "scope")
        backwards = (tea[1], tea[0].model_copy(update={"version": 2}))
        _refused(target, (backwards[0].model_copy(update={"version": 1}), backwards[1]), "time")
    finally:
        target.close()


def test_trust_never_rises_along_a_restored_history(
    stores: Stores, backend_name: str, clock: FixedClock, tmp_path: Path
) -> None:
    tea = _build_histories(stores, clock)[0]
    assert (tea[1].trust.value, tea[2].trust.value) == ("trusted", "untrusted")
    target = _fresh(backend_name, clock, tmp_path)
    laundered = (
        tea[0],
        tea[2].model_copy(update={"version": 2}),
        tea[1].model_copy(update={"version": 3, "created_at": tea[2].created_at}),
    )
    try:
        _refused(target, laundered, "trust")
    finally:
        target.close()


def test_a_restore_is_in_the_change_feed_as_each_version_it_wrote_or_one_erasure(
    stores: Stores, backend_name: str, clock: FixedClock, tmp_path: Path
) -> None:
    histories = _build_histories(stores, clock)
    target = _fresh(backend_name, clock, tmp_path)
    try:
        feed = require_feed(target, backend_name)
        for history in histories:
            target.records.restore(SCOPE, history)
        seen = [(c.record_id, c.version, c.kind) for c in feed.scope_changes(SCOPE, limit=1000)]
        refused = len(seen)
        with pytest.raises(RecordTakenError):
            target.records.restore(SCOPE, histories[0])
        # a refused restore leaves none
        assert len(feed.scope_changes(SCOPE, limit=1000)) == refused
    finally:
        target.close()

    expected = []
    for history in histories:
        if history[-1].status is Status.ERASED:
            expected.append((history[-1].record_id, history[-1].version, "erased"))
        else:
            expected += [(v.record_id, v.version, change_kind(v)) for v in history]
    assert seen == expected
