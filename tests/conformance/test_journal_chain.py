"""The recall journal is a hash chain per scope, on every backend (issue 17, class 8): each
entry links to the one before it in its scope, and an entry deleted, edited or moved behind
the store's back (the SQLite file, the moto table, the in-memory fake) is named by replay and by
``verify_scope`` instead of being believed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.errors import JournalChainError
from cairn.journal_chain import chain_digest, verify_scope
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.replay import replay
from tests.conformance.samples import OTHER_ACTOR, SCOPE, create, journal_entry
from tests.conformance.tamper import rewrite_journal


def _recalls(stores: Stores, clock: FixedClock, count: int) -> list[str]:
    create(stores, "Allergic to penicillin")
    ids = []
    for i in range(count):
        found = recall(
            SCOPE, RecallQuery(text=f"penicillin {i}"), stores=stores, embedder=None, clock=clock
        )
        assert found.journal_id is not None
        ids.append(found.journal_id)
        clock.advance(seconds=1)
    return ids


def test_each_entry_links_to_the_one_before_it_in_its_scope(stores: Stores) -> None:
    for journal_id in ("j-1", "j-2", "j-3"):
        stores.journal.put(journal_entry(journal_id))
    stores.journal.put(journal_entry("j-1", OTHER_ACTOR))

    chain = stores.journal.chain(SCOPE)

    assert [(e.journal_id, e.sequence) for e in chain] == [("j-1", 1), ("j-2", 2), ("j-3", 3)]
    assert chain[0].previous is None
    assert [e.previous for e in chain[1:]] == [chain_digest(e) for e in chain[:-1]]
    head = stores.journal.head(SCOPE)
    assert head is not None
    assert (head.sequence, head.digest) == (3, chain_digest(chain[-1]))
    assert stores.journal.chain(SCOPE, after=2) == chain[2:]
    assert verify_scope(stores.journal, SCOPE) == 3
    assert [e.sequence for e in stores.journal.chain(OTHER_ACTOR)] == [1]


def test_a_second_put_of_an_entry_changes_nothing(stores: Stores) -> None:
    stores.journal.put(journal_entry("j-1"))
    stores.journal.put(journal_entry("j-1").model_copy(update={"query": "something else"}))

    (only,) = stores.journal.chain(SCOPE)
    assert only.query == journal_entry("j-1").query
    assert verify_scope(stores.journal, SCOPE) == 1


def _edited_query(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "query": "what did the user never ask?"}


def test_an_edited_entry_is_named_by_replay_and_verify(
    stores: Stores, clock: FixedClock, backend_name: str, tmp_path: Path
) -> None:
    first, second, third = _recalls(stores, clock, 3)
    assert replay(SCOPE, first, stores=stores).matches

    rewrite_journal(backend_name, stores, tmp_path, SCOPE, second, _edited_query)

    with pytest.raises(JournalChainError, match=second):
        replay(SCOPE, first, stores=stores)  # a later link no longer matches
    with pytest.raises(JournalChainError, match=second):
        replay(SCOPE, second, stores=stores)
    with pytest.raises(JournalChainError, match=second):
        verify_scope(stores.journal, SCOPE)
    assert replay(SCOPE, third, stores=stores).matches  # nothing after it changed


def test_a_deleted_entry_is_detected(
    stores: Stores, clock: FixedClock, backend_name: str, tmp_path: Path
) -> None:
    first, second, _ = _recalls(stores, clock, 3)

    rewrite_journal(backend_name, stores, tmp_path, SCOPE, second, None)

    with pytest.raises(JournalChainError, match="missing"):
        verify_scope(stores.journal, SCOPE)
    with pytest.raises(JournalChainError):
        replay(SCOPE, first, stores=stores)


def test_deleting_the_last_entry_is_detected_by_the_head(
    stores: Stores, clock: FixedClock, backend_name: str, tmp_path: Path
) -> None:
    first, _, third = _recalls(stores, clock, 3)

    rewrite_journal(backend_name, stores, tmp_path, SCOPE, third, None)

    with pytest.raises(JournalChainError, match="head"):
        replay(SCOPE, first, stores=stores)


def test_entries_moved_in_the_chain_are_detected(
    stores: Stores, clock: FixedClock, backend_name: str, tmp_path: Path
) -> None:
    first, second, third = _recalls(stores, clock, 3)
    # The forger swaps the places of the first two entries, keeping each one's own link.
    rewrite_journal(backend_name, stores, tmp_path, SCOPE, first, lambda d: {**d, "sequence": 2})
    rewrite_journal(backend_name, stores, tmp_path, SCOPE, second, lambda d: {**d, "sequence": 1})

    with pytest.raises(JournalChainError):
        verify_scope(stores.journal, SCOPE)
    with pytest.raises(JournalChainError):
        replay(SCOPE, second, stores=stores)
    assert replay(SCOPE, third, stores=stores).matches
