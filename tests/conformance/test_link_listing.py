"""What an export and an import need of the link store and the access counts, on every backend:
every link of a scope in one listing, and counts raised to a floor without moving the cursor."""

from __future__ import annotations

import pytest

from cairn.errors import InvalidInputError
from cairn.models import EdgeKind
from cairn.ports import Stores
from tests.conformance.samples import OTHER_ACTOR, SCOPE, USER, create
from tests.conformance.test_links import access_of, link, links_of

A, B = "mem-" + "a" * 36, "mem-" + "b" * 36


def test_every_link_of_a_scope_is_listed_once_in_key_order(stores: Stores) -> None:
    one, two, three = (create(stores, text) for text in ("one", "two", "three"))
    theirs = create(stores, "theirs", scope=OTHER_ACTOR, namespace="/facts/a2/")
    also = create(stores, "theirs too", scope=OTHER_ACTOR, namespace="/facts/a2/")
    store = links_of(stores)
    made = [
        store.put(SCOPE, link(three.record_id, one.record_id, EdgeKind.PART_OF)),
        store.put(SCOPE, link(one.record_id, two.record_id)),
        store.put(SCOPE, link(one.record_id, two.record_id, EdgeKind.CAUSED_BY, sources=(USER,))),
    ]
    store.put(OTHER_ACTOR, link(theirs.record_id, also.record_id, scope=OTHER_ACTOR))

    listed = tuple(store.every_link(SCOPE))

    assert listed == tuple(sorted(made, key=lambda found: found.key))
    assert [found.trust for found in listed] == [
        found.trust for found in sorted(made, key=lambda f: f.key)
    ]
    assert len(tuple(store.every_link(OTHER_ACTOR))) == 1


def test_raising_counts_never_lowers_nor_adds_and_leaves_the_cursor(stores: Stores) -> None:
    counts = access_of(stores)
    counts.add(SCOPE, {A: 3}, after=0, upto=5)

    raised = counts.raise_counts(SCOPE, {A: 2, B: 4})
    again = counts.raise_counts(SCOPE, {A: 2, B: 4})
    higher = counts.raise_counts(SCOPE, {A: 7})

    assert (raised, again, higher) == (1, 0, 1)
    assert counts.counts(SCOPE) == {A: 7, B: 4}
    assert counts.cursor(SCOPE) == 5
    assert counts.counts(OTHER_ACTOR) == {}
    counts.add(SCOPE, {B: 1}, after=5, upto=6)  # counting goes on from the same cursor
    assert counts.counts(SCOPE) == {A: 7, B: 5}


def test_raising_a_bad_count_is_refused_and_changes_nothing(stores: Stores) -> None:
    counts = access_of(stores)

    with pytest.raises(InvalidInputError, match="at least 1"):
        counts.raise_counts(SCOPE, {A: 2, B: 0})
    with pytest.raises(InvalidInputError, match="at most 90"):
        counts.raise_counts(SCOPE, {f"mem-{i:036d}": 1 for i in range(91)})
    assert counts.counts(SCOPE) == {}
