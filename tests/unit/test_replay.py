"""replay(): a journalled recall is rebuilt from exactly the versions it pinned, never searched."""

from __future__ import annotations

import pytest

from cairn.changes import Create, NewRecord, RecordPatch, Revise, Vector
from cairn.errors import JournalNotFoundError
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.recall import RecallPolicy, RecallQuery, Recollection, recall, replay
from cairn.recall.render import ERASED_TEXT
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="m1", actor_id="a1")
OTHER = Scope(memory_id="m1", actor_id="a2")
EMBEDDER = HashingEmbedder(dims=128)
POLICY = RecallPolicy(relevance_floor=0.05, keyword_floor=0.0)


class Memory:
    def __init__(self) -> None:
        self.clock = FixedClock()
        self.stores: Stores = InMemoryBackend(self.clock).stores()

    def remember(self, content: str, *, kind: SourceKind = SourceKind.USER) -> RecordVersion:
        values = tuple(float(x) for x in EMBEDDER.embed([content])[0])
        record = NewRecord(
            namespace="/facts/a1/",
            content=content,
            sources=(Source(kind=kind),),
            vector=Vector(embedder=EMBEDDER.identity, values=values),
        )
        (created,) = self.stores.records.apply(SCOPE, [Create(record=record)])
        return created

    def recall(self, text: str, policy: RecallPolicy = POLICY) -> Recollection:
        return recall(
            SCOPE,
            RecallQuery(text=text),
            stores=self.stores,
            embedder=EMBEDDER,
            clock=self.clock,
            policy=policy,
        )


def test_replay_after_a_revision_shows_the_old_version_and_the_same_block() -> None:
    memory = Memory()
    tea = memory.remember("Prefers green tea")
    memory.remember("Works night shifts", kind=SourceKind.MODEL)
    original = memory.recall("green tea night shifts")
    assert original.journal_id is not None
    memory.clock.advance(days=1)
    memory.stores.records.apply(
        SCOPE, [Revise(record_id=tea.record_id, patch=RecordPatch(content="Prefers black tea"))]
    )
    replayed = replay(SCOPE, original.journal_id, stores=memory.stores)
    assert replayed.matches
    assert replayed.block == original.block
    assert "Prefers green tea" in replayed.block
    assert "Prefers black tea" not in replayed.block
    pinned = {v.record_id: v.version for v in replayed.versions}
    assert pinned[tea.record_id] == 1
    assert replayed.erased == replayed.missing == ()


def test_replay_never_searches_again() -> None:
    memory = Memory()
    memory.remember("Prefers green tea")
    original = memory.recall("green tea")
    assert original.journal_id is not None
    memory.remember("Prefers green tea with jasmine, green tea always")  # would now rank first
    replayed = replay(SCOPE, original.journal_id, stores=memory.stores)
    assert replayed.block == original.block
    assert "jasmine" not in replayed.block


def test_replay_uses_the_journalled_entry_size_not_todays_default() -> None:
    memory = Memory()
    memory.remember("Prefers green tea " + "and more tea " * 40)
    small = RecallPolicy(relevance_floor=0.05, keyword_floor=0.0, max_entry_bytes=40)
    original = memory.recall("green tea", policy=small)
    assert original.entries[0].truncated
    assert original.journal_id is not None
    replayed = replay(SCOPE, original.journal_id, stores=memory.stores)
    assert replayed.matches
    assert replayed.block == original.block


def test_replay_after_erase_reports_the_mismatch_instead_of_hiding_it() -> None:
    memory = Memory()
    tea = memory.remember("Prefers green tea")
    memory.remember("Owns a green bicycle")
    original = memory.recall("green tea bicycle")
    assert original.journal_id is not None
    assert len(original.entries) == 2
    memory.stores.records.erase(SCOPE, tea.record_id)
    replayed = replay(SCOPE, original.journal_id, stores=memory.stores)
    assert not replayed.matches
    assert replayed.block_digest != replayed.journal.block_digest
    assert replayed.erased == (tea.record_id,)
    assert "Prefers green tea" not in replayed.block
    assert ERASED_TEXT in replayed.block
    assert "Owns a green bicycle" in replayed.block
    # The tombstone keeps the digest the journal pinned, so the audit still adds up: the
    # replay reports the erasure instead of refusing it as a forgery (ReplayMismatchError).


def test_a_journal_entry_of_another_scope_is_not_found() -> None:
    memory = Memory()
    memory.remember("Prefers green tea")
    original = memory.recall("tea")
    assert original.journal_id is not None
    with pytest.raises(JournalNotFoundError):
        replay(OTHER, original.journal_id, stores=memory.stores)


def test_an_empty_recall_replays_to_the_same_empty_block() -> None:
    memory = Memory()
    original = memory.recall("anything at all")
    assert original.journal_id is not None
    replayed = replay(SCOPE, original.journal_id, stores=memory.stores)
    assert replayed.matches
    assert replayed.block == original.block
