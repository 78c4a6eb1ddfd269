"""Namespace prefixes match on segment boundaries: ``/facts/a1/`` never matches ``/facts/a10/``."""

from __future__ import annotations

import pytest

from cairn.ports import Stores
from tests.conformance.samples import create, listed_ids


@pytest.mark.parametrize("prefix", ["/facts/a1/", "/facts/a1"])
def test_a_namespace_prefix_respects_segment_boundaries(stores: Stores, prefix: str) -> None:
    a1 = create(stores, "Fact of a1", namespace="/facts/a1/")
    a1_sub = create(stores, "Fact of a1, deeper", namespace="/facts/a1/sub/")
    create(stores, "Fact of a10", namespace="/facts/a10/")
    create(stores, "Preference of a1", namespace="/preferences/a1/")

    assert sorted(listed_ids(stores, namespace_prefix=prefix)) == sorted(
        [a1.record_id, a1_sub.record_id]
    )


def test_a_partial_segment_prefix_matches_nothing(stores: Stores) -> None:
    create(stores, "Fact of a1", namespace="/facts/a1/")
    create(stores, "Fact of a10", namespace="/facts/a10/")

    assert listed_ids(stores, namespace_prefix="/facts/a") == []
    assert listed_ids(stores, namespace_prefix="/fact") == []


def test_the_root_prefix_and_no_prefix_list_every_namespace(stores: Stores) -> None:
    made = {
        create(stores, "Fact", namespace="/facts/a1/").record_id,
        create(stores, "Preference", namespace="/preferences/a1/").record_id,
        create(stores, "Summary", namespace="/summaries/a1/s1/").record_id,
    }

    assert set(listed_ids(stores, namespace_prefix="/")) == made
    assert set(listed_ids(stores)) == made


def test_a_narrower_prefix_excludes_the_parent_namespace(stores: Stores) -> None:
    create(stores, "Fact of a1", namespace="/facts/a1/")
    sub = create(stores, "Fact of a1, deeper", namespace="/facts/a1/sub/")

    assert listed_ids(stores, namespace_prefix="/facts/a1/sub/") == [sub.record_id]
