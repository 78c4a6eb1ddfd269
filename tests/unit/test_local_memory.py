"""``open_memory``: one actor's memory on a real SQLite file, in a few lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import CairnError
from cairn.local.memory import open_memory
from cairn.models import SourceKind, Status
from cairn.testing import HashingEmbedder


def test_written_recalled_forgotten_and_replayed_across_opens(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with open_memory(path, actor="tg:1", embedder=HashingEmbedder()) as memory:
        note = memory.remember("green tea in the morning", category="preference")
        found = memory.recall("green tea")
    assert note.namespace == "/preferences/tg:1/"
    assert [e.version.record_id for e in found.entries] == [note.record_id]
    with open_memory(path, actor="tg:1", embedder=HashingEmbedder()) as memory:
        forgotten = memory.forget(note.record_id, reason="switched")
        assert memory.recall("green tea").entries == ()
        replayed = memory.replay(found.journal_id)
        assert [v.status for v in memory.history(note.record_id)] == [
            Status.ACTIVE,
            Status.RETRACTED,
        ]
    assert forgotten.status is Status.RETRACTED
    assert replayed.matches


def test_a_repeat_folds_in_instead_of_writing_a_second_record(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db", actor="a", embedder=HashingEmbedder()) as memory:
        first = memory.remember("I live in Lyon")
        again = memory.remember("I live in Lyon")
        elsewhere = memory.remember("I live in Lyon", category="preference")
        inferred = memory.remember("I live in Lyon", source=SourceKind.MODEL)
    assert again.record_id == first.record_id
    assert (again.version, again.seen_count) == (2, 2)
    assert elsewhere.record_id != first.record_id  # another namespace is another record
    # A model's repeat of a user's statement never joins it: trust would fall.
    assert inferred.record_id != first.record_id
    assert first.trust.value == again.trust.value == "trusted"


def test_other_actors_never_see_it(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with open_memory(path, actor="alice", embedder=HashingEmbedder()) as memory:
        note = memory.remember("alice's secret")
    with open_memory(path, actor="bob", embedder=HashingEmbedder()) as memory:
        assert memory.recall("secret").entries == ()
        with pytest.raises(CairnError):
            memory.history(note.record_id)


def test_a_malformed_actor_is_refused_before_any_file_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="actor_id"):
        open_memory(tmp_path / "m.db", actor="", embedder=HashingEmbedder())
    assert list(tmp_path.iterdir()) == []


def test_erase_takes_what_restates_the_record_and_keeps_the_rest(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db", actor="a", embedder=HashingEmbedder()) as memory:
        fact = memory.remember("My passport is X1234567")
        copy = memory.remember("my passport is  X1234567", category="preference")
        other = memory.remember("I prefer green tea", category="preference")

        erased = memory.erase(fact.record_id)

        assert sorted(erased.record_ids) == sorted([fact.record_id, copy.record_id])
        assert erased.restating == (copy.record_id,)
        assert [v.record_id for v in memory.stores.records.list_records(memory.scope).items] == [
            other.record_id
        ]
