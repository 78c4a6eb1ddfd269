"""Links beside the records and access counts (``cairn.links``), on every backend."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from cairn.changes import Retract
from cairn.clock import FixedClock
from cairn.erasure import erase_actor
from cairn.erasure_lineage import erase_record
from cairn.errors import CountedMeanwhileError, InvalidInputError, RecordNotFoundError
from cairn.history.axes import neighbors
from cairn.links import Link
from cairn.models import EdgeKind, Scope, Source, SourceKind, Trust
from cairn.ports import AccessCounts, LinkStore, Stores
from tests.conformance.samples import MODEL, OTHER_ACTOR, SCOPE, USER, create
from tests.conformance.test_erase_races import stored_bytes

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# A source only the link carries, so a byte scan can tell whether the link is still stored.
LINKER = Source(kind=SourceKind.MODEL, run_id="run-linker-zq81x")


def links_of(stores: Stores) -> LinkStore:
    assert stores.links is not None, "every backend keeps links"
    return stores.links


def access_of(stores: Stores) -> AccessCounts:
    assert stores.access is not None, "every backend keeps access counts"
    return stores.access


def link(
    from_id: str,
    to_id: str,
    kind: EdgeKind = EdgeKind.RELATES_TO,
    *,
    scope: Scope = SCOPE,
    sources: tuple[Source, ...] = (LINKER,),
) -> Link:
    return Link(
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        from_id=from_id,
        kind=kind,
        to_id=to_id,
        sources=sources,
        created_at=T0,
    )


def test_a_link_is_stored_once_and_read_from_both_ends(stores: Stores) -> None:
    a = create(stores, "The hive is by the north fence")
    b = create(stores, "The bees were moved in April")
    store = links_of(stores)

    first = store.put(SCOPE, link(a.record_id, b.record_id))
    again = store.put(
        SCOPE, link(a.record_id, b.record_id).model_copy(update={"created_at": datetime.now(UTC)})
    )

    assert again == first  # idempotent: the first stays, unchanged
    assert store.links_of(SCOPE, a.record_id) == (first,)
    assert store.links_of(SCOPE, b.record_id) == (first,)
    assert store.links_of(OTHER_ACTOR, a.record_id) == ()
    other_kind = store.put(SCOPE, link(a.record_id, b.record_id, EdgeKind.CAUSED_BY))
    assert len(store.links_of(SCOPE, a.record_id)) == 2
    assert other_kind.kind is EdgeKind.CAUSED_BY


def test_a_model_proposed_link_is_untrusted_and_changes_neither_record(stores: Stores) -> None:
    a = create(stores, "I keep bees", sources=(USER,))
    b = create(stores, "The hive is by the fence", sources=(USER,))

    stored = links_of(stores).put(SCOPE, link(a.record_id, b.record_id))

    assert stored.trust is Trust.UNTRUSTED
    assert link(a.record_id, b.record_id, sources=(USER,)).trust is Trust.TRUSTED
    for record in (a, b):
        assert stores.records.get(SCOPE, record.record_id) == record
        assert len(stores.records.history(SCOPE, record.record_id)) == 1


@pytest.mark.parametrize("kind", [EdgeKind.CONTRADICTS])
def test_a_kind_outside_the_vocabulary_is_refused(stores: Stores, kind: EdgeKind) -> None:
    a = create(stores, "one")
    b = create(stores, "two")

    with pytest.raises(InvalidInputError, match="not in the vocabulary"):
        links_of(stores).put(SCOPE, link(a.record_id, b.record_id, kind))
    assert links_of(stores).links_of(SCOPE, a.record_id) == ()


def test_an_invented_kind_cannot_even_be_written_down() -> None:
    with pytest.raises(ValueError, match="kind"):
        Link.model_validate(
            {**link("mem-" + "a" * 36, "mem-" + "b" * 36).model_dump(), "kind": "x"}
        )


def test_a_link_across_scopes_or_to_a_missing_or_erased_record_is_refused(
    stores: Stores,
) -> None:
    a = create(stores, "mine")
    theirs = create(stores, "theirs", scope=OTHER_ACTOR, namespace="/facts/a2/")
    gone = create(stores, "to be erased")
    stores.records.erase(SCOPE, gone.record_id)
    store = links_of(stores)

    with pytest.raises(InvalidInputError, match="another scope"):
        store.put(SCOPE, link(a.record_id, theirs.record_id, scope=OTHER_ACTOR))
    with pytest.raises(RecordNotFoundError):
        store.put(SCOPE, link(a.record_id, theirs.record_id))  # not a record of this scope
    with pytest.raises(RecordNotFoundError):
        store.put(SCOPE, link(a.record_id, gone.record_id))
    with pytest.raises(InvalidInputError, match="two different records"):
        store.put(SCOPE, link(a.record_id, a.record_id))
    assert store.links_of(SCOPE, a.record_id) == ()
    assert store.links_of(OTHER_ACTOR, theirs.record_id) == ()


def test_neighbors_walk_links_beside_the_edges_labelled_by_trust(stores: Stores) -> None:
    a = create(stores, "I keep bees")
    b = create(stores, "The hive is by the fence")
    c = create(stores, "Honey sells at the market", sources=(MODEL,))
    links_of(stores).put(SCOPE, link(a.record_id, b.record_id))
    links_of(stores).put(SCOPE, link(c.record_id, a.record_id, sources=(USER,)))

    found = neighbors(stores.records, SCOPE, a.record_id, links=stores.links)
    only = neighbors(
        stores.records, SCOPE, a.record_id, links=stores.links, kinds=frozenset({EdgeKind.PART_OF})
    )

    assert sorted((n.direction, n.target, n.trust, n.via) for n in found) == sorted(
        [
            ("out", b.record_id, Trust.UNTRUSTED, "link"),
            ("in", c.record_id, Trust.TRUSTED, "link"),
        ]
    )
    assert all(n.record is not None for n in found)
    assert only == ()
    assert neighbors(stores.records, SCOPE, a.record_id) == ()  # without the link store


def test_a_retracted_end_is_reported_unresolved(stores: Stores) -> None:
    a = create(stores, "one")
    b = create(stores, "two")
    links_of(stores).put(SCOPE, link(a.record_id, b.record_id))
    stores.records.apply(SCOPE, [Retract(record_id=b.record_id)])

    (found,) = neighbors(stores.records, SCOPE, a.record_id, links=stores.links)

    assert (found.target, found.record) == (b.record_id, None)


def test_erasing_a_record_or_an_actor_removes_its_links_and_counts(
    backend_name: str, stores: Stores, tmp_path: Path
) -> None:
    a = create(stores, "one")
    b = create(stores, "two")
    c = create(stores, "three")
    d = create(stores, "theirs", scope=OTHER_ACTOR, namespace="/facts/a2/")
    e = create(stores, "theirs too", scope=OTHER_ACTOR, namespace="/facts/a2/")
    store = links_of(stores)
    store.put(SCOPE, link(a.record_id, b.record_id))
    store.put(SCOPE, link(b.record_id, c.record_id, EdgeKind.PART_OF))
    store.put(OTHER_ACTOR, link(d.record_id, e.record_id, scope=OTHER_ACTOR))
    access_of(stores).add(SCOPE, {a.record_id: 2, b.record_id: 1}, after=0, upto=3)

    erased_one = erase_record(stores, SCOPE, b.record_id, staging=None, clock=FixedClock())

    assert erased_one.links == 2
    assert store.links_of(SCOPE, a.record_id) == ()
    assert store.links_of(SCOPE, c.record_id) == ()
    assert access_of(stores).counts(SCOPE) == {a.record_id: 2}
    assert len(store.links_of(OTHER_ACTOR, d.record_id)) == 1
    if backend_name != "memory":
        assert b"run-linker-zq81x" in stored_bytes(backend_name, tmp_path)  # the other actor's

    erased = erase_actor(stores, OTHER_ACTOR, staging=None)

    assert erased.links == 1
    assert store.links_of(OTHER_ACTOR, d.record_id) == ()
    if backend_name != "memory":
        assert b"run-linker-zq81x" not in stored_bytes(backend_name, tmp_path)


def test_counts_move_with_their_cursor_exactly_once(stores: Stores) -> None:
    counts = access_of(stores)
    assert (counts.cursor(SCOPE), counts.counts(SCOPE)) == (0, {})

    counts.add(SCOPE, {"mem-" + "a" * 36: 2}, after=0, upto=4)
    with pytest.raises(CountedMeanwhileError):
        counts.add(SCOPE, {"mem-" + "a" * 36: 2}, after=0, upto=4)  # a rerun of the same span
    counts.add(SCOPE, {"mem-" + "a" * 36: 1, "mem-" + "b" * 36: 1}, after=4, upto=6)

    assert counts.cursor(SCOPE) == 6
    assert counts.counts(SCOPE) == {"mem-" + "a" * 36: 3, "mem-" + "b" * 36: 1}
    assert counts.cursor(OTHER_ACTOR) == 0
    assert counts.counts(OTHER_ACTOR) == {}


@pytest.mark.parametrize(
    ("counts", "after", "upto", "message"),
    [
        ({"mem-" + "a" * 36: 0}, 0, 1, "at least 1"),
        ({"mem-" + "a" * 36: 1}, 3, 3, "moves forward"),
        ({f"mem-{i:036d}": 1 for i in range(91)}, 0, 1, "at most 90"),
    ],
)
def test_a_bad_count_is_refused_and_changes_nothing(
    stores: Stores, counts: dict[str, int], after: int, upto: int, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        access_of(stores).add(SCOPE, counts, after=after, upto=upto)
    assert access_of(stores).cursor(SCOPE) == 0
    assert access_of(stores).counts(SCOPE) == {}
