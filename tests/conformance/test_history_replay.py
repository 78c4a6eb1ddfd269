"""A recall over records, turns and chunks is journalled and replays byte for byte, without
searching, on every backend (``cairn.history.journalled``)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.erasure import erase_session
from cairn.history.journalled import replay
from cairn.history.pyramid import level_one_chunk
from cairn.history.search import recall_both
from cairn.history.turns import turns_after
from cairn.journal_chain import verify_scope
from cairn.models import Role
from cairn.ports import Stores
from cairn.recall import recall
from cairn.recall.index.passages import PassageIndex
from cairn.recall.query import RecallQuery
from cairn.testing import HashingEmbedder
from tests.conformance.samples import SCOPE
from tests.conformance.test_history_search import remember, say

EMBEDDER = HashingEmbedder()
MARCH = datetime(2023, 3, 14, 18, 0, tzinfo=UTC)
WALL = datetime(2026, 6, 1, tzinfo=UTC)


class _NoListing:
    """A store that may be read by id but never listed or searched: replay must not search."""

    _REFUSED = frozenset(
        {"list_events", "list_sessions", "list_chunks", "chunk_sessions", "list_records"}
    )

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in self._REFUSED or name.startswith("index_rows"):
            raise AssertionError(f"replay searched: it called {name}")
        return getattr(self._inner, name)


def _unsearchable(stores: Stores) -> Stores:
    chunks = _NoListing(stores.chunks) if stores.chunks is not None else None
    return dataclasses.replace(
        stores,
        records=_NoListing(stores.records),
        events=_NoListing(stores.events),
        chunks=chunks,
    )


def _conversation(stores: Stores, clock: FixedClock) -> tuple[str, str, str]:
    assert stores.chunks is not None
    record = remember(stores, "The user drinks oolong tea every morning")
    turn = say(stores, "s1", MARCH, "I brewed oolong tea in March")
    say(
        stores,
        "s1",
        MARCH + timedelta(minutes=1),
        "oolong tea again, said the assistant",
        Role.ASSISTANT,
    )
    for i in range(2, 10):
        say(stores, "s1", MARCH + timedelta(minutes=i), f"the stock market moved {i} points")
    turns = turns_after(stores.events, SCOPE, "s1", None)
    chunk = stores.chunks.put(
        SCOPE, level_one_chunk(SCOPE, turns, "topics: oolong tea, stocks", MARCH)
    )
    clock.set(WALL)
    return record, turn, chunk.chunk_id


def _ask(stores: Stores, clock: FixedClock, text: str = "oolong tea last March") -> Any:
    return recall_both(
        SCOPE,
        RecallQuery(text=text),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        index=PassageIndex(),
    )


def test_a_recall_of_both_channels_replays_byte_for_byte_without_searching(
    stores: Stores, clock: FixedClock
) -> None:
    record, turn, chunk = _conversation(stores, clock)
    found = _ask(stores, clock)
    refs = {(h.kind, h.ref) for h in found.hits}
    assert {("records", record), ("turns", turn), ("chunks", chunk)} <= refs
    assert any(h.in_period for h in found.hits)
    assert found.journal_id is not None

    replayed = replay(SCOPE, found.journal_id, stores=_unsearchable(stores))

    assert replayed.matches, replayed
    assert replayed.block == found.block
    entry = replayed.journal
    assert entry.channels == ("chunks", "records", "turns")
    assert [(p.kind, p.ref) for p in entry.shown] == [(h.kind, h.ref) for h in found.hits]
    assert [s.record_id for s in entry.selected] == [record]
    assert entry.sequence >= 1
    verify_scope(stores.journal, SCOPE)


def test_later_turns_and_records_do_not_change_a_replay(stores: Stores, clock: FixedClock) -> None:
    _conversation(stores, clock)
    found = _ask(stores, clock)
    say(stores, "s1", MARCH + timedelta(hours=1), "oolong tea is the best tea in March")
    remember(stores, "The user prefers oolong tea to green tea")

    assert found.journal_id is not None
    replayed = replay(SCOPE, found.journal_id, stores=stores)
    assert replayed.matches
    assert replayed.block == found.block


def test_an_erased_record_shows_as_erased_and_the_replay_says_it_differs(
    stores: Stores, clock: FixedClock
) -> None:
    record, _, _ = _conversation(stores, clock)
    found = _ask(stores, clock)
    stores.records.erase(SCOPE, record)

    assert found.journal_id is not None
    replayed = replay(SCOPE, found.journal_id, stores=stores)
    assert not replayed.matches
    assert replayed.erased == (record,)
    assert "(erased)" in replayed.block
    assert "drinks oolong" not in replayed.block


def test_an_erased_session_leaves_its_turns_and_chunks_out_and_the_replay_says_so(
    stores: Stores, clock: FixedClock
) -> None:
    record, turn, chunk = _conversation(stores, clock)
    found = _ask(stores, clock)
    erase_session(stores, SCOPE, "s1")

    assert found.journal_id is not None
    replayed = replay(SCOPE, found.journal_id, stores=stores)
    assert not replayed.matches
    assert {turn, chunk} <= set(replayed.missing)
    assert record not in replayed.missing
    assert "brewed" not in replayed.block
    assert "topics:" not in replayed.block


def test_records_only_entries_still_replay_through_the_same_call(
    stores: Stores, clock: FixedClock
) -> None:
    remember(stores, "The user drinks oolong tea every morning")
    found = recall(
        SCOPE, RecallQuery(text="oolong tea"), stores=stores, embedder=EMBEDDER, clock=clock
    )
    assert found.journal_id is not None
    replayed = replay(SCOPE, found.journal_id, stores=stores)
    assert replayed.matches
    assert replayed.block == found.block
    assert replayed.journal.channels == ()


def test_without_journal_nothing_is_filed(stores: Stores, clock: FixedClock) -> None:
    _conversation(stores, clock)
    found = recall_both(
        SCOPE,
        RecallQuery(text="oolong tea"),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        journal=False,
    )
    assert found.journal_id is None
    assert found.hits
    assert stores.journal.head(SCOPE) is None


@pytest.mark.parametrize("text", ["oolong tea", "stock market"])
def test_the_block_is_what_render_hits_shows(stores: Stores, clock: FixedClock, text: str) -> None:
    from cairn.history.search import render_hits

    _conversation(stores, clock)
    found = _ask(stores, clock, text)
    assert found.block == render_hits(found)
