"""Recall over history stays warm while the scope's turns and chunks are unchanged
(``cairn.history.listing``), and sees every change on the next call, on every backend."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from cairn.clock import FixedClock
from cairn.erasure import erase_session
from cairn.history.axes import about_time, by_period
from cairn.history.search import recall_both
from cairn.ports import Stores
from cairn.recall.query import RecallQuery
from cairn.store.memory import InMemoryBackend
from cairn.testing import HashingEmbedder
from tests.conformance.samples import SCOPE
from tests.conformance.test_history_replay import _NoListing
from tests.conformance.test_history_search import say

EMBEDDER = HashingEmbedder()
T0 = datetime(2023, 3, 14, 18, 0, tzinfo=UTC)


def _refs(stores: Stores, clock: FixedClock, text: str) -> list[str]:
    found = recall_both(
        SCOPE,
        RecallQuery(text=text),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        kinds=frozenset({"turns", "chunks"}),
        journal=False,
    )
    return [hit.ref for hit in found.hits]


def _unlistable(stores: Stores) -> Stores:
    chunks = _NoListing(stores.chunks) if stores.chunks is not None else None
    return dataclasses.replace(stores, events=_NoListing(stores.events), chunks=chunks)


def test_an_unchanged_scope_is_not_listed_again_and_a_change_is_seen_next(
    stores: Stores, clock: FixedClock
) -> None:
    assert stores.history_generations is not None
    tea = say(stores, "s1", T0, "I brewed oolong tea")
    first = _refs(stores, clock, "oolong tea")
    assert first == [tea]
    # Nothing changed: the second call answers the same without listing a turn or a chunk.
    assert _refs(_unlistable(stores), clock, "oolong tea") == first

    again = say(stores, "s2", T0 + timedelta(days=1), "oolong tea once more")
    assert set(_refs(stores, clock, "oolong tea")) == {tea, again}
    stores.events.delete_event(SCOPE, "s1", tea)
    assert _refs(stores, clock, "oolong tea") == [again]
    erase_session(stores, SCOPE, "s2")
    assert _refs(stores, clock, "oolong tea") == []


def test_two_backends_whose_generations_agree_never_share_a_list(clock: FixedClock) -> None:
    one, two = InMemoryBackend(clock).stores(), InMemoryBackend(clock).stores()
    said_one = say(one, "s1", T0, "oolong tea in the first store")
    say(two, "s1", T0, "the stock market moved")
    assert _refs(one, clock, "oolong tea") == [said_one]
    # Both at generation 1: the second store's turn must be scored by its own words.
    assert _refs(two, clock, "oolong tea") == []


def _in_march(stores: Stores) -> list[str]:
    found = by_period(
        stores.records,
        stores.events,
        stores.chunks,
        SCOPE,
        datetime(2023, 3, 1, tzinfo=UTC),
        datetime(2023, 3, 31, tzinfo=UTC),
        kinds=frozenset({"turns", "chunks"}),
        stores=stores,
    )
    return [hit.ref for hit in found]


def _asked_about_march(stores: Stores) -> list[str]:
    found = about_time(
        stores.records,
        stores.events,
        stores.chunks,
        SCOPE,
        "what did we say in March 2023?",
        kinds=frozenset({"turns", "chunks"}),
        stores=stores,
    )
    return [hit.ref for hit in found]


def test_the_time_axes_read_the_kept_list_while_unchanged_and_see_a_new_turn_next(
    stores: Stores,
) -> None:
    assert stores.history_generations is not None
    tea = say(stores, "s1", T0, "I brewed oolong tea")
    assert _in_march(stores) == [tea]
    assert _asked_about_march(stores) == [tea]
    # Nothing changed: neither axis lists a turn or a chunk again.
    assert _in_march(_unlistable(stores)) == [tea]
    assert _asked_about_march(_unlistable(stores)) == [tea]

    later = say(stores, "s2", T0 + timedelta(days=1), "and green tea the day after")
    assert _in_march(stores) == [tea, later]
    assert _asked_about_march(stores) == [tea, later]
    assert _in_march(_unlistable(stores)) == [tea, later]
